"""Benchmark results as metric samples: last results and baselines per unit, the ratio between them,
regressions, run counts, and latency histograms for the light probes. Pure."""

import bisect
import threading
from typing import Dict, Iterable, List, Optional, Tuple

from ..counters import Labels, Sample, declare_family
from .baseline import performance_ratio
from .results import HIGHER_IS_BETTER, Measurement, split_key

# Sub-millisecond flash up to seconds on a busy HDD.
BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

RESULT = {
    "iops": declare_family("bench_iops", "gauge", "Last benchmark result in operations per second"),
    "bytes_per_second": declare_family(
        "bench_throughput_bytes_per_second", "gauge", "Last benchmark result in bytes per second"
    ),
    "seconds": declare_family("bench_latency_seconds", "gauge", "Last benchmark latency result"),
}
BASELINE = {
    "iops": declare_family("bench_baseline_iops", "gauge", "Rolling median of recent results (operations/s)"),
    "bytes_per_second": declare_family(
        "bench_baseline_throughput_bytes_per_second", "gauge", "Rolling median of recent results (bytes/s)"
    ),
    "seconds": declare_family("bench_baseline_latency_seconds", "gauge", "Rolling median of recent latencies"),
}
RATIO = declare_family(
    "bench_baseline_ratio", "gauge", "Last result's performance relative to its baseline (below 1 is worse)"
)
REGRESSION = declare_family("bench_regression", "gauge", "1 while the last result is a regression")
LAST_RUN = declare_family("bench_last_run_timestamp_seconds", "gauge", "When a run of the kind last ended")
RUNS = declare_family("bench_runs_total", "counter", "Benchmark runs since the module started, by outcome")
PROBE = declare_family("bench_probe_latency_seconds", "histogram", "Latency of light probe operations")


def _labels(kind: str, metric: str, osd: Optional[int]) -> Labels:
    base: Labels = (("kind", kind), ("metric", metric))
    return base if osd is None else (("ceph_daemon", "osd.{}".format(osd)), *base)


class ProbeHistograms:
    """Cumulative histograms of probe latencies, per kind, metric and OSD (in memory; they reset with the mgr)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._data: Dict[Tuple[str, str, Optional[int]], List[float]] = {}

    def observe(self, measurements: Iterable[Measurement]) -> None:
        with self._lock:
            for m in measurements:
                if m.unit != "seconds":
                    continue
                counts = self._data.setdefault((m.kind, m.metric, m.osd), [0.0] * (len(BUCKETS) + 2))
                counts[bisect.bisect_left(BUCKETS, m.value)] += 1  # the first bucket whose bound >= value
                counts[-1] += m.value  # the sum rides in the last slot

    def samples(self) -> List[Sample]:
        out = []
        with self._lock:
            items = sorted(self._data.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] or -1))
            for (kind, metric, osd), counts in items:
                labels = _labels(kind, metric, osd)
                running = 0.0
                for bound, n in zip(BUCKETS, counts):
                    running += n
                    out.append(Sample(PROBE, "_bucket", (*labels, ("le", repr(bound))), running))
                running += counts[len(BUCKETS)]
                out.append(Sample(PROBE, "_bucket", (*labels, ("le", "+Inf")), running))
                out.append(Sample(PROBE, "_sum", labels, counts[-1]))
                out.append(Sample(PROBE, "_count", labels, running))
        return out


def result_samples(
    last: Dict[str, Tuple[float, str]],
    baselines: Dict[str, Optional[float]],
    regressions: Iterable[str],
    last_run: Dict[str, float],
    outcomes: Dict[str, int],
) -> List[Sample]:
    """last: key -> (value, unit) of the latest result; baselines: key -> current baseline."""
    out = []
    flagged = set(regressions)
    for key in sorted(last):
        value, unit = last[key]
        kind, metric, osd = split_key(key)
        labels = _labels(kind, metric, osd)
        out.append(Sample(RESULT[unit], "", labels, value))
        base = baselines.get(key)
        if base is not None:
            out.append(Sample(BASELINE[unit], "", labels, base))
            ratio = performance_ratio(value, base, HIGHER_IS_BETTER[unit])
            if ratio is not None:
                out.append(Sample(RATIO, "", labels, round(ratio, 4)))
        out.append(Sample(REGRESSION, "", labels, 1.0 if key in flagged else 0.0))
    for kind in sorted(last_run):
        out.append(Sample(LAST_RUN, "", (("kind", kind),), round(last_run[kind], 3)))
    for key in sorted(outcomes):
        kind, state = key.split("/", 1)
        out.append(Sample(RUNS, "", (("kind", kind), ("outcome", state)), float(outcomes[key])))
    return out
