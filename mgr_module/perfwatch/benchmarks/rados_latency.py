"""`rados`: 4 KiB object write and read latency through the network, per OSD.

Without `seconds` it is a light probe: for each up OSD, an object that OSD is primary of is written,
read and removed, at most one op per second per OSD. With `seconds` it is a heavy round: 4 KiB writes of
new objects at `queue_depth` for that long, then reads of them, like `rados bench`, then removal.
"""

import os
import threading
import time
from typing import Any, Dict, List

from .base import BenchError, Benchmark, Context, ParamSpec
from .placement import names_per_primary
from .radosio import RadosIO
from .results import Measurement
from .scratch import ensure_pool, remove_objects_with_prefix, scratch_location

BLOCK = 4096


class RadosLatency(Benchmark):
    name = "rados"
    description = "4 KiB object write/read latency per OSD (probe), or a timed round at a queue depth"
    params = (
        ParamSpec("seconds", 0, 0, 300, "0: the light per-OSD probe; else a round of writes then reads this long"),
        ParamSpec("queue_depth", 16, 1, 64, "operations in flight during a round"),
    )

    def is_heavy(self, params: Dict[str, int]) -> bool:
        return params.get("seconds", 0) > 0

    def run(self, ctx: Context) -> List[Measurement]:
        pool_id, pg_num = ensure_pool(ctx.adapter, ctx.options)
        pool, ns = scratch_location(ctx.options)
        ctx.register_scratch({"pool": pool, "namespace": ns, "prefix": ctx.run_id})
        io = ctx.io_factory(pool, ns)
        try:
            if ctx.params["seconds"] > 0:
                return self._round(ctx, io)
            return self._probe(ctx, io, pool_id, pg_num, ns)
        finally:
            io.close()

    def _probe(self, ctx: Context, io: RadosIO, pool_id: int, pg_num: int, ns: str) -> List[Measurement]:
        up = [o.id for o in ctx.osds if o.up]
        names = names_per_primary(up, ctx.adapter.pg_primaries(pool_id), pg_num, ns, ctx.run_id)
        data = os.urandom(BLOCK)
        results: List[Measurement] = []
        lock = threading.Lock()
        missing = [osd for osd, name in names.items() if name is None]
        if missing:
            ctx.log.info("no scratch PG has %s as primary; not probed", ", ".join("osd.{}".format(o) for o in missing))

        def probe(osd: int, name: str) -> None:
            t0 = time.monotonic()
            write = io.write_full(name, data, ctx.step_timeout(io.timeout))
            time.sleep(max(0.0, 1.0 - (time.monotonic() - t0)))  # at most one op per second per OSD
            t1 = time.monotonic()
            read = io.read(name, BLOCK, ctx.step_timeout(io.timeout))
            time.sleep(max(0.0, 1.0 - (time.monotonic() - t1)))
            io.remove(name, ctx.step_timeout(io.timeout))
            with lock:
                results.append(Measurement(self.name, "write_latency", osd, write, "seconds"))
                results.append(Measurement(self.name, "read_latency", osd, read, "seconds"))

        workers = max(1, int(ctx.options["max_requests_in_flight"]))
        todo = [(osd, name) for osd, name in sorted(names.items()) if name is not None]
        errors: List[str] = []
        for start in range(0, len(todo), workers):
            ctx.check()
            threads = []
            for osd, name in todo[start : start + workers]:

                def guarded(osd: int = osd, name: str = name) -> None:
                    try:
                        probe(osd, name)
                    except BenchError as exc:
                        errors.append("osd.{}: {}".format(osd, exc))

                thread = threading.Thread(target=guarded, daemon=True)
                thread.start()
                threads.append(thread)
            for thread in threads:
                thread.join(timeout=max(1.0, ctx.remaining()))
            ctx.progress(min(1.0, (start + workers) / max(1, len(todo))), "rados probe")
        if not todo:
            raise BenchError("no OSD is primary of a scratch PG yet (a new scratch pool is still creating its PGs)")
        if errors and not results:
            raise BenchError("; ".join(errors))
        for error in errors:
            ctx.log.warning("rados probe: %s", error)
        return results

    def _round(self, ctx: Context, io: RadosIO) -> List[Measurement]:
        seconds, depth = ctx.params["seconds"], ctx.params["queue_depth"]
        data = os.urandom(BLOCK)
        written = self._timed_ops(
            ctx,
            seconds,
            depth,
            lambda i, cb: io.ioctx.aio_write_full("{}.{}".format(ctx.run_id, i), data, oncomplete=cb),
            "writes",
            0.0,
        )
        count, elapsed, latencies = written
        out = [
            Measurement(self.name, "write_iops_4k", None, count / elapsed, "iops"),
            Measurement(self.name, "write_latency_mean", None, sum(latencies) / max(1, len(latencies)), "seconds"),
        ]
        if count:
            reads = self._timed_ops(
                ctx,
                seconds,
                depth,
                lambda i, cb: io.ioctx.aio_read("{}.{}".format(ctx.run_id, i % count), BLOCK, 0, cb),
                "reads",
                0.5,
            )
            rcount, relapsed, rlat = reads
            out.append(Measurement(self.name, "read_iops_4k", None, rcount / relapsed, "iops"))
            out.append(Measurement(self.name, "read_latency_mean", None, sum(rlat) / max(1, len(rlat)), "seconds"))
        return out

    def _timed_ops(self, ctx: Context, seconds: int, depth: int, submit: Any, what: str, base: float) -> Any:
        """Keep `depth` ops in flight for `seconds`; returns (completed, elapsed, latencies).

        Whatever stops the loop (the end, cancel, the deadline), the ops in flight are waited for before
        returning or raising, so none is left running behind the cleanup.
        """
        slots = threading.Semaphore(depth)
        lock = threading.Lock()
        latencies: List[float] = []
        failures: List[int] = []
        keep: List[Any] = []  # completions stay referenced until they fire

        def make_done(started: float) -> Any:
            def done(completion: Any, *_: Any) -> None:
                with lock:
                    rv = completion.get_return_value()
                    if rv < 0:
                        failures.append(rv)
                    else:
                        latencies.append(time.monotonic() - started)
                slots.release()

            return done

        t0 = time.monotonic()
        end = t0 + seconds
        i = 0
        try:
            while time.monotonic() < end:
                ctx.check()
                if not slots.acquire(timeout=ctx.step_timeout(10)):
                    raise BenchError("{}: no completion in 10 s".format(what))
                keep.append(submit(i, make_done(time.monotonic())))
                i += 1
                if i % 64 == 0:
                    ctx.progress(base + 0.5 * min(1.0, (time.monotonic() - t0) / seconds), "rados " + what)
        finally:
            for _ in range(depth):
                if not slots.acquire(timeout=30):
                    ctx.log.warning("rados %s: ops still in flight 30 s after the round", what)
                    break
        elapsed = time.monotonic() - t0
        if failures:
            raise BenchError("{}: {} ops failed (first error {})".format(what, len(failures), failures[0]))
        return len(latencies), elapsed, latencies

    def cleanup(self, adapter: Any, io_factory: Any, scratch: Dict[str, Any], log: Any) -> None:
        io = io_factory(scratch["pool"], scratch["namespace"])
        try:
            remove_objects_with_prefix(io, scratch["prefix"], log)
        finally:
            io.close()
