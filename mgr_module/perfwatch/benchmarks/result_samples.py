"""Benchmark results as metric samples: last results and baselines per unit, regressions, run counts, and
latency histograms for the light probes. Pure. The ratio of a result to its baseline is the rules' to
derive (alerts/recording_store.py): exported, it was one more series per OSD and metric."""

import bisect
import threading
from typing import Callable, Dict, Iterable, List, Optional, Tuple, Union

from ..collection import module_families as mf
from ..common.exposition import Column, Value, as_samples, exposable
from ..common.metrics_model import Labels, Sample
from .measurement import Measurement, split_key

# Sub-millisecond flash up to seconds on a busy HDD.
BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


def _labels(kind: str, metric: str, osd: Optional[int]) -> Labels:
    base: Labels = (("kind", kind), ("metric", metric))
    return base if osd is None else (("ceph_daemon", "osd.{}".format(osd)), *base)


class ProbeHistograms:
    """Cumulative histograms of probe latencies, per kind, metric and device class of the OSD measured (in
    memory; they reset with the mgr). Not per OSD: at 19 series per histogram, per-OSD histograms were two
    thirds of the module's output at 10,000 OSDs, and every rule and panel sums them over OSDs. Each OSD's
    own figures are its last result and baseline (result_samples)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._data: Dict[Tuple[str, str, str], List[float]] = {}

    def observe(self, measurements: Iterable[Measurement], device_class: Dict[int, str]) -> None:
        """device_class: OSD id -> its CRUSH device class ("" when it has none, or the OSD is unknown)."""
        with self._lock:
            for m in measurements:
                if m.unit != "seconds":
                    continue
                cls = device_class.get(m.osd, "") if m.osd is not None else ""
                counts = self._data.setdefault((m.kind, m.metric, cls), [0.0] * (len(BUCKETS) + 2))
                counts[bisect.bisect_left(BUCKETS, m.value)] += 1  # the first bucket whose bound >= value
                counts[-1] += m.value  # the sum rides in the last slot

    def samples(self) -> List[Sample]:
        out = []
        with self._lock:
            for (kind, metric, cls), counts in sorted(self._data.items()):
                labels: Labels = (("kind", kind), ("metric", metric), ("device_class", cls))
                running = 0.0
                for bound, n in zip(BUCKETS, counts):
                    running += n
                    out.append(Sample(mf.BENCH_PROBE, "_bucket", (*labels, ("le", repr(bound))), running))
                running += counts[len(BUCKETS)]
                out.append(Sample(mf.BENCH_PROBE, "_bucket", (*labels, ("le", "+Inf")), running))
                out.append(Sample(mf.BENCH_PROBE, "_sum", labels, counts[-1]))
                out.append(Sample(mf.BENCH_PROBE, "_count", labels, running))
        return out


def result_labels(key: str) -> Labels:
    """A result key's labels: kind, metric and (for a per-OSD result) ceph_daemon."""
    return _labels(*split_key(key))


Where = Tuple[str, str, Optional[str]]  # a result key's kind, metric and daemon ("osd.N"; None: cluster-wide)


def result_where(key: str) -> Where:
    kind, metric, osd = split_key(key)
    return kind, metric, None if osd is None else "osd.{}".format(osd)


def result_exposition(
    last: Dict[str, Tuple[float, str]],
    baselines: Dict[str, Optional[float]],
    regressions: Iterable[str],
    last_run: Dict[str, float],
    outcomes: Dict[str, int],
    where_of: Callable[[str], Optional[Where]] = result_where,
) -> List[Union[Column, Sample]]:
    """last: key -> (value, unit) of the latest result; baselines: key -> current baseline; where_of: a
    key's kind, metric and daemon (result_where, or the same from a cache). The per-OSD results and
    baselines come as columns (one per family, kind and metric: 120,000 series at 10,000 OSDs), the rest
    as samples."""
    out: List[Union[Column, Sample]] = []
    per_osd: Dict[Tuple[str, str, str], List[Tuple[str, Value]]] = {}
    flagged = set(regressions)
    for key in sorted(last):
        value, unit = last[key]
        kind, metric, daemon = where_of(key) or result_where(key)
        base = baselines.get(key)
        families = ((mf.BENCH_RESULT[unit], value), (mf.BENCH_BASELINE[unit], base))
        for family, figure in families:
            if figure is None:
                continue
            if daemon is None:
                out.append(Sample(family, "", _labels(kind, metric, None), figure))
            else:
                per_osd.setdefault((family, kind, metric), []).append((daemon, exposable(figure) or 0))
        if key in flagged:  # only while it is one: a 0 per OSD and metric was 60,000 series at 10,000 OSDs
            out.append(Sample(mf.BENCH_IS_REGRESSION, "", result_labels(key), 1.0))
    for (family, kind, metric), series in per_osd.items():
        out.append(Column(family, "", "ceph_daemon", (("kind", kind), ("metric", metric)), series))
    for key in sorted(flagged - set(last)):  # a regression whose result the board lost with a failover
        out.append(Sample(mf.BENCH_IS_REGRESSION, "", result_labels(key), 1.0))
    for kind in sorted(last_run):
        out.append(Sample(mf.BENCH_LAST_RUN, "", (("kind", kind),), round(last_run[kind], 3)))
    for key in sorted(outcomes):
        kind, state = key.split("/", 1)
        out.append(Sample(mf.BENCH_RUNS, "", (("kind", kind), ("outcome", state)), float(outcomes[key])))
    return out


def result_samples(
    last: Dict[str, Tuple[float, str]],
    baselines: Dict[str, Optional[float]],
    regressions: Iterable[str],
    last_run: Dict[str, float],
    outcomes: Dict[str, int],
) -> List[Sample]:
    """result_exposition() as samples only."""
    return as_samples(result_exposition(last, baselines, regressions, last_run, outcomes))
