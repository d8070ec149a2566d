"""Starting, running, cancelling and waiting for benchmark runs, the same way for every kind.

Rules: a heavy round passes the guard first and runs alone; light probes run one per kind at a time;
every run has a hard deadline and a cancel event; it is saved as in progress while it runs; at its end
its scratch is cleaned, it is judged and recorded, and only then shown as finished. Runs a previous mgr
left in progress are recorded as interrupted.
"""

import threading
import time
from typing import Any, Callable, Dict, List, Optional

from ...ceph.seam import OsdInfo
from ..base import BenchError, Benchmark, Cancelled, OpTimeout
from ..engine.probe_coverage import ProbeCoverage
from ..records.store import BenchStore
from ..run import Run, new_run_id
from . import guard, scratch_pool
from .capacity import CapacityUnknown
from .context import make_context

FINISHED_KEPT = 20  # finished runs kept in memory, for `bench status`


class Refused(Exception):
    """The run may not start now; the message says why."""


class Lifecycle:
    def __init__(
        self,
        kinds: Dict[str, Benchmark],
        adapter: Any,
        io_factory: Callable[[str, str], Any],
        store: BenchStore,
        options: Callable[[], Dict[str, Any]],
        log: Any,
        progress: Any,
        on_finished: Callable[[Run], None],
        cleanup_run: Callable[[str, bool], bool],
        judge_run: Callable[[Run, Dict[str, Any]], None],
    ) -> None:
        """progress: .update(ev_id, msg, fraction), .complete(ev_id), .fail(ev_id, msg); cleanup_run(run_id,
        keep_entry) removes a run's scratch; judge_run(run, options) judges the results of a run that is done."""
        self._kinds = kinds
        self._adapter = adapter
        self._io_factory = io_factory
        self._store = store
        self._options = options
        self._log = log
        self._progress = progress
        self._on_finished = on_finished
        self._cleanup_run = cleanup_run
        self._judge_run = judge_run
        self.coverage = ProbeCoverage("rados")  # the light rados probe's: which OSDs it measured when
        self._lock = threading.Lock()  # the runs and the outcome counts
        self._finish_lock = threading.Lock()  # a run is judged, counted and recorded as one step
        self._runs: Dict[str, Run] = {}  # running, and the last few finished
        self._outcomes: Dict[str, int] = {}

    def runs(self) -> Dict[str, Run]:
        with self._lock:
            return dict(self._runs)

    def is_running(self, run_id: str) -> bool:
        with self._lock:
            run = self._runs.get(run_id)
            return run is not None and run.state == "running"

    def outcomes(self) -> Dict[str, int]:
        """ "kind/state" -> how many runs ended so, for the metrics."""
        with self._lock:
            return dict(self._outcomes)

    def _count(self, kind: str, state: str) -> None:
        key = "{}/{}".format(kind, state)
        with self._lock:
            self._outcomes[key] = self._outcomes.get(key, 0) + 1

    def record_interrupted(self) -> None:
        """Runs a previous mgr left in progress (it died, or failed over mid-run) go into the history as
        interrupted, with what they had measured; their scratch is cleaned by the orphan cleanup."""
        for record in self._store.take_interrupted():
            record = dict(record)
            record["state"] = "interrupted"
            record["message"] = "interrupted: the mgr running it stopped (failover or restart) before it ended"
            record["ended_at"] = record.get("updated_at") or record.get("started_at")
            self._count(record["kind"], "interrupted")
            self._store.add_run(record)
            self._log.warning(
                "benchmark %s was interrupted by a mgr failover or restart; %d result(s) it had measured kept",
                record["run_id"], len(record.get("results", [])),
            )  # fmt: skip

    # ----- starting -----------------------------------------------------------------------------

    def start(self, kind_name: str, osds: Optional[List[int]], params: Dict[str, Optional[int]], trigger: str) -> Run:
        """Validate, guard and start a run in its own thread; ValueError for bad input, Refused for now-not."""
        kind = self._kinds.get(kind_name)
        if kind is None:
            raise ValueError("unknown kind {!r}; kinds: {}".format(kind_name, ", ".join(sorted(self._kinds))))
        clean = kind.validate(params)
        heavy = kind.is_heavy(clean)
        if kind.scratch_pool:
            problem = scratch_pool.pool_problem(self._adapter, self._options(), self._store.pool_creations())
            if problem:
                raise ValueError(problem)
        infos = self._adapter.osd_infos()
        known = {o.id for o in infos}
        if osds:
            unknown = sorted(set(osds) - known)
            if unknown:
                raise ValueError(
                    "no such OSD: {} (OSD ids are {}..{})".format(
                        ", ".join("osd.{}".format(o) for o in unknown), min(known), max(known)
                    )
                )
        plan = [o for o in infos if not osds or o.id in osds]
        # Free space: what the run would write must fit every OSD and pool it touches (ValueError: EINVAL;
        # figures not there yet, as just after a failover: EBUSY, try again).
        if type(kind).check_capacity is not Benchmark.check_capacity:  # only kinds that write read the figures
            try:
                kind.check_capacity(plan, params, clean, self._options(), self._adapter.capacity_view())
            except CapacityUnknown as exc:
                raise Refused(str(exc)) from exc
        with self._lock:
            busy = [
                r for r in self._runs.values() if r.state == "running" and (r.kind == kind_name or (heavy and r.heavy))
            ]
            if busy:
                raise Refused(
                    "{} is still running: wait for it or `ceph perfwatch bench cancel {}`".format(
                        busy[0].run_id, busy[0].run_id
                    )
                )
            if heavy:
                health, pg_states = self._adapter.cluster_state()
                reasons = guard.refusal_reasons(health, pg_states, {o.id: o.up for o in infos}, [o.id for o in plan])
                if reasons:
                    raise Refused("heavy {} round refused: {}".format(kind_name, "; ".join(reasons)))
            run = Run(new_run_id(kind_name, time.time()), kind_name, heavy, clean, [o.id for o in plan], trigger)
            run.scope = kind.scope(clean, run.osds)
            run.requested = dict(params)
            run.targeted = bool(osds)
            self._runs[run.run_id] = run
            self._forget_old()
        self._store.save_running(run.to_dict())
        run.thread = threading.Thread(target=self._execute, args=(run, kind, plan), name="perfwatch-" + run.run_id)
        run.thread.daemon = True
        run.thread.start()
        return run

    def _forget_old(self) -> None:
        finished = sorted((r for r in self._runs.values() if r.state != "running"), key=lambda r: r.started_at)
        for run in finished[:-FINISHED_KEPT]:
            del self._runs[run.run_id]

    # ----- running ------------------------------------------------------------------------------

    def _scratch_busy(self, run_id: str) -> bool:
        """Whether a run other than run_id, of a kind that writes into the scratch pool, is running."""
        with self._lock:
            return any(r.run_id != run_id and r.state == "running" and getattr(self._kinds.get(r.kind), "scratch_pool",
                       False) for r in self._runs.values())  # fmt: skip

    def _execute(self, run: Run, kind: Benchmark, plan: List[OsdInfo]) -> None:
        """Run, clean up, judge, record; only then publish the final state, so a run seen as finished
        has its scratch removed and its results in the history and the metrics. Whatever fails in the
        bookkeeping, the run still ends: a run stuck "running" would block every later one."""
        opts = self._options()
        ev_id = "perfwatch-" + run.run_id
        state, message = "done", ""
        unsettled = False
        try:
            if run.heavy:
                self._progress.update(ev_id, "perfwatch {} bench starting".format(run.kind), 0.0)
            ctx = make_context(
                run, plan, opts, self._adapter, self._io_factory, self._store, self._progress, self._log, self.coverage
            )
            ctx.scratch_busy = lambda: self._scratch_busy(run.run_id)
            try:
                run.measurements = kind.run(ctx)
                run.acting = dict(ctx.acting)
                run.commit_latency = dict(ctx.commit_latency)
                if not run.measurements:
                    raise BenchError("measured nothing")
            except Cancelled:
                state, message = "cancelled", "cancelled"
            except BenchError as exc:
                state, message = "failed", str(exc)
                unsettled = isinstance(exc, OpTimeout)  # the op may still land after our cleanup
            except Exception as exc:
                self._log.exception("benchmark %s crashed", run.run_id)
                state, message = "failed", "{}: {}".format(type(exc).__name__, exc)
            unsettled = unsettled or ctx.unsettled
            run.ended_at = time.time()
            run.message = message
            if ctx.scratch_removed and not unsettled:  # nothing of it is left to find: no listing
                self._store.drop_scratch(run.run_id)
            # Ops that may still land: clean now, and keep the entry so later passes clean again.
            self._cleanup_run(run.run_id, unsettled)
            if state != "done":
                run.measurements = []
            with self._finish_lock:
                if state == "done":
                    run.progress = 1.0
                    self._judge_run(run, opts)
                self._count(run.kind, state)
                record = run.to_dict()
                record["state"] = state
                self._store.add_run(record)
                self._store.drop_running(run.run_id)
            if run.heavy:
                if state == "done":
                    self._progress.complete(ev_id)
                else:
                    self._progress.fail(ev_id, "perfwatch {} bench {}: {}".format(run.kind, state, message))
            self._on_finished(run)
        except Exception as exc:
            self._log.exception("bookkeeping of benchmark %s failed", run.run_id)
            if state == "done":
                state, message = "failed", "bookkeeping failed: {}: {}".format(type(exc).__name__, exc)
                run.message = message
        finally:
            run.ended_at = run.ended_at or time.time()
            run.state = state
        log = self._log.info if state == "done" or not run.heavy else self._log.warning
        log("benchmark %s %s%s", run.run_id, state, ": " + message if message else "")

    # ----- stopping -----------------------------------------------------------------------------

    def cancel(self, run_id: Optional[str] = None) -> List[str]:
        with self._lock:
            running = [r for r in self._runs.values() if r.state == "running"]
        if run_id is not None:
            running = [r for r in running if r.run_id == run_id]
            if not running:
                raise ValueError("no running benchmark {!r}".format(run_id))
        for run in running:
            run.cancel.set()
        return [r.run_id for r in running]

    def wait(self, run_ids: List[str], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        for run_id in run_ids:
            with self._lock:
                run = self._runs.get(run_id)
            if run is not None and run.thread is not None:
                run.thread.join(max(0.0, deadline - time.monotonic()))
                if run.thread.is_alive():
                    return False
        return True
