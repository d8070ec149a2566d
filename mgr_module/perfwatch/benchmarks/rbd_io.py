"""`rbd`: 4 KiB random writes then reads on a small scratch image through librbd, at a fixed queue depth."""

import os
import random
import threading
import time
from typing import Any, Dict, List, Tuple

from .base import BenchError, Benchmark, Context, ParamSpec
from .results import Measurement
from .scratch import ensure_pool, scratch_location

BLOCK = 4096
MIB = 1 << 20


def _image_name(run_id: str) -> str:
    return "perfwatch.{}".format(run_id)


class RbdIO(Benchmark):
    name = "rbd"
    heavy = True
    description = "4 KiB random write then read IOPS and latency on a scratch RBD image"
    params = (
        ParamSpec("seconds", 5, 1, 120, "seconds of writes, then as many of reads"),
        ParamSpec("queue_depth", 16, 1, 64, "I/Os in flight"),
        ParamSpec("image_mib", 64, 16, 1024, "scratch image size in MiB"),
    )

    def is_heavy(self, params: Dict[str, int]) -> bool:
        return True

    def run(self, ctx: Context) -> List[Measurement]:
        import rbd

        ensure_pool(ctx.adapter, ctx.options)
        pool, _ns = scratch_location(ctx.options)
        name = _image_name(ctx.run_id)
        ctx.register_scratch({"pool": pool, "image": name})
        ioctx = ctx.adapter.open_ioctx(pool)
        try:
            size = ctx.params["image_mib"] * MIB
            rbd.RBD().create(ioctx, name, size)
            image = rbd.Image(ioctx, name)
            try:
                data = os.urandom(BLOCK)
                blocks = size // BLOCK
                w = self._timed(
                    ctx, lambda cb: image.aio_write(data, random.randrange(blocks) * BLOCK, cb), "writes", 0
                )
                r = self._timed(
                    ctx, lambda cb: image.aio_read(random.randrange(blocks) * BLOCK, BLOCK, cb), "reads", 0.5
                )
            finally:
                image.close()
            rbd.RBD().remove(ioctx, name)
        finally:
            ioctx.close()
        out = []
        for (count, elapsed, latency), op in ((w, "write"), (r, "read")):
            out.append(Measurement(self.name, op + "_iops_4k", None, count / elapsed, "iops"))
            out.append(Measurement(self.name, op + "_latency_mean", None, latency, "seconds"))
        return out

    def _timed(self, ctx: Context, submit: Any, what: str, base: float) -> Tuple[int, float, float]:
        depth, seconds = ctx.params["queue_depth"], ctx.params["seconds"]
        slots = threading.Semaphore(depth)
        lock = threading.Lock()
        total = [0, 0.0, 0]  # completed, latency sum, failures
        keep: List[Any] = []

        def make_done(started: float) -> Any:
            def done(completion: Any, *_: Any) -> None:
                with lock:
                    if completion.get_return_value() < 0:
                        total[2] += 1
                    else:
                        total[0] += 1
                        total[1] += time.monotonic() - started
                slots.release()

            return done

        t0 = time.monotonic()
        try:
            i = 0
            while time.monotonic() < t0 + seconds:
                ctx.check()
                if not slots.acquire(timeout=ctx.step_timeout(10)):
                    raise BenchError("rbd {}: no completion in 10 s".format(what))
                keep.append(submit(make_done(time.monotonic())))
                i += 1
                if i % 64 == 0:
                    ctx.progress(base + 0.5 * min(1.0, (time.monotonic() - t0) / seconds), "rbd " + what)
        finally:
            for _ in range(depth):
                if not slots.acquire(timeout=30):
                    break
        if total[2]:
            raise BenchError("rbd {}: {} I/Os failed".format(what, total[2]))
        count = int(total[0])
        return count, time.monotonic() - t0, total[1] / max(1, count)

    def cleanup(self, adapter: Any, io_factory: Any, scratch: Dict[str, Any], log: Any) -> None:
        import rbd

        ioctx = adapter.open_ioctx(scratch["pool"])
        try:
            rbd.RBD().remove(ioctx, scratch["image"])
            log.info("removed scratch image %s/%s", scratch["pool"], scratch["image"])
        except rbd.ImageNotFound:
            pass
        finally:
            ioctx.close()
