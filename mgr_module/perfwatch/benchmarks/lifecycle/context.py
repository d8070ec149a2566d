"""The Context a run's kind is handed: progress shown and saved as it comes, scratch registered in the
store, the run's deadline and cancel event, and the guard on the OSDs' client op latency."""

import contextlib
import time
from typing import Any, Callable, Dict, List, Optional

from ...ceph.seam import OsdInfo
from ..base import Context
from ..engine.probe_coverage import ProbeCoverage
from ..records.store import BenchStore
from ..run import Run
from . import guard

RUNNING_SAVE_SECONDS = 5.0  # a run in progress is saved (with its results so far) at most this often


def make_context(
    run: Run,
    plan: List[OsdInfo],
    opts: Dict[str, Any],
    adapter: Any,
    io_factory: Callable[[str, str], Any],
    store: BenchStore,
    progress_events: Any,
    log: Any,
    coverage: Optional[ProbeCoverage] = None,
) -> Context:
    """progress_events: .update(ev_id, msg, fraction), shown in `ceph -s` for heavy runs."""
    ev_id = "perfwatch-" + run.run_id
    sent = {"at": 0.0, "saved": time.monotonic()}
    shown = [""]

    def progress(fraction: float, message: str) -> None:
        run.progress = max(run.progress, min(1.0, fraction))
        now = time.monotonic()
        # A new step (other OSDs) is shown at once; the same step's fraction at most once a second.
        if run.heavy and (message != shown[0] or now - sent["at"] >= 1.0):
            sent["at"], shown[0] = now, message
            progress_events.update(ev_id, "perfwatch {} bench: {}".format(run.kind, message), run.progress)
        if now - sent["saved"] >= RUNNING_SAVE_SECONDS:
            sent["saved"] = now
            save_running(run, ctx, store, log)

    def register(entry: Dict[str, Any]) -> None:
        store.add_scratch(run.run_id, run.kind, entry)

    ctx = Context(
        run_id=run.run_id,
        adapter=adapter,
        io_factory=io_factory,
        params=run.params,
        osds=plan,
        per_host=int(opts["max_osds_per_host"]),
        deadline=time.monotonic() + float(opts["bench_deadline"]),
        cancel=run.cancel,
        progress=progress,
        options=opts,
        log=log,
        register_scratch=register,
        osd_latency_guard=latency_guard(adapter, [o.id for o in plan], float(opts["abort_client_latency_ms"]) / 1000),
        pool_creations=store,
        requested=run.requested,
        coverage=coverage,
        targeted=run.targeted,
    )
    return ctx


def save_running(run: Run, ctx: Context, store: BenchStore, log: Any) -> None:
    """The run in progress, with what it has measured so far, for the history if its mgr dies."""
    record = run.to_dict()
    record["results"] = [m.to_dict() for m in list(ctx.measured)]
    record["updated_at"] = round(time.time(), 3)
    try:
        store.save_running(record)
    except Exception as exc:  # bookkeeping never stops a run
        log.debug("saving %s in progress failed: %s", run.run_id, exc)


def latency_guard(adapter: Any, osds: List[int], threshold: float) -> Callable[[List[int]], Optional[str]]:
    """Compares each OSD's client op latency now with the previous reading (the first at run start)."""
    last: Dict[int, Dict[str, float]] = {}
    for osd in osds:
        # An OSD that cannot be read has no reading; the bench itself will fail on it.
        with contextlib.suppress(Exception):
            last[osd] = adapter.osd_op_latency(osd)

    def check(batch: List[int]) -> Optional[str]:
        for osd in batch:
            try:
                now = adapter.osd_op_latency(osd)
            except Exception:
                continue
            before = last.get(osd)
            last[osd] = now
            if before and guard.client_latency_too_high(before, now, threshold):
                return "client op latency on osd.{} rose above {:.0f} ms".format(osd, threshold * 1000)
        return None

    return check
