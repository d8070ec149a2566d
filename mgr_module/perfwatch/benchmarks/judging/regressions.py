"""Judging a finished run: its results against the baselines, the streaks of regressed results, the
regressions raised from them; and forgetting baselines on request."""

import threading
from typing import Any, Dict, Iterable, List, Optional, Tuple

from ..records.store import BenchStore
from ..run import Run
from . import attribution
from .baseline import Verdict

StreakChanges = Dict[str, Optional[int]]  # key -> its new streak; None: forget it
RegressionChanges = Dict[str, Optional[Dict[str, Any]]]  # key -> the regression raised; None: forget it


def next_streaks(
    verdicts: List[Verdict], streaks: Dict[str, int], needed: int, run_id: str, at: Optional[float]
) -> Tuple[StreakChanges, RegressionChanges]:
    """What the verdicts change, from the streaks before them. Pure. A regressed result lengthens its
    key's streak, and a streak of `needed` raises (or renews) its regression; a good result forgets both;
    a result explained as another OSD's (attribution.is_explained) clears its regression and holds its streak."""
    current = dict(streaks)
    streak_changes: StreakChanges = {}
    regression_changes: RegressionChanges = {}
    for verdict in verdicts:
        key = verdict.key
        if attribution.is_explained(verdict):
            # another OSD's regression (attribution.py): not this one's, yet no proof it is well either
            regression_changes[key] = None
            continue
        if verdict.regressed:
            streak = current.get(key, 0) + 1
            current[key] = streak
            streak_changes[key] = streak
            if streak >= needed:
                regression_changes[key] = dict(verdict._asdict(), run_id=run_id, at=at, consecutive=streak)
        else:
            current.pop(key, None)
            streak_changes[key] = None
            regression_changes[key] = None
    return streak_changes, regression_changes


def matching_keys(keys: Iterable[str], kind: Optional[str], osd: Optional[int]) -> List[str]:
    """The result keys ("kind/metric/osd.N") of a kind and/or an OSD (None: any), sorted."""
    return sorted(
        k for k in keys
        if (kind is None or k.split("/")[0] == kind)
        and (osd is None or k.split("/")[2] == "osd.{}".format(osd))
    )  # fmt: skip


class Judging:
    def __init__(self, store: BenchStore, adapter: Any) -> None:
        self._store = store
        self._adapter = adapter
        self._lock = threading.Lock()  # baselines, streaks and regressions change one run (or reset) at a time

    def judge_run(self, run: Run, opts: Dict[str, Any]) -> None:
        """A heavy run's regression is raised at once; a light probe's after probe_regression_runs in a row."""
        classes = {o.id: o.device_class for o in self._adapter.osd_infos()}
        needed = 1 if run.heavy else int(opts["probe_regression_runs"])
        with self._lock:
            verdicts = self._store.judge(
                run.measurements, classes, float(opts["regression_fraction"]), int(opts["baseline_min_results"])
            )
            if run.acting:  # a slow replica's writes are its regression, not its peers' (attribution.py)
                verdicts = attribution.attribute(verdicts, run.kind, run.acting, run.commit_latency, classes)
            streaks, regressions = next_streaks(verdicts, self._store.streaks(), needed, run.run_id, run.ended_at)
            self._store.record_verdicts(streaks, regressions)

    def reset_baselines(self, kind: Optional[str], osd: Optional[int]) -> List[str]:
        """Forget baselines (and streaks and regressions) of matching keys: after a deliberate change of hardware."""
        with self._lock:
            store = self._store
            keys = set(store.baselines()) | set(store.regressions()) | set(store.streaks())
            chosen = matching_keys(keys, kind, osd)
            store.forget(chosen)
        return chosen
