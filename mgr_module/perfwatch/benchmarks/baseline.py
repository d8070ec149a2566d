"""Rolling per-OSD baselines and the regression verdict. Pure.

A baseline is the median of the last `window` results of one (kind, metric, OSD). A new result is a
regression when its performance is below `fraction` of its own baseline, or of the median baseline of
its peers (other OSDs of the same device class, same kind and metric). Performance is the value for
IOPS and throughput, and its inverse for latencies, so "below 0.5" always means "twice as bad".
"""

import statistics
from typing import Dict, Iterable, List, NamedTuple, Optional

from .results import HIGHER_IS_BETTER, Measurement


class Verdict(NamedTuple):
    key: str
    value: float
    unit: str
    baseline: Optional[float]  # own baseline before this result
    ratio: Optional[float]  # performance relative to own baseline
    peer_baseline: Optional[float]
    peer_ratio: Optional[float]
    regressed: bool
    reason: str


def performance_ratio(value: float, reference: float, higher_is_better: bool) -> Optional[float]:
    if reference <= 0 or value < 0:
        return None
    if higher_is_better:
        return value / reference
    return reference / value if value > 0 else None


class Baselines:
    def __init__(self, window: int, history: Optional[Dict[str, List[float]]] = None) -> None:
        if window < 1:
            raise ValueError("baseline window must be at least 1")
        self.window = window
        self.history: Dict[str, List[float]] = {k: list(v)[-window:] for k, v in (history or {}).items()}

    def baseline(self, key: str, min_results: int = 1) -> Optional[float]:
        values = self.history.get(key, [])
        return statistics.median(values) if len(values) >= max(1, min_results) else None

    def add(self, key: str, value: float) -> None:
        values = self.history.setdefault(key, [])
        values.append(value)
        del values[: -self.window]

    def forget(self, keys: Iterable[str]) -> None:
        for key in keys:
            self.history.pop(key, None)


def judge(
    results: List[Measurement],
    baselines: Baselines,
    device_class: Dict[int, str],
    fraction: float,
    min_results: int,
) -> List[Verdict]:
    """Verdicts for new results against baselines as they were before them; then adds the results."""
    verdicts = []
    for m in results:
        higher = HIGHER_IS_BETTER[m.unit]
        own = baselines.baseline(m.key, min_results)
        ratio = performance_ratio(m.value, own, higher) if own is not None else None
        peer = _peer_baseline(m, baselines, device_class, min_results)
        peer_ratio = performance_ratio(m.value, peer, higher) if peer is not None else None
        reasons = []
        if ratio is not None and ratio < fraction:
            reasons.append("{:.2f}x its own baseline".format(ratio))
        if peer_ratio is not None and peer_ratio < fraction:
            reasons.append("{:.2f}x its peers' baseline".format(peer_ratio))
        verdicts.append(
            Verdict(m.key, m.value, m.unit, own, ratio, peer, peer_ratio, bool(reasons), "; ".join(reasons))
        )
    # A regressed result stays out of its baseline, so a lasting regression keeps being one until
    # performance recovers or an operator resets the baseline (`ceph perfwatch bench reset-baseline`).
    for m, verdict in zip(results, verdicts):
        if not verdict.regressed:
            baselines.add(m.key, m.value)
    return verdicts


def _peer_baseline(
    m: Measurement, baselines: Baselines, device_class: Dict[int, str], min_results: int
) -> Optional[float]:
    if m.osd is None:
        return None
    cls = device_class.get(m.osd)
    prefix = "{}/{}/osd.".format(m.kind, m.metric)
    peers = []
    for key in baselines.history:
        if not key.startswith(prefix):
            continue
        osd = int(key[len(prefix) :])
        if osd == m.osd or device_class.get(osd) != cls:
            continue
        value = baselines.baseline(key, min_results)
        if value is not None:
            peers.append(value)
    return statistics.median(peers) if len(peers) >= 2 else None
