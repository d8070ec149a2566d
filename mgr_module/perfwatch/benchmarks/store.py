"""Benchmark state that must survive a mgr failover, in the mgr's key-value store, bounded in size:
run history per kind, baselines, active regressions and their streaks, the last run of each kind, and
the scratch data of unfinished runs.

Every record is written as {"version": records.VERSION, "data": ...}. Reading one never raises and never
stops serve(): an older record is migrated; a newer, unreadable or wrongly shaped one is copied to
"bench/aside/<key>/<time>" (at most ASIDE_MAX of them, none larger than ASIDE_MAX_CHARS; never read
again) and replaced by what could be kept of it, with one log line. Each record stands alone: a broken
history of one kind costs nothing of the others, a bad run inside a history only that run. Run ids named
by a broken scratch record are kept in `recovered_scratch`, so their scratch can still be found by prefix.
"""

import json
import logging
import threading
import time
from typing import Any, Callable, Dict, List, Optional

from . import records
from .base import BenchError
from .baseline import Baselines

PREFIX = "bench/"
ASIDE_PREFIX = PREFIX + "aside/"
ASIDE_INDEX = "aside_index"
ASIDE_MAX = 20  # records kept aside; the oldest is deleted when one more comes
ASIDE_MAX_CHARS = 65536  # larger ones are dropped, not copied (the mon's config-key entry limit is 64 KiB)
PROBLEMS_KEPT = 20


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
    ) -> None:
        self._get = get
        self._put = put
        self._log = log if log is not None else logging.getLogger(__name__)
        self._clock = clock
        self._lock = threading.RLock()
        self.history_limit = min(max(1, history_limit), records.MAX_HISTORY)
        self.problems: List[str] = []  # the last few load problems, as logged
        self._aside: Optional[List[str]] = None  # keys set aside, loaded when first needed
        self._found: Dict[str, str] = {}  # run ids named by a broken scratch record, filled by _load
        self.baselines = Baselines(max(1, window), self._load("baselines", records.clean_baselines, dict))
        self.regressions: Dict[str, Dict[str, Any]] = self._load("regressions", records.clean_regressions, dict)
        self.streaks: Dict[str, int] = self._load("streaks", records.clean_streaks, dict)  # consecutive regressed
        self.last_run: Dict[str, float] = self._load("last_run", records.clean_last_run, dict)
        self.scratch: Dict[str, Dict[str, Any]] = self._load("scratch", records.clean_scratch, dict)
        # Run id -> kind ("" when unknown) of runs whose scratch registration was lost to a broken record:
        # their objects carry the run id as prefix (an rbd image: "perfwatch.<run id>").
        self.recovered_scratch: Dict[str, str] = self._load("recovered_scratch", records.clean_recovered, dict)
        if self._found:
            self.recovered_scratch.update(self._found)
            records.bound(self.recovered_scratch)
            self._save("recovered_scratch", self.recovered_scratch)
        # Runs in progress (run id -> record with the results so far): what a mgr that dies leaves here
        # is recorded as interrupted by the next one (take_interrupted).
        self._running: Dict[str, Dict[str, Any]] = self._load("running", records.clean_running, dict)
        self._history: Dict[str, List[Dict[str, Any]]] = {}

    # ----- reading ------------------------------------------------------------------------------

    def _load(self, name: str, clean: Callable[[Any], records.Cleaned], default: Callable[[], Any]) -> Any:
        """The record `name`, migrated and checked; `default()` when absent or unusable. Never raises."""
        key = PREFIX + name
        try:
            raw = self._get(key)
        except Exception as exc:
            self._problem("cannot read {} ({}: {}); starting it empty".format(key, type(exc).__name__, exc))
            return default()
        if raw is None or raw == "":
            return default()
        try:
            return self._decode(name, raw, clean, default)
        except Exception as exc:  # a bug in a check must not stop serve() either
            self._problem("{} could not be read ({}: {}); starting it empty".format(key, type(exc).__name__, exc))
            return default()

    def _decode(self, name: str, raw: Any, clean: Callable[[Any], records.Cleaned], default: Callable[[], Any]) -> Any:
        key = PREFIX + name
        text = raw if isinstance(raw, str) else repr(raw)
        try:
            doc = json.loads(text)
        except ValueError as exc:
            return self._unusable(name, text, "is not JSON ({})".format(exc), default)
        version, data = 1, doc
        if isinstance(doc, dict) and "version" in doc:
            version = doc["version"]
            if not records.is_int(version) or version < 1 or "data" not in doc:
                return self._unusable(name, text, "has a broken envelope (version {!r})".format(version), default)
            data = doc["data"]
        if version > records.VERSION:
            why = "was written by a newer perfwatch (version {}; this one reads up to {})".format(
                version, records.VERSION
            )
            return self._unusable(name, text, why, default)
        cleaned = clean(data)
        self._found.update(cleaned.recovered)
        if cleaned.value is None:
            return self._unusable(name, text, "is not what it should be: " + "; ".join(cleaned.dropped), default)
        if cleaned.dropped:
            where = self._set_aside(name, text)
            self._problem(
                "{} (version {}): dropped {}{}, kept the rest; the original: {}".format(
                    key, version, len(cleaned.dropped), _sample(cleaned.dropped), where
                )
            )
        elif version < records.VERSION:
            self._log.info("perfwatch: %s migrated from version %d to %d", key, version, records.VERSION)
        if cleaned.dropped or version < records.VERSION:
            self._save(name, cleaned.value)  # so the next start reads it as it is now
        return cleaned.value

    def _unusable(self, name: str, text: str, why: str, default: Callable[[], Any]) -> Any:
        """Set the whole record aside, say so once, and start it from default()."""
        found = records.run_ids_in(text) if name in ("scratch", "recovered_scratch") else {}
        self._found.update(found)
        where = self._set_aside(name, text)
        note = "; run ids it names kept for cleanup by prefix{}".format(_sample(sorted(found))) if found else ""
        self._problem("{}{} {}; {}{}; starting it empty".format(PREFIX, name, why, where, note))
        value = default()
        self._save(name, value)
        return value

    def _problem(self, line: str) -> None:
        self._log.warning("perfwatch: %s", line)
        self.problems.append(line)
        del self.problems[:-PROBLEMS_KEPT]

    def _set_aside(self, name: str, text: str) -> str:
        """Copy a record to bench/aside/<name>/<time>; returns what happened, for the log line."""
        if len(text) > ASIDE_MAX_CHARS:
            return "dropped it ({} characters: too large to set aside)".format(len(text))
        try:
            with self._lock:
                index = self._aside_index()
                stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(self._clock()))
                key = "{}{}/{}".format(ASIDE_PREFIX, name, stamp)
                n = 1
                while key in index:
                    n += 1
                    key = "{}{}/{}-{}".format(ASIDE_PREFIX, name, stamp, n)
                self._put(key, text)
                index.append(key)
                for old in index[:-ASIDE_MAX]:
                    self._put(old, None)
                del index[:-ASIDE_MAX]
            self._save(ASIDE_INDEX, index)
            return "set aside in " + key
        except Exception as exc:
            return "could not set it aside ({}: {})".format(type(exc).__name__, exc)

    def _aside_index(self) -> List[str]:
        if self._aside is None:
            raw = self._get(PREFIX + ASIDE_INDEX)  # may raise: then read again next time
            self._aside = []
            if raw:
                try:
                    doc = json.loads(raw)
                except ValueError:
                    doc = None
                ok = isinstance(doc, dict) and doc.get("version") == records.VERSION
                keys = records.clean_key_list(doc.get("data") if ok else None).value
                if keys is None:  # the records it named stay where they are, uncounted
                    self._log.warning("perfwatch: %s%s is unreadable; starting it empty", PREFIX, ASIDE_INDEX)
                self._aside = keys or []
        return self._aside

    # ----- writing ------------------------------------------------------------------------------

    def _save(self, name: str, value: Any) -> None:
        """Write one record in its envelope. A failure is a log line: the next save tries again."""
        try:
            with self._lock:  # run threads change these while others save them
                text = json.dumps({"version": records.VERSION, "data": value}, sort_keys=True)
            self._put(PREFIX + name, text)
        except Exception as exc:
            self._log.error("perfwatch: cannot save %s%s (%s: %s)", PREFIX, name, type(exc).__name__, exc)

    def _bound(self, what: str, mapping: Dict[str, Any]) -> None:
        with self._lock:
            extra = records.bound(mapping)
        if extra:
            self._log.warning(
                "perfwatch: %s beyond %d keys: dropped %d%s", what, records.MAX_KEYS, len(extra), _sample(extra)
            )

    # ----- the interface --------------------------------------------------------------------------

    def history(self, kind: str) -> List[Dict[str, Any]]:
        """The runs of one kind, oldest first: the store's own list (add_run appends to it)."""
        with self._lock:
            runs = self._history.get(kind)
            if runs is None:
                runs = self._load("history/" + kind, lambda data: records.clean_history(data, kind), list)
                self._history[kind] = runs
            return runs

    def add_run(self, record: Dict[str, Any]) -> None:
        cleaned = records.clean_run(record)
        if cleaned.value is None or cleaned.dropped:
            self._log.error("perfwatch: run record not as expected: %s", "; ".join(cleaned.dropped))
        if cleaned.value is None:
            return
        record = cleaned.value
        kind = record["kind"]
        runs = self.history(kind)
        with self._lock:
            runs.append(record)
            del runs[: -self.history_limit]
            self.last_run[kind] = record.get("ended_at") or record.get("started_at") or 0.0
        self._save("history/" + kind, runs)
        self._save("last_run", self.last_run)

    def save_baselines(self) -> None:
        self._bound("baselines", self.baselines.history)
        self._save("baselines", self.baselines.history)

    def save_regressions(self) -> None:
        self._bound("regressions", self.regressions)
        self._bound("streaks", self.streaks)
        self._save("regressions", self.regressions)
        self._save("streaks", self.streaks)

    def add_scratch(self, run_id: str, kind: str, entry: Dict[str, Any]) -> None:
        """Register scratch before it is written. Raises ScratchFull (a BenchError: the run fails, writing
        nothing) when MAX_KEYS runs, or MAX_SCRATCH_ENTRIES entries of this run, already await cleanup."""
        with self._lock:
            item = self.scratch.get(run_id)
            if item is None and len(self.scratch) >= records.MAX_KEYS:
                raise ScratchFull(
                    "{} runs' scratch awaits cleanup already: see `ceph perfwatch bench status`".format(
                        len(self.scratch)
                    )
                )
            item = item if item is not None else {"kind": kind, "entries": []}
            if entry not in item["entries"]:
                if len(item["entries"]) >= records.MAX_SCRATCH_ENTRIES:
                    raise ScratchFull("{} has {} scratch entries already".format(run_id, len(item["entries"])))
                item["entries"].append(entry)
            self.scratch[run_id] = item
        self._save("scratch", self.scratch)

    def drop_scratch(self, run_id: str) -> None:
        with self._lock:
            dropped = self.scratch.pop(run_id, None) is not None
        if dropped:
            self._save("scratch", self.scratch)

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
            self._bound("runs in progress", self._running)
        self._save("running", self._running)

    def drop_running(self, run_id: str) -> None:
        with self._lock:
            dropped = self._running.pop(run_id, None) is not None
        if dropped:
            self._save("running", self._running)

    def adopt_recovered(self, run_id: str, kind: str, entries: List[Dict[str, Any]]) -> None:
        """A recovered run id's scratch, rebuilt by its kind (pool, namespace, prefix = run id), moves
        into the scratch registry, where cleanup_orphans finds it."""
        with self._lock:
            item = self.scratch.setdefault(run_id, {"kind": kind, "entries": []})
            for entry in entries:
                if entry not in item["entries"]:
                    item["entries"].append(entry)
            self.recovered_scratch.pop(run_id, None)
        self._save("scratch", self.scratch)
        self._save("recovered_scratch", self.recovered_scratch)

    def forget_recovered(self, run_id: str) -> None:
        with self._lock:
            dropped = self.recovered_scratch.pop(run_id, None) is not None
        if dropped:
            self._save("recovered_scratch", self.recovered_scratch)


def _sample(items: List[str], n: int = 3) -> str:
    more = " and {} more".format(len(items) - n) if len(items) > n else ""
    return " (" + "; ".join(items[:n]) + more + ")"
