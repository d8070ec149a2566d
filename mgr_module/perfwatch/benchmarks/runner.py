"""The benchmarks' one entry point for the module and its commands: Runner puts together the run
lifecycle (lifecycle/run_control.py), judging (judging/regressions.py), scratch cleanup
(lifecycle/cleanup.py), the schedule (lifecycle/schedule.py) and the status and history (report.py),
over one store and one registry of kinds."""

import threading
from typing import Any, Callable, Dict, List, Optional

from ..common.metrics_model import Sample
from . import report
from .base import Benchmark
from .judging.regressions import Judging
from .kinds.registry import KINDS
from .lifecycle import schedule
from .lifecycle.cleanup import ScratchCleaner
from .lifecycle.run_control import Lifecycle
from .records.store import BenchStore
from .run import Run


class Runner:
    def __init__(
        self,
        adapter: Any,
        io_factory: Callable[[str, str], Any],
        store: BenchStore,
        options: Callable[[], Dict[str, Any]],
        log: Any,
        progress: Any,
        on_finished: Callable[[Run], None],
        kinds: Optional[Dict[str, Benchmark]] = None,
    ) -> None:
        """progress: .update(ev_id, msg, fraction), .complete(ev_id), .fail(ev_id, msg), for heavy runs;
        on_finished(run): called once a run is recorded, before it shows as finished (and read at each
        call, so it may be replaced); kinds: the registry of kinds (kinds.registry.KINDS when None)."""
        self.kinds = KINDS if kinds is None else kinds
        self.store = store
        self.stopping = threading.Event()  # the module is shutting down: long cleanups stop between ops
        self.io_factory = self._stoppable(io_factory)
        self.on_finished = on_finished
        self._options = options
        self._log = log
        self._judging = Judging(store, adapter)
        self._cleaner = ScratchCleaner(self.kinds, adapter, self.io_factory, store, options, log)
        self._lifecycle = Lifecycle(
            self.kinds,
            adapter,
            self.io_factory,
            store,
            options,
            log,
            progress,
            lambda run: self.on_finished(run),
            self._cleaner.cleanup_run,
            self._judging.judge_run,
        )
        self._lifecycle.record_interrupted()

    def _stoppable(self, io_factory: Callable[[str, str], Any]) -> Callable[[str, str], Any]:
        def make(pool: str, namespace: str) -> Any:
            io = io_factory(pool, namespace)
            if hasattr(io, "stopping"):
                io.stopping = self.stopping
            return io

        return make

    # ----- runs ---------------------------------------------------------------------------------

    def start(
        self, kind_name: str, osds: Optional[List[int]], params: Dict[str, Optional[int]], trigger: str = "command"
    ) -> Run:
        """Validate, guard and start a run in its own thread; ValueError for bad input, lifecycle.Refused
        for now-not."""
        return self._lifecycle.start(kind_name, osds, params, trigger)

    @property
    def runs(self) -> Dict[str, Run]:
        """Run id -> run: those running, and the last few finished (a copy)."""
        return self._lifecycle.runs()

    def outcomes(self) -> Dict[str, int]:
        """ "kind/state" -> how many runs ended so, for the metrics."""
        return self._lifecycle.outcomes()

    def coverage_samples(self, now: float) -> List[Sample]:
        """How many up OSDs the light rados probe has a fresh result of (probe_coverage.py)."""
        return self._lifecycle.coverage.samples(now)

    def cancel(self, run_id: Optional[str] = None) -> List[str]:
        return self._lifecycle.cancel(run_id)

    def wait(self, run_ids: List[str], timeout: float) -> bool:
        return self._lifecycle.wait(run_ids, timeout)

    def shutdown(self) -> List[str]:
        """The module stops: cancel every run, and stop long cleanups between operations."""
        self.stopping.set()
        return self.cancel()

    # ----- judging and cleanup ------------------------------------------------------------------

    def reset_baselines(self, kind: Optional[str], osd: Optional[int]) -> List[str]:
        """Forget baselines (and regressions) of matching keys: after a deliberate change of hardware."""
        return self._judging.reset_baselines(kind, osd)

    def cleanup_orphans(self) -> List[str]:
        """Scratch of runs that are not running here (a previous mgr's, or a failed or unsettled cleanup):
        remove it; returns the run ids cleaned."""
        return self._cleaner.cleanup_orphans(self._lifecycle.is_running)

    def cleanup_orphans_in_background(self) -> None:
        """What the serve loop calls: the same, in a thread of its own (never two at once)."""
        self._cleaner.cleanup_orphans_in_background(self._lifecycle.is_running)

    # ----- schedule and reports -----------------------------------------------------------------

    def tick(self, now: float) -> List[str]:
        """Start what is due; returns the run ids started."""
        return schedule.tick(now, self.kinds, self.store, self._options(), self.start, self._log)

    def schedule(self) -> List[Dict[str, Any]]:
        return schedule.schedule_rows(self.kinds, self.store, self._options())

    def status(self) -> Dict[str, Any]:
        return report.status(self.runs.values(), self.store)

    def history(self, kind: Optional[str], osd: Optional[int], limit: int) -> List[Dict[str, Any]]:
        return report.history(self.kinds, self.store, kind, osd, limit)
