"""Benchmark state that must survive a mgr failover, in the mgr's key-value store, bounded in size:
run history per kind, baselines, active regressions, and the scratch data of unfinished runs."""

import json
import threading
from typing import Any, Callable, Dict, List, Optional

from .baseline import Baselines

PREFIX = "bench/"


class BenchStore:
    def __init__(
        self,
        get: Callable[[str], Optional[str]],
        put: Callable[[str, Optional[str]], None],
        history_limit: int,
        window: int,
    ) -> None:
        self._get = get
        self._put = put
        self._lock = threading.RLock()
        self.history_limit = history_limit
        self.baselines = Baselines(window, self._load("baselines", {}))
        self.regressions: Dict[str, Dict[str, Any]] = self._load("regressions", {})
        self.streaks: Dict[str, int] = self._load("streaks", {})  # consecutive regressed results per key
        self.scratch: Dict[str, Dict[str, Any]] = self._load("scratch", {})
        self.last_run: Dict[str, float] = self._load("last_run", {})
        self._history: Dict[str, List[Dict[str, Any]]] = {}

    def _load(self, key: str, default: Any) -> Any:
        raw = self._get(PREFIX + key)
        if not raw:
            return default
        try:
            return json.loads(raw)
        except ValueError:
            return default

    def _save(self, key: str, value: Any) -> None:
        with self._lock:  # run threads change these while others save them
            text = json.dumps(value, sort_keys=True)
        self._put(PREFIX + key, text)

    def history(self, kind: str) -> List[Dict[str, Any]]:
        if kind not in self._history:
            self._history[kind] = self._load("history/" + kind, [])
        return self._history[kind]

    def add_run(self, record: Dict[str, Any]) -> None:
        runs = self.history(record["kind"])
        with self._lock:
            runs.append(record)
            del runs[: -self.history_limit]
        self._save("history/" + record["kind"], runs)
        self.last_run[record["kind"]] = record.get("ended_at") or record.get("started_at") or 0.0
        self._save("last_run", self.last_run)

    def save_baselines(self) -> None:
        self._save("baselines", self.baselines.history)

    def save_regressions(self) -> None:
        self._save("regressions", self.regressions)
        self._save("streaks", self.streaks)

    def add_scratch(self, run_id: str, kind: str, entry: Dict[str, Any]) -> None:
        with self._lock:
            item = self.scratch.setdefault(run_id, {"kind": kind, "entries": []})
            if entry not in item["entries"]:
                item["entries"].append(entry)
        self._save("scratch", self.scratch)

    def drop_scratch(self, run_id: str) -> None:
        with self._lock:
            dropped = self.scratch.pop(run_id, None) is not None
        if dropped:
            self._save("scratch", self.scratch)
