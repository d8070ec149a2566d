"""`rados`: 4 KiB object write and read latency through the network, per OSD.

Without `seconds` it is a light probe: for each up OSD, an object that OSD is primary of is written,
read and removed, at most one op per second per OSD. With `seconds` it is a heavy round: 4 KiB writes of
new objects at `queue_depth` for that long, then reads of them, like `rados bench`, then removal.
"""

import os
import time
from typing import Any, Dict, List

from ...ceph.capacity_view import CapacityView
from ..base import BenchError, Benchmark, Context, ParamSpec
from ..engine.commit_evidence import BUDGET_SECONDS, MAX_OSDS, commit_summary, read_all, window_latency
from ..engine.placement import names_per_primary, pg_of
from ..engine.probe_phases import ProbePhases
from ..engine.qd_loop import run_at_queue_depth
from ..engine.rados_io import RadosIO
from ..lifecycle.capacity import check_nearfull, pool_osds, rados_max_objects
from ..lifecycle.scratch_pgs import SPLIT_WAIT_SECONDS, grow, wait_settled
from ..lifecycle.scratch_pool import cleanup_prefixed, ensure_pool, scratch_location
from ..measurement import Measurement

BLOCK = 4096
# Objects a pool may hold and still count as empty for a split: librbd's rbd_directory, rbd_info, rbd_trash
# and the like stay after the rbd kind removed its images (omap, no data to move).
LEFTOVER_OBJECTS = 64


