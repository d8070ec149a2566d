"""Removing benchmark scratch data: a run's at its end, and orphans (a previous mgr's runs, failed or
unsettled cleanups, scratch recovered from a broken registry) in a background thread of its own."""

import threading
from typing import Any, Callable, Dict, List, Optional

from ..base import Benchmark
from ..records.store import BenchStore
from . import scratch_pool


class ScratchCleaner:
    def __init__(
        self,
        kinds: Dict[str, Benchmark],
        adapter: Any,
        io_factory: Callable[[str, str], Any],
        store: BenchStore,
        options: Callable[[], Dict[str, Any]],
        log: Any,
    ) -> None:
        self._kinds = kinds
        self._adapter = adapter
        self._io_factory = io_factory
        self._store = store
        self._options = options
        self._log = log
        self._lock = threading.Lock()
        self._thread: Optional[threading.Thread] = None

    def cleanup_run(self, run_id: str, keep_entry: bool = False) -> bool:
        """Remove what run_id registered; its entry is dropped when all of it went and keep_entry is off."""
        item = self._store.scratch_of(run_id)
        if item is None:
            return True
        opts = self._options()
        ok = True
        for entry in item.get("entries", []):
            # An entry may name its own kind (a recovered run of unknown kind has entries of several).
            kind = self._kinds.get(entry.get("kind") or item.get("kind", ""))
            if kind is None:
                ok = False  # written by a newer perfwatch? Kept, never dropped unseen.
                self._log.warning(
                    "scratch of %s: no kind %r here to clean %s with; kept", run_id, item.get("kind"), entry
                )
                continue
            problem = scratch_pool.entry_problem(run_id, entry, self._adapter.pool_applications)
            if problem is not None:
                self._log.error("scratch of %s: not cleaning %s: %s; entry dropped", run_id, entry, problem)
                continue
            try:
                kind.cleanup(self._adapter, self._io_factory, entry, self._log, opts)
            except Exception as exc:
                ok = False
                self._log.warning("cleanup of %s %s failed, will retry: %s", run_id, entry, exc)
        if ok and not keep_entry:
            self._store.drop_scratch(run_id)
        return ok

    def _adopt_recovered(self) -> None:
        """Run ids that a broken scratch record named: their scratch rebuilt from the naming rules (the
        run id is the prefix of all a run writes), into the registry, where the cleanup finds it."""
        opts = self._options()
        for run_id, kind_name in sorted(self._store.recovered_scratch().items()):
            if kind_name in self._kinds:
                kinds = [self._kinds[kind_name]]
            else:
                kinds = [k for k in self._kinds.values() if k.writes]
            entries = []
            for kind in kinds:
                entries += [dict(e, kind=kind.name) for e in kind.recovered_entries(run_id, opts, self._adapter)]
            if entries:
                self._store.adopt_recovered(run_id, kind_name or kinds[0].name, entries)
            else:
                self._store.forget_recovered(run_id)

    def cleanup_orphans(self, is_running: Callable[[str], bool]) -> List[str]:
        """Scratch of runs that are not running here: remove it. Whether a run is running is asked per run
        id at that moment, so a run started meanwhile never loses its objects."""
        cleaned = []
        self._adopt_recovered()
        for run_id in self._store.scratch_run_ids():
            if not is_running(run_id) and self.cleanup_run(run_id):
                cleaned.append(run_id)
        return cleaned

    def cleanup_orphans_in_background(self, is_running: Callable[[str], bool]) -> None:
        """Listing and removing scratch can block on an unhealthy cluster, so it runs in one thread of its
        own, never two at once, never in the caller's."""
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            self._thread = threading.Thread(target=self._clean_quietly, args=(is_running,), name="perfwatch-cleanup")
            self._thread.daemon = True
            self._thread.start()

    def _clean_quietly(self, is_running: Callable[[str], bool]) -> None:
        try:
            self.cleanup_orphans(is_running)
        except Exception:
            self._log.exception("scratch cleanup failed; it is retried next interval")
