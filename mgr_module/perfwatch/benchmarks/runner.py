"""Starts, tracks, cancels and cleans up benchmark runs, the same way for every kind.

Rules: a heavy round passes the guard first and runs alone; light probes run one per kind at a time;
every run has a hard deadline and a cancel event; its scratch data is registered in the store before
it is written and removed at the end, on cancel, and (for runs of a previous mgr) at start-up.
"""

import binascii
import contextlib
import os
import threading
import time
from typing import Any, Callable, Dict, List, Optional

from . import guard, schedule, scratch
from .base import BenchError, Benchmark, Cancelled, Context
from .baseline import judge
from .capacity import CapacityUnknown
from .net_ping import NetPing
from .osd_bench import OsdBench
from .planning import OsdInfo
from .rados_latency import RadosLatency
from .radosio import OpTimeout
from .rbd_io import RbdIO
from .results import Measurement
from .rgw_index import RgwIndex
from .store import BenchStore

RUNNING_SAVE_SECONDS = 5.0  # a run in progress is saved (with its results so far) at most this often

KINDS: Dict[str, Benchmark] = {k.name: k for k in (OsdBench(), RadosLatency(), RbdIO(), RgwIndex(), NetPing())}
LIGHT_INTERVAL_OPTION = {"rados": "rados_probe_interval", "rgw": "rgw_probe_interval", "net": "net_probe_interval"}
HEAVY_INTERVAL_OPTION = {"osd": "osd_bench_interval", "rbd": "rbd_bench_interval"}


class Refused(Exception):
    """The run may not start now; the message says why."""


def is_heavy(kind: Benchmark, params: Dict[str, int]) -> bool:
    check = getattr(kind, "is_heavy", None)
    return bool(check(params)) if check else kind.heavy


def new_run_id(kind: str, now: float) -> str:
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now))
    return "{}-{}-{}".format(kind, stamp, binascii.hexlify(os.urandom(2)).decode())