class RadosLatency(Benchmark):
    name = "rados"
    writes = True
    scratch_pool = True
    description = "4 KiB object write/read latency per OSD (probe), or a timed round at a queue depth"
    interval_option = "rados_probe_interval"
    params = (
        ParamSpec("seconds", 0, 0, 300, "0: the light per-OSD probe; else a round of writes then reads this long"),
        ParamSpec("queue_depth", 16, 1, 64, "operations in flight during a round"),
    )

    def is_heavy(self, params: Dict[str, int]) -> bool:
        return params.get("seconds", 0) > 0

    def scope(self, params: Dict[str, int], osds: List[int]) -> str:
        if self.is_heavy(params):
            return "the scratch pool, {} s at queue depth {}".format(params["seconds"], params["queue_depth"])
        return super().scope(params, osds)

    def check_capacity(
        self, plan: List[Any], requested: Any, params: Dict[str, int], options: Dict[str, Any], view: CapacityView
    ) -> None:
        """A round writes new 4 KiB objects until the pool's budget; a probe one per OSD, removed at once."""
        if params.get("seconds", 0) > 0:
            rados_max_objects(view, scratch_location(options)[0])
        else:
            check_nearfull(view, [o.id for o in plan if o.up], BLOCK, "rados probe")

    def run(self, ctx: Context) -> List[Measurement]:
        pool_id, pg_num = ensure_pool(ctx.adapter, ctx.options, ctx.pool_creations, ctx.log)
        ctx.check_capacity(self)  # before anything is written
        pool, ns = scratch_location(ctx.options)
        ctx.register_scratch({"pool": pool, "namespace": ns, "prefix": ctx.run_id})
        io = ctx.io_factory(pool, ns)
        try:
            if ctx.params["seconds"] > 0:
                return self._round(ctx, io)
            waiting = min(SPLIT_WAIT_SECONDS, max(0.0, ctx.remaining() / 4))
            if wait_settled(ctx.adapter, pool, waiting, check=ctx.check):
                pool_id, pg_num = ctx.adapter.pool(pool) or (pool_id, pg_num)  # the count it settled at
            return self._probe(ctx, io, pool_id, pg_num, ns)
        finally:
            io.close()

    def _probe(self, ctx: Context, io: RadosIO, pool_id: int, pg_num: int, ns: str) -> List[Measurement]:
        """Up to rados_probe_osds_per_round reachable OSDs, those measured longest ago first (ctx.coverage):
        each gets an object it is acting primary of, written, read and removed, at most one op per second
        on each OSD and max_requests_in_flight ops in flight."""
        up = [o.id for o in ctx.osds if o.up]
        primaries = ctx.adapter.pg_primaries(pool_id)
        if not primaries:
            raise BenchError(
                "the mgr holds no PG stats of scratch pool {} yet (just created, or this mgr became active "
                "moments ago): the next probe will have them".format(ctx.options["scratch_pool"])
            )
        if hasattr(ctx.adapter, "acting_primaries"):  # the stats lag the map (seconds; more while it splits)
            primaries = ctx.adapter.acting_primaries(pool_id, sorted(pg for pg in primaries if pg < pg_num))
        per_round = int(ctx.options.get("rados_probe_osds_per_round", len(up) or 1))
        interval = float(ctx.options.get("rados_probe_interval", 0))
        whole = not ctx.targeted  # a run on some OSDs chooses among them, and leaves the cluster's view as is
        chosen = ctx.coverage.choose(up, set(primaries.values()), per_round, interval, time.time(), whole)
        names = names_per_primary(chosen, primaries, pg_num, ns, ctx.run_id)
        acting = ctx.adapter.pg_acting(pool_id) if hasattr(ctx.adapter, "pg_acting") else {}
        for probed, obj in names.items():
            members = acting.get(pg_of(obj, ns, pg_num)) if obj is not None else None
            if members:
                ctx.acting[probed] = members
        unreachable = len(set(up) - set(primaries.values()))
        if unreachable:
            ctx.log.info("rados probe: %d up OSDs are the acting primary of no scratch PG: not probed", unreachable)
        todo = [(osd, name) for osd, name in sorted(names.items()) if name is not None]
        if not todo:
            raise BenchError("no up OSD is the acting primary of a scratch PG (PGs peering or remapped?)")
        workers = max(1, int(ctx.options["max_requests_in_flight"]))
        members = {m for probed, _ in todo for m in ctx.acting.get(probed, [probed])}
        commits_before = self._commit_readings(ctx, members, workers)
        data = os.urandom(BLOCK)
        phases = ProbePhases(ctx, workers)
        writes = phases.run("write", todo, lambda name: io.write_full(name, data, ctx.step_timeout(io.timeout)))
        if commits_before:  # the window holds the writes' commits alone: the removes' would dilute them
            self._commit_window(ctx, members, workers, commits_before)
        written = [(osd, name) for osd, name in todo if osd in writes]
        reads = phases.run("read", written, lambda name: io.read(name, BLOCK, ctx.step_timeout(io.timeout)))
        removed = phases.run("remove", written, lambda name: io.remove(name, ctx.step_timeout(io.timeout)))
        ctx.scratch_removed = not ctx.unsettled and len(removed) == len(written)  # a failed write made no object
        results = [Measurement(self.name, "write_latency", osd, writes[osd], "seconds") for osd, _ in written]
        results += [Measurement(self.name, "read_latency", osd, reads[osd], "seconds") for osd, _ in written
                    if osd in reads]  # fmt: skip
        if phases.errors and not results:
            raise BenchError("; ".join(phases.errors))
        for error in phases.errors:
            ctx.log.warning("rados probe: %s", error)
        ctx.coverage.measured({m.osd for m in results if m.osd is not None}, time.time())
        grow(ctx.adapter, ctx.options["scratch_pool"], ctx.options, ctx.log, pool_id,  # for the next rounds
             scratch_busy=ctx.scratch_busy, max_objects=len(todo) + LEFTOVER_OBJECTS)  # fmt: skip
        return results

    @classmethod
    def _commit_window(cls, ctx: Context, members: Any, workers: int, before: Dict[int, Any]) -> None:
        """ctx.commit_latency: each member's mean commit latency since `before`, said in the log with the
        members it could not read (what a run that names no slow member despite slow writes needs)."""
        after = cls._commit_readings(ctx, members, workers)
        ctx.commit_latency = window_latency(before, after)
        ctx.log.info("rados probe %s: commit latency during its writes: %s", ctx.run_id,
                     commit_summary(ctx.commit_latency))  # fmt: skip
        unread = sorted(members - set(ctx.commit_latency))
        if unread:
            unread_names = ", ".join("osd.{}".format(o) for o in unread)
            ctx.log.info("rados probe %s: no commit latency of %s (before: %d, after: %d read)",
                         ctx.run_id, unread_names, len(before), len(after))  # fmt: skip

    @staticmethod
    def _commit_readings(ctx: Context, osds: Any, workers: int) -> Dict[int, Any]:
        """Each OSD's BlueStore commit counter now (commit_evidence.py); {} where the adapter cannot."""
        reader = getattr(ctx.adapter, "osd_commit_latency", None)
        if reader is None:
            return {}
        if len(osds) > MAX_OSDS:
            ctx.log.info("rados probe: %d OSDs in the probed acting sets, more than %d: no commit evidence read",
                         len(osds), MAX_OSDS)  # fmt: skip
            return {}
        return read_all(reader, osds, workers, min(BUDGET_SECONDS, max(0.0, ctx.remaining() / 4)))

    def _round(self, ctx: Context, io: RadosIO) -> List[Measurement]:
        seconds, depth = ctx.params["seconds"], ctx.params["queue_depth"]
        data = os.urandom(BLOCK)

        def write(i: int, cb: Any) -> Any:
            return io.ioctx.aio_write_full("{}.{}".format(ctx.run_id, i), data, oncomplete=cb)

        pool = scratch_location(ctx.options)[0]
        budget = rados_max_objects(ctx.capacity_view(), pool)  # new objects: stop writing at the budget
        recheck = ctx.space_recheck(lambda v: pool_osds(v, pool))
        w = run_at_queue_depth(ctx, seconds, depth, write, "rados writes", 0.0, max_ops=budget, recheck=recheck)
        if w.limited:
            ctx.log.info("%s: write phase ended at the free-space budget, %d objects written", ctx.run_id, w.submitted)
        out = [
            Measurement(self.name, "write_iops_4k", None, w.ops_per_second, "iops"),
            Measurement(self.name, "write_latency_mean", None, w.mean_latency, "seconds"),
        ]
        if w.completed:

            def read(i: int, cb: Any) -> Any:
                return io.ioctx.aio_read("{}.{}".format(ctx.run_id, i % w.completed), BLOCK, 0, cb)

            r = run_at_queue_depth(ctx, seconds, depth, read, "rados reads", 0.5)
            out.append(Measurement(self.name, "read_iops_4k", None, r.ops_per_second, "iops"))
            out.append(Measurement(self.name, "read_latency_mean", None, r.mean_latency, "seconds"))
        return out

    def cleanup(
        self, adapter: Any, io_factory: Any, scratch: Dict[str, Any], log: Any, options: Dict[str, Any]
    ) -> None:
        cleanup_prefixed(io_factory, scratch, log)

    def recovered_entries(self, run_id: str, options: Dict[str, Any], adapter: Any) -> List[Dict[str, Any]]:
        pool, ns = scratch_location(options)
        return [{"pool": pool, "namespace": ns, "prefix": run_id}]
