"""`rbd`: 4 KiB random writes then reads on a small scratch image through librbd, at a fixed queue depth."""

import os
import random
from typing import Any, Dict, List

from .base import Benchmark, Context, ParamSpec
from .qd_loop import run_at_queue_depth
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
                seconds, depth = ctx.params["seconds"], ctx.params["queue_depth"]

                def write(_i: int, cb: Any) -> Any:
                    return image.aio_write(data, random.randrange(blocks) * BLOCK, cb)

                def read(_i: int, cb: Any) -> Any:
                    return image.aio_read(random.randrange(blocks) * BLOCK, BLOCK, cb)

                w = run_at_queue_depth(ctx, seconds, depth, write, "rbd writes", 0.0)
                r = run_at_queue_depth(ctx, seconds, depth, read, "rbd reads", 0.5)
            finally:
                image.close()
            rbd.RBD().remove(ioctx, name)
        finally:
            ioctx.close()
        out = []
        for result, op in ((w, "write"), (r, "read")):
            out.append(Measurement(self.name, op + "_iops_4k", None, result.ops_per_second, "iops"))
            out.append(Measurement(self.name, op + "_latency_mean", None, result.mean_latency, "seconds"))
        return out

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