class Run:
    def __init__(
        self, run_id: str, kind: str, heavy: bool, params: Dict[str, int], osds: List[int], trigger: str
    ) -> None:
        self.run_id = run_id
        self.kind = kind
        self.heavy = heavy
        self.params = params
        self.osds = osds
        self.trigger = trigger
        self.state = "running"
        self.message = ""
        self.progress = 0.0
        self.started_at = time.time()
        self.ended_at: Optional[float] = None
        self.measurements: List[Measurement] = []
        self.scope = ""  # what it covers, in words: "3 OSDs", "the bucket index"
        self.requested: Dict[str, Optional[int]] = {}  # the parameters as asked (None: not given)
        self.cancel = threading.Event()
        self.thread: Optional[threading.Thread] = None

    def to_dict(self, with_results: bool = True) -> Dict[str, Any]:
        out: Dict[str, Any] = {
            "run_id": self.run_id,
            "kind": self.kind,
            "heavy": self.heavy,
            "trigger": self.trigger,
            "params": self.params,
            "osds": self.osds,
            "scope": self.scope,
            "state": self.state,
            "message": self.message,
            "progress": round(self.progress, 3),
            "started_at": round(self.started_at, 3),
            "ended_at": None if self.ended_at is None else round(self.ended_at, 3),
        }
        if with_results:
            out["results"] = [m.to_dict() for m in self.measurements]
        return out


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
    ) -> None:
        self.adapter = adapter
        self.stopping = threading.Event()  # the module is shutting down: long cleanups stop between ops
        self.io_factory = self._stoppable(io_factory)
        self.store = store
        self.options = options
        self.log = log
        self.progress = progress  # .update(ev_id, msg, fraction), .complete(ev_id), .fail(ev_id, msg)
        self.on_finished = on_finished
        self._lock = threading.Lock()
        self._state_lock = threading.RLock()  # baselines, regressions, history: judged one run at a time
        self._cleaner: Optional[threading.Thread] = None
        self.runs: Dict[str, Run] = {}  # running, and the last few finished
        self.outcomes: Dict[str, int] = {}  # "kind/state" -> count, for metrics
        self._record_interrupted()

    def _stoppable(self, io_factory: Callable[[str, str], Any]) -> Callable[[str, str], Any]:
        def make(pool: str, namespace: str) -> Any:
            io = io_factory(pool, namespace)
            if hasattr(io, "stopping"):
                io.stopping = self.stopping
            return io

        return make

    def _record_interrupted(self) -> None:
        """Runs a previous mgr left in progress (it died, or failed over mid-run) go into the history as
        interrupted, with what they had measured; their scratch is cleaned by the orphan cleanup."""
        for record in self.store.take_interrupted():
            record = dict(record)
            record["state"] = "interrupted"
            record["message"] = "interrupted: the mgr running it stopped (failover or restart) before it ended"
            record["ended_at"] = record.get("updated_at") or record.get("started_at")
            key = "{}/interrupted".format(record["kind"])
            self.outcomes[key] = self.outcomes.get(key, 0) + 1
            self.store.add_run(record)
            self.log.warning(
                "benchmark %s was interrupted by a mgr failover or restart; %d result(s) it had measured kept",
                record["run_id"], len(record.get("results", [])),
            )  # fmt: skip

    # ----- starting -----------------------------------------------------------------------------

    def start(
        self, kind_name: str, osds: Optional[List[int]], params: Dict[str, Optional[int]], trigger: str = "command"
    ) -> Run:
        """Validate, guard and start a run in its own thread; ValueError for bad input, Refused for now-not."""
        kind = KINDS.get(kind_name)
        if kind is None:
            raise ValueError("unknown kind {!r}; kinds: {}".format(kind_name, ", ".join(sorted(KINDS))))
        clean = kind.validate(params)
        heavy = is_heavy(kind, clean)
        if kind.scratch_pool:
            problem = scratch.pool_problem(self.adapter, self.options())
            if problem:
                raise ValueError(problem)
        infos = self.adapter.osd_infos()
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
                kind.check_capacity(plan, params, clean, self.options(), self.adapter.capacity_view())
            except CapacityUnknown as exc:
                raise Refused(str(exc)) from exc
        with self._lock:
            busy = [
                r for r in self.runs.values() if r.state == "running" and (r.kind == kind_name or (heavy and r.heavy))
            ]
            if busy:
                raise Refused(
                    "{} is still running: wait for it or `ceph perfwatch bench cancel {}`".format(
                        busy[0].run_id, busy[0].run_id
                    )
                )
            if heavy:
                health, pg_states = self.adapter.cluster_state()
                reasons = guard.refusal_reasons(health, pg_states, {o.id: o.up for o in infos}, [o.id for o in plan])
                if reasons:
                    raise Refused("heavy {} round refused: {}".format(kind_name, "; ".join(reasons)))
            run = Run(new_run_id(kind_name, time.time()), kind_name, heavy, clean, [o.id for o in plan], trigger)
            run.scope = kind.scope(clean, run.osds)
            run.requested = dict(params)
            self.runs[run.run_id] = run
            self._forget_old()
        self.store.save_running(run.to_dict())
        run.thread = threading.Thread(target=self._execute, args=(run, kind, plan), name="perfwatch-" + run.run_id)
        run.thread.daemon = True
        run.thread.start()
        return run

    def _forget_old(self) -> None:
        finished = sorted((r for r in self.runs.values() if r.state != "running"), key=lambda r: r.started_at)
        for run in finished[:-20]:
            del self.runs[run.run_id]

    # ----- running ------------------------------------------------------------------------------

    def _context(self, run: Run, plan: List[OsdInfo], opts: Dict[str, Any]) -> Context:
        ev_id = "perfwatch-" + run.run_id
        sent = {"at": 0.0, "saved": time.monotonic()}
        shown = [""]

        def progress(fraction: float, message: str) -> None:
            run.progress = max(run.progress, min(1.0, fraction))
            now = time.monotonic()
            # A new step (other OSDs) is shown at once; the same step's fraction at most once a second.
            if run.heavy and (message != shown[0] or now - sent["at"] >= 1.0):
                sent["at"], shown[0] = now, message
                self.progress.update(ev_id, "perfwatch {} bench: {}".format(run.kind, message), run.progress)
            if now - sent["saved"] >= RUNNING_SAVE_SECONDS:
                sent["saved"] = now
                self._save_running(run, ctx)

        def register(entry: Dict[str, Any]) -> None:
            self.store.add_scratch(run.run_id, run.kind, entry)

        ctx = Context(
            run_id=run.run_id,
            adapter=self.adapter,
            io_factory=self.io_factory,
            params=run.params,
            osds=plan,
            per_host=int(opts["max_osds_per_host"]),
            deadline=time.monotonic() + float(opts["bench_deadline"]),
            cancel=run.cancel,
            progress=progress,
            options=opts,
            log=self.log,
            register_scratch=register,
            osd_latency_guard=self._latency_guard([o.id for o in plan], float(opts["abort_client_latency_ms"]) / 1000),
            requested=run.requested,
        )
        return ctx

    def _save_running(self, run: Run, ctx: Context) -> None:
        """The run in progress, with what it has measured so far, for the history if its mgr dies."""
        record = run.to_dict()
        record["results"] = [m.to_dict() for m in list(ctx.measured)]
        record["updated_at"] = round(time.time(), 3)
        try:
            self.store.save_running(record)
        except Exception as exc:  # bookkeeping never stops a run
            self.log.debug("saving %s in progress failed: %s", run.run_id, exc)

    def _latency_guard(self, osds: List[int], threshold: float) -> Callable[[List[int]], Optional[str]]:
        """Compares each OSD's client op latency now with the previous reading (the first at run start)."""
        last: Dict[int, Dict[str, float]] = {}
        for osd in osds:
            # An OSD that cannot be read has no reading; the bench itself will fail on it.
            with contextlib.suppress(Exception):
                last[osd] = self.adapter.osd_op_latency(osd)

        def check(batch: List[int]) -> Optional[str]:
            for osd in batch:
                try:
                    now = self.adapter.osd_op_latency(osd)
                except Exception:
                    continue
                before = last.get(osd)
                last[osd] = now
                if before and guard.client_latency_too_high(before, now, threshold):
                    return "client op latency on osd.{} rose above {:.0f} ms".format(osd, threshold * 1000)
            return None

        return check

    def _execute(self, run: Run, kind: Benchmark, plan: List[OsdInfo]) -> None:
        """Run, clean up, judge, record; only then publish the final state, so a run seen as finished
        has its scratch removed and its results in the history and the metrics. Whatever fails in the
        bookkeeping, the run still ends: a run stuck "running" would block every later one."""
        opts = self.options()
        ev_id = "perfwatch-" + run.run_id
        state, message = "done", ""
        unsettled = False
        try:
            if run.heavy:
                self.progress.update(ev_id, "perfwatch {} bench starting".format(run.kind), 0.0)
            ctx = self._context(run, plan, opts)
            try:
                run.measurements = kind.run(ctx)
                if not run.measurements:
                    raise BenchError("measured nothing")
            except Cancelled:
                state, message = "cancelled", "cancelled"
            except BenchError as exc:
                state, message = "failed", str(exc)
                unsettled = isinstance(exc, OpTimeout)  # the op may still land after our cleanup
            except Exception as exc:
                self.log.exception("benchmark %s crashed", run.run_id)
                state, message = "failed", "{}: {}".format(type(exc).__name__, exc)
            unsettled = unsettled or ctx.unsettled
            run.ended_at = time.time()
            run.message = message
            # Ops that may still land: clean now, and keep the entry so later passes clean again.
            self._cleanup_run(run.run_id, keep_entry=unsettled)
            if state != "done":
                run.measurements = []
            with self._state_lock:
                if state == "done":
                    run.progress = 1.0
                    self._judge(run, opts)
                key = run.kind + "/" + state
                self.outcomes[key] = self.outcomes.get(key, 0) + 1
                record = run.to_dict()
                record["state"] = state
                self.store.add_run(record)
                self.store.drop_running(run.run_id)
            if run.heavy:
                if state == "done":
                    self.progress.complete(ev_id)
                else:
                    self.progress.fail(ev_id, "perfwatch {} bench {}: {}".format(run.kind, state, message))
            self.on_finished(run)
        except Exception as exc:
            self.log.exception("bookkeeping of benchmark %s failed", run.run_id)
            if state == "done":
                state, message = "failed", "bookkeeping failed: {}: {}".format(type(exc).__name__, exc)
                run.message = message
        finally:
            run.ended_at = run.ended_at or time.time()
            run.state = state
        log = self.log.info if state == "done" or not run.heavy else self.log.warning
        log("benchmark %s %s%s", run.run_id, state, ": " + message if message else "")

    def _judge(self, run: Run, opts: Dict[str, Any]) -> None:
        classes = {o.id: o.device_class for o in self.adapter.osd_infos()}
        verdicts = judge(
            run.measurements,
            self.store.baselines,
            classes,
            float(opts["regression_fraction"]),
            int(opts["baseline_min_results"]),
        )
        needed = 1 if run.heavy else int(opts["probe_regression_runs"])
        for verdict in verdicts:
            if verdict.regressed:
                streak = self.store.streaks.get(verdict.key, 0) + 1
                self.store.streaks[verdict.key] = streak
                if streak >= needed:
                    self.store.regressions[verdict.key] = dict(
                        verdict._asdict(), run_id=run.run_id, at=run.ended_at, consecutive=streak
                    )
            else:
                self.store.streaks.pop(verdict.key, None)
                self.store.regressions.pop(verdict.key, None)
        self.store.save_baselines()
        self.store.save_regressions()

    # ----- stopping and cleaning ----------------------------------------------------------------

    def shutdown(self) -> List[str]:
        """The module stops: cancel every run, and stop long cleanups between operations."""
        self.stopping.set()
        return self.cancel()

    def cancel(self, run_id: Optional[str] = None) -> List[str]:
        with self._lock:
            running = [r for r in self.runs.values() if r.state == "running"]
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
            run = self.runs.get(run_id)
            if run is not None and run.thread is not None:
                run.thread.join(max(0.0, deadline - time.monotonic()))
                if run.thread.is_alive():
                    return False
        return True

    def _cleanup_run(self, run_id: str, keep_entry: bool = False) -> bool:
        item = self.store.scratch.get(run_id)
        if item is None:
            return True
        opts = self.options()
        ok = True
        for entry in item.get("entries", []):
            # An entry may name its own kind (a recovered run of unknown kind has entries of several).
            kind = KINDS.get(entry.get("kind") or item.get("kind", ""))
            if kind is None:
                ok = False  # written by a newer perfwatch? Kept, never dropped unseen.
                self.log.warning(
                    "scratch of %s: no kind %r here to clean %s with; kept", run_id, item.get("kind"), entry
                )
                continue
            try:
                kind.cleanup(self.adapter, self.io_factory, entry, self.log, opts)
            except Exception as exc:
                ok = False
                self.log.warning("cleanup of %s %s failed, will retry: %s", run_id, entry, exc)
        if ok and not keep_entry:
            self.store.drop_scratch(run_id)
        return ok

    def _adopt_recovered(self) -> None:
        """Run ids that a broken scratch record named: their scratch rebuilt from the naming rules (the
        run id is the prefix of all a run writes), into the registry, where the cleanup finds it."""
        opts = self.options()
        for run_id, kind_name in sorted(self.store.recovered_scratch.items()):
            kinds = [KINDS[kind_name]] if kind_name in KINDS else [k for k in KINDS.values() if k.writes]
            entries = []
            for kind in kinds:
                entries += [dict(e, kind=kind.name) for e in kind.recovered_entries(run_id, opts, self.adapter)]
            if entries:
                self.store.adopt_recovered(run_id, kind_name or kinds[0].name, entries)
            else:
                self.store.forget_recovered(run_id)

    def cleanup_orphans(self) -> List[str]:
        """Scratch of runs that are not running here (a previous mgr's, or a failed or unsettled cleanup):
        remove it. Whether a run is live is decided per run id at that moment, so a run started
        meanwhile never loses its objects."""
        cleaned = []
        self._adopt_recovered()
        for run_id in list(self.store.scratch):
            with self._lock:
                live = run_id in self.runs and self.runs[run_id].state == "running"
            if not live and self._cleanup_run(run_id):
                cleaned.append(run_id)
        return cleaned

    def cleanup_orphans_in_background(self) -> None:
        """What the serve loop calls: listing and removing scratch can block on an unhealthy cluster,
        so it runs in one thread of its own, never two at once, never in the serve loop."""
        with self._lock:
            if self._cleaner is not None and self._cleaner.is_alive():
                return
            self._cleaner = threading.Thread(target=self._clean_quietly, name="perfwatch-cleanup")
            self._cleaner.daemon = True
            self._cleaner.start()

    def _clean_quietly(self) -> None:
        try:
            self.cleanup_orphans()
        except Exception:
            self.log.exception("scratch cleanup failed; it is retried next interval")

    def reset_baselines(self, kind: Optional[str], osd: Optional[int]) -> List[str]:
        """Forget baselines (and regressions) of matching keys: after a deliberate change of hardware."""
        with self._state_lock:
            keys = set(self.store.baselines.history) | set(self.store.regressions) | set(self.store.streaks)
            chosen = sorted(
                k for k in keys
                if (kind is None or k.split("/")[0] == kind)
                and (osd is None or k.split("/")[2] == "osd.{}".format(osd))
            )  # fmt: skip
            self.store.baselines.forget(chosen)
            for key in chosen:
                self.store.regressions.pop(key, None)
                self.store.streaks.pop(key, None)
            self.store.save_baselines()
            self.store.save_regressions()
        return chosen

    # ----- schedule -----------------------------------------------------------------------------

    def tick(self, now: float) -> List[str]:
        """Start what is due; returns the run ids started."""
        opts = self.options()
        minute = time.localtime(now).tm_hour * 60 + time.localtime(now).tm_min
        started = []
        for kind, option in sorted(list(LIGHT_INTERVAL_OPTION.items()) + list(HEAVY_INTERVAL_OPTION.items())):
            window = opts["heavy_bench_window"] if kind in HEAVY_INTERVAL_OPTION else ""
            try:
                due = schedule.is_due(now, self.store.last_run.get(kind), float(opts[option]), minute, window)
            except ValueError as exc:  # a malformed window stops that kind only, not the light probes
                self.log.error("%s not scheduled: %s", kind, exc)
                continue
            if not due:
                continue
            try:
                started.append(self.start(kind, None, {}, trigger="schedule").run_id)
            except Refused as exc:
                self.log.debug("scheduled %s not started: %s", kind, exc)
                self.store.last_run[kind] = now  # try again one interval later, not every tick
            except Exception as exc:
                self.log.warning("scheduled %s failed to start: %s", kind, exc)
                self.store.last_run[kind] = now
        return started

    # ----- reports ------------------------------------------------------------------------------

    def schedule(self) -> List[Dict[str, Any]]:
        opts = self.options()
        rows = []
        for kind in sorted(KINDS):
            option = LIGHT_INTERVAL_OPTION.get(kind) or HEAVY_INTERVAL_OPTION.get(kind)
            rows.append(
                {
                    "kind": kind,
                    "heavy": kind in HEAVY_INTERVAL_OPTION,
                    "interval": float(opts[option]) if option else 0.0,
                    "interval_option": option,
                    "window": opts["heavy_bench_window"] if kind in HEAVY_INTERVAL_OPTION else "",
                    "last_run": self.store.last_run.get(kind),
                    "description": KINDS[kind].description,
                }
            )
        return rows

    def status(self) -> Dict[str, Any]:
        with self._lock:
            runs = sorted(self.runs.values(), key=lambda r: r.started_at)
        return {
            "running": [r.to_dict(with_results=False) for r in runs if r.state == "running"],
            "recent": [r.to_dict(with_results=False) for r in runs if r.state != "running"][-10:],
            "regressions": sorted(self.store.regressions),
            "scratch_pending_cleanup": sorted(self.store.scratch),
        }

    def history(self, kind: Optional[str], osd: Optional[int], limit: int) -> List[Dict[str, Any]]:
        kinds = [kind] if kind else sorted(KINDS)
        records = [r for k in kinds for r in self.store.history(k)]
        if osd is not None:
            records = [
                dict(r, results=[m for m in r["results"] if m.get("osd") == osd])
                for r in records
                if osd in r.get("osds", []) or any(m.get("osd") == osd for m in r.get("results", []))
            ]
        records.sort(key=lambda r: r.get("started_at", 0))
        return records[-limit:]
