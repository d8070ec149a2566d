"""Benchmark state that must survive a mgr failover, in the mgr's key-value store, bounded in size: run
history per kind, baselines, regressions and their streaks, each kind's last run, scratch data, runs in progress.

Each record is read and written by versioned.VersionedRecords and stands alone: a broken one costs nothing of
the others. A run fits one entry (fit.py); the baselines may take several (docs/decisions/store-entry-size.md).
The state changes only through the methods below; what they return is a copy.

Over 300 lines: one class, the single door through which every record under "bench/" is read, written and
locked; the record checks (runs.py, scratch.py, state.py) and fit.py are beside it already.
"""

import copy
import logging
import threading
import time
from typing import Any, Callable, Dict, Iterable, List, Optional

from ..base import BenchError
from ..judging.baseline import Baselines, Verdict, judge
from ..measurement import Measurement
from . import common, fit
from . import runs as run_records
from . import scratch as scratch_records
from . import state as state_records
from .versioned import VersionedRecords

POOL_CREATIONS = "pool_creations"  # the record of scratch pools being created (a key under versioned.PREFIX)


class ScratchFull(BenchError):
    """The scratch registry is full: a run may not write what it cannot register for cleanup."""


class BenchStore:
    def __init__(
        self,
        get: Callable[[str], Optional[str]],
        put: Callable[[str, Optional[str]], None],
        history_limit: int,
        window: int,
        log: Any = None,
        clock: Callable[[], float] = time.time,
        entry_max: int = common.ENTRY_MAX_CHARS,
        keys: Optional[Callable[[str], Optional[List[str]]]] = None,
    ) -> None:
        self._log = log if log is not None else logging.getLogger(__name__)
        self._lock = threading.RLock()
        self._clock = clock
        self._records = VersionedRecords(get, put, self._log, clock, self._lock, entry_max, keys)
        load = self._records.load
        self.history_limit = min(max(1, history_limit), common.MAX_HISTORY)
        self._baselines = Baselines(max(1, window), load("baselines", state_records.clean_baselines, dict))
        self._regressions: Dict[str, Dict[str, Any]] = load("regressions", state_records.clean_regressions, dict)
        self._streaks: Dict[str, int] = load("streaks", state_records.clean_streaks, dict)  # consecutive regressed
        self._last_run: Dict[str, float] = load("last_run", state_records.clean_last_run, dict)
        self._scratch: Dict[str, Dict[str, Any]] = load("scratch", scratch_records.clean_scratch, dict)
        # Run id -> kind ("" when unknown) of runs whose scratch registration was lost to a broken record:
        # their objects carry the run id as prefix (an rbd image: "perfwatch.<run id>").
        self._recovered: Dict[str, str] = load("recovered_scratch", scratch_records.clean_recovered, dict)
        if self._records.found:
            self._recovered.update(self._records.found)
            common.bound(self._recovered)
            self._save("recovered_scratch", self._recovered)
        # Runs in progress (run id -> record with the results so far); the next mgr's take_interrupted
        self._running: Dict[str, Dict[str, Any]] = load("running", run_records.clean_running, dict)
        # Scratch pools perfwatch began to create (pool name -> {"pool_max", "at"}): a mgr restart between
        # `osd pool create` and tagging the pool leaves one untagged, which this record proves is perfwatch's.
        self._pool_creations: Dict[str, Dict[str, Any]] = load(
            POOL_CREATIONS, scratch_records.clean_pool_creations, dict
        )
        self._history: Dict[str, List[Dict[str, Any]]] = {}
        self._changes = 0  # bumped by every change of what changes() covers

    @property
    def changes(self) -> int:
        """A count that moves whenever the last runs, baselines or regressions may have changed: what
        result_board.py's exposition reads, which it renders again only when this has moved."""
        with self._lock:
            return self._changes

    @property
    def records(self) -> VersionedRecords:
        """Where another part's record is kept too (result_board.py: the last result of each key)."""
        return self._records

    def _save(self, name: str, value: Any) -> int:
        return self._records.save(name, value)

    # ----- history and the last run of each kind ------------------------------------------------------

    def history(self, kind: str) -> List[Dict[str, Any]]:
        """The runs of one kind, oldest first."""
        with self._lock:
            return list(self._runs_of(kind))

    def _runs_of(self, kind: str) -> List[Dict[str, Any]]:
        with self._lock:
            runs = self._history.get(kind)
            if runs is None:
                runs = self._records.load("history/" + kind, lambda data: run_records.clean_history(data, kind), list)
                self._history[kind] = runs
            return runs

    def add_run(self, record: Dict[str, Any]) -> None:
        cleaned = run_records.clean_run(record)
        if cleaned.value is None or cleaned.dropped:
            self._log.error("perfwatch: run record not as expected: %s", "; ".join(cleaned.dropped))
        if cleaned.value is None:
            return
        record = cleaned.value
        kind = record["kind"]
        runs = self._runs_of(kind)
        with self._lock:
            runs.append(record)
            del runs[: -self.history_limit]
            runs[:] = fit.fit_runs(runs, self._records.entry_max)
            self._last_run[kind] = record.get("ended_at") or record.get("started_at") or 0.0
            self._changes += 1
        self._save("history/" + kind, runs)
        self._save("last_run", self._last_run)

    def last_run(self, kind: str) -> Optional[float]:
        with self._lock:
            return self._last_run.get(kind)

    def last_runs(self) -> Dict[str, float]:
        with self._lock:
            return dict(self._last_run)

    def mark_attempt(self, kind: str, when: float) -> None:
        """A scheduled run of `kind` was tried and did not start: count it as run, so the schedule tries
        again one interval later. Kept in memory; saved with the next run's record."""
        with self._lock:
            self._last_run[kind] = when
            self._changes += 1

    # ----- baselines, streaks, regressions ------------------------------------------------------------

    def baselines_of(self, keys: Iterable[str], min_results: int = 1) -> Dict[str, Optional[float]]:
        with self._lock:  # each key's baseline (None: too few results), all at once: 60,000 at 10,000 OSDs
            return {key: self._baselines.baseline(key, min_results) for key in keys}

    def baselines(self) -> Dict[str, List[float]]:
        """Result key -> the recent values its baseline is the median of."""
        with self._lock:
            return copy.deepcopy(self._baselines.history)

    def judge(
        self, results: List[Measurement], device_class: Dict[int, str], fraction: float, min_results: int
    ) -> List[Verdict]:
        """baseline.judge against the stored baselines, which then take in the results; saved."""
        with self._lock:
            verdicts = judge(results, self._baselines, device_class, fraction, min_results)
        self.save_baselines()
        return verdicts

    def streaks(self) -> Dict[str, int]:
        with self._lock:
            return dict(self._streaks)

    def regressions(self) -> Dict[str, Dict[str, Any]]:
        with self._lock:
            return copy.deepcopy(self._regressions)

    def record_verdicts(
        self, streaks: Dict[str, Optional[int]], regressions: Dict[str, Optional[Dict[str, Any]]]
    ) -> None:
        """Set the streaks and regressions of these result keys; None forgets the key's. Saved."""
        with self._lock:
            for key, streak in streaks.items():
                if streak is None:
                    self._streaks.pop(key, None)
                else:
                    self._streaks[key] = streak
            for key, regression in regressions.items():
                if regression is None:
                    self._regressions.pop(key, None)
                else:
                    self._regressions[key] = copy.deepcopy(regression)
        self.save_regressions()

    def forget(self, keys: Iterable[str]) -> None:
        """Forget the baselines, streaks and regressions of these result keys. Saved."""
        keys = list(keys)
        with self._lock:
            self._baselines.forget(keys)
            for key in keys:
                self._regressions.pop(key, None)
                self._streaks.pop(key, None)
        self.save_baselines(now=True)
        self.save_regressions(now=True)

    def save_baselines(self, now: bool = False) -> None:
        """Once in parts, at most every versioned.LARGE_SAVE_INTERVAL unless `now` (an operator's reset)."""
        self._records.bound("baselines", self._baselines.history, common.MAX_RESULT_KEYS)
        with self._lock:  # after the change (judge, forget) and what bound() dropped: a page made before is old
            self._changes += 1
        fitted = fit.fit_values(self._baselines.history, self._records.record_max)
        self._records.save("baselines", fitted, throttled=not now)

    def save_regressions(self, now: bool = False) -> None:
        for name, mapping in (("regressions", self._regressions), ("streaks", self._streaks)):
            self._records.bound(name, mapping, common.MAX_RESULT_KEYS)
            self._records.save(name, fit.fit_keys(mapping, self._records.record_max), throttled=not now)
        with self._lock:  # after the change (record_verdicts, forget) and what bound() dropped
            self._changes += 1

    # ----- scratch and runs in progress -----------------------------------------------------------------

    def scratch(self) -> Dict[str, Dict[str, Any]]:
        """Run id -> {"kind", "entries"}: the scratch each unfinished run registered."""
        with self._lock:
            return copy.deepcopy(self._scratch)

    def scratch_of(self, run_id: str) -> Optional[Dict[str, Any]]:
        """{"kind", "entries"}: the scratch one run registered, or None."""
        with self._lock:
            return copy.deepcopy(self._scratch.get(run_id))

    def scratch_run_ids(self) -> List[str]:
        """The run ids whose scratch awaits cleanup, in the order they registered it."""
        with self._lock:
            return list(self._scratch)

    def recovered_scratch(self) -> Dict[str, str]:
        """Run id -> kind ("" when unknown) of runs whose scratch registration was lost to a broken record."""
        with self._lock:
            return dict(self._recovered)

    def add_scratch(self, run_id: str, kind: str, entry: Dict[str, Any]) -> None:
        """Register scratch before it is written. Raises ScratchFull (a BenchError: the run fails, writing
        nothing) when MAX_KEYS runs, or MAX_SCRATCH_ENTRIES entries of this run, already await cleanup."""
        with self._lock:
            item = self._scratch.get(run_id)
            if item is None and len(self._scratch) >= common.MAX_KEYS:
                raise ScratchFull(
                    "{} runs' scratch awaits cleanup already: see `ceph perfwatch bench status`".format(
                        len(self._scratch)
                    )
                )
            item = item if item is not None else {"kind": kind, "entries": []}
            if entry not in item["entries"]:
                if len(item["entries"]) >= common.MAX_SCRATCH_ENTRIES:
                    raise ScratchFull("{} has {} scratch entries already".format(run_id, len(item["entries"])))
                item["entries"].append(entry)
            self._scratch[run_id] = item
        self._save("scratch", self._scratch)

    def drop_scratch(self, run_id: str) -> None:
        with self._lock:
            dropped = self._scratch.pop(run_id, None) is not None
        if dropped:
            self._save("scratch", self._scratch)

    def adopt_recovered(self, run_id: str, kind: str, entries: List[Dict[str, Any]]) -> None:
        """A recovered run id's scratch, rebuilt by its kind (pool, namespace, prefix = run id), moves
        into the scratch registry, where the orphan cleanup finds it."""
        with self._lock:
            item = self._scratch.setdefault(run_id, {"kind": kind, "entries": []})
            for entry in entries:
                if entry not in item["entries"]:
                    item["entries"].append(entry)
            self._recovered.pop(run_id, None)
        self._save("scratch", self._scratch)
        self._save("recovered_scratch", self._recovered)

    def forget_recovered(self, run_id: str) -> None:
        with self._lock:
            dropped = self._recovered.pop(run_id, None) is not None
        if dropped:
            self._save("recovered_scratch", self._recovered)

    def take_interrupted(self) -> List[Dict[str, Any]]:
        """The runs a previous mgr left in progress, removed from the running record: call once, at start."""
        with self._lock:
            found = sorted(self._running.values(), key=lambda r: r.get("started_at", 0))
            self._running = {}
        if found:
            self._save("running", self._running)
        return found

    def save_running(self, record: Dict[str, Any]) -> None:
        """Record (or update) a run in progress with what it has measured so far."""
        with self._lock:
            self._running[record["run_id"]] = record
            self._records.bound("runs in progress", self._running)
            self._running = fit.fit_running(self._running, self._records.entry_max)
        self._save("running", self._running)

    def drop_running(self, run_id: str) -> None:
        with self._lock:
            dropped = self._running.pop(run_id, None) is not None
        if dropped:
            self._save("running", self._running)

    # ----- scratch pools being created ----------------------------------------------------------------

    def pool_creations(self) -> Dict[str, Dict[str, Any]]:
        """Pool name -> {"pool_max", "at"}: the scratch pools perfwatch began to create and has not yet
        seen tagged as its own."""
        with self._lock:
            return copy.deepcopy(self._pool_creations)

    def begin_pool_creation(self, pool: str, pool_max: int) -> None:
        """Record, before `osd pool create`, that perfwatch creates `pool` now that the OSD map's highest
        pool id is `pool_max`. Raises when the record cannot be stored: then the pool is not created."""
        with self._lock:
            self._pool_creations[pool] = {"pool_max": int(pool_max), "at": round(self._clock(), 3)}
            self._records.bound("pool creations", self._pool_creations)
        self._records.save(POOL_CREATIONS, self._pool_creations, strict=True)

    def end_pool_creation(self, pool: str) -> None:
        """The pool carries perfwatch's tag (or is gone): nothing is left to finish."""
        with self._lock:
            dropped = self._pool_creations.pop(pool, None) is not None
        if dropped:
            self._save(POOL_CREATIONS, self._pool_creations)
