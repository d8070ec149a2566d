"""Rolling per-OSD baselines and the regression verdict. Pure.

A baseline is the median of the last `window` results of one (kind, metric, OSD). A new result is a
regression when its performance is below `fraction` of its own baseline, or of the median baseline of
its peers (other OSDs of the same device class, same kind and metric). Performance is the value for
IOPS and throughput, and its inverse for latencies, so "below 0.5" always means "twice as bad".
"""

import statistics
from typing import Dict, Iterable, List, NamedTuple, Optional, Tuple

from ..measurement import HIGHER_IS_BETTER, Measurement, split_key


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
    peers = _Peers(results, baselines, device_class, min_results)
    for m in results:
        higher = HIGHER_IS_BETTER[m.unit]
        own = baselines.baseline(m.key, min_results)
        ratio = performance_ratio(m.value, own, higher) if own is not None else None
        peer = peers.baseline(m, device_class)
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


class _Peers:
    """The baselines of every OSD per kind, metric and device class, sorted once per judged round: each
    result's peer baseline is then the median of its group without its own OSD, found by index. (Scanning
    every baseline for each result took 47 s a round at 10,000 OSDs: 20,000 results times 60,000 keys.)"""

    def __init__(
        self, results: List[Measurement], baselines: Baselines, device_class: Dict[int, str], min_results: int
    ) -> None:
        wanted = {(m.kind, m.metric) for m in results if m.osd is not None}
        groups: Dict[Tuple[str, str, Optional[str]], List[Tuple[float, int]]] = {}
        for key in baselines.history:
            kind, metric, osd = split_key(key)
            if osd is None or (kind, metric) not in wanted:
                continue
            value = baselines.baseline(key, min_results)
            if value is not None:
                groups.setdefault((kind, metric, device_class.get(osd)), []).append((value, osd))
        self._values: Dict[Tuple[str, str, Optional[str]], List[float]] = {}
        self._index: Dict[Tuple[str, str, Optional[str]], Dict[int, int]] = {}
        for group, members in groups.items():
            members.sort()
            self._values[group] = [value for value, _ in members]
            self._index[group] = {osd: i for i, (_, osd) in enumerate(members)}

    def baseline(self, m: Measurement, device_class: Dict[int, str]) -> Optional[float]:
        """The median baseline of the other OSDs of m's device class (at least two), or None."""
        if m.osd is None:
            return None
        group = (m.kind, m.metric, device_class.get(m.osd))
        values = self._values.get(group, [])
        skip = self._index.get(group, {}).get(m.osd)
        n = len(values) - (skip is not None)
        if n < 2:
            return None

        def at(j: int) -> float:  # the j-th of the values without the skipped one
            return values[j + 1] if skip is not None and j >= skip else values[j]

        half = n // 2
        return at(half) if n % 2 else (at(half - 1) + at(half)) / 2
