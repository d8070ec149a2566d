"""`rbd`: 4 KiB random writes then reads on a small scratch image through librbd, at a fixed queue depth."""

import os
import random
from typing import Any, Dict, List

from ...ceph.capacity_view import CapacityView
from ..base import BenchError, Benchmark, Context, ParamSpec
from ..engine.qd_loop import run_at_queue_depth
from ..lifecycle.capacity import pool_osds, rbd_image_mib
from ..lifecycle.scratch_pool import IMAGE_PREFIX, ensure_pool, scratch_location
from ..measurement import Measurement

BLOCK = 4096
MIB = 1 << 20


def _image_name(run_id: str) -> str:
    return IMAGE_PREFIX + run_id


class RbdIO(Benchmark):
    name = "rbd"
    heavy = True
    writes = True
    scratch_pool = True
    description = "4 KiB random write then read IOPS and latency on a scratch RBD image"
    interval_option = "rbd_bench_interval"
    params = (
        ParamSpec("seconds", 5, 1, 120, "seconds of writes, then as many of reads"),
        ParamSpec("queue_depth", 16, 1, 64, "I/Os in flight"),
        ParamSpec("image_mib", 64, 16, 1024, "scratch image size in MiB"),
    )

    def scope(self, params: Dict[str, int], osds: List[int]) -> str:
        return "a {} MiB scratch image".format(params["image_mib"])

    def check_capacity(
        self, plan: List[Any], requested: Any, params: Dict[str, int], options: Dict[str, Any], view: CapacityView
    ) -> None:
        """Every block of the image may be written: image_mib must fit the scratch pool's budget."""
        explicit = self.explicit("image_mib", params, requested)
        rbd_image_mib(view, scratch_location(options)[0], params["image_mib"], explicit, self.params[2].low)

    def run(self, ctx: Context) -> List[Measurement]:
        import rbd

        ensure_pool(ctx.adapter, ctx.options, ctx.pool_creations, ctx.log)
        pool, ns = scratch_location(ctx.options)
        name = _image_name(ctx.run_id)
        ctx.register_scratch({"pool": pool, "namespace": ns, "image": name})
        ioctx = _open_namespace(ctx.adapter, pool, ns)
        try:
            explicit = self.explicit("image_mib", ctx.params, ctx.requested)  # capacity: refused or cut
            size = rbd_image_mib(ctx.check_capacity(self), pool, ctx.params["image_mib"], explicit, 16) * MIB
            _create(ioctx, pool, name, size)
            image = _open_without_cache(ioctx, pool, name)
            try:
                data = os.urandom(BLOCK)
                blocks = size // BLOCK
                seconds, depth = ctx.params["seconds"], ctx.params["queue_depth"]

                def write(_i: int, cb: Any) -> Any:
                    return image.aio_write(data, random.randrange(blocks) * BLOCK, cb)

                def read(_i: int, cb: Any) -> Any:
                    return image.aio_read(random.randrange(blocks) * BLOCK, BLOCK, cb)

                w = run_at_queue_depth(
                    ctx,
                    seconds,
                    depth,
                    write,
                    "rbd writes",
                    0.0,
                    recheck=ctx.space_recheck(lambda v: pool_osds(v, pool)),
                )
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

    def cleanup(
        self, adapter: Any, io_factory: Any, scratch: Dict[str, Any], log: Any, options: Dict[str, Any]
    ) -> None:
        import rbd

        # Entries written before images moved into the scratch namespace have none: the default one.
        ioctx = adapter.open_ioctx(scratch["pool"])
        try:
            ioctx.set_namespace(scratch.get("namespace", ""))
            rbd.RBD().remove(ioctx, scratch["image"])
            log.info("removed scratch image %s/%s", scratch["pool"], scratch["image"])
        except (rbd.ImageNotFound, rbd.ObjectNotFound):
            pass  # gone already, or its namespace never came to be
        finally:
            ioctx.close()

    def recovered_entries(self, run_id: str, options: Dict[str, Any], adapter: Any) -> List[Dict[str, Any]]:
        pool, ns = scratch_location(options)
        return [{"pool": pool, "namespace": ns, "image": _image_name(run_id)}]


# What the scratch image is made and opened with, whatever the mgr's or the pool's options say: only the
# layering feature (no journal in another pool, no object-map updates, no persistent write-back cache on the
# mgr's host), its data in the scratch pool itself (not rbd_default_data_pool's), and librbd's cache off
# through the image's conf_* metadata, which librbd applies over the process's and the pool's options: a
# cache acknowledges writes before the OSDs have them, and the round would measure it.
# Why: docs/decisions/rbd-scratch-image.md.
NO_CACHE_KEY, NO_CACHE_VALUE = "conf_rbd_cache", "false"
# QoS limits (from the mgr's or the pool's options) are left as the operator set them, but a round under
# one would measure the limit: it stops before its first write and says which.
QOS_LIMITS = (
    "rbd_qos_iops_limit",
    "rbd_qos_bps_limit",
    "rbd_qos_read_iops_limit",
    "rbd_qos_write_iops_limit",
    "rbd_qos_read_bps_limit",
    "rbd_qos_write_bps_limit",
)


def _create(ioctx: Any, pool: str, name: str, size: int) -> None:
    import rbd

    rbd.RBD().create(ioctx, name, size, old_format=False, features=rbd.RBD_FEATURE_LAYERING, data_pool=pool)


def _open_without_cache(ioctx: Any, pool: str, name: str) -> Any:
    """The scratch image, opened again once its metadata turns librbd's cache off; BenchError (the image
    closed) when a QoS limit applies to it."""
    import rbd

    image = rbd.Image(ioctx, name)
    try:
        image.metadata_set(NO_CACHE_KEY, NO_CACHE_VALUE)
    finally:
        image.close()
    image = rbd.Image(ioctx, name)
    try:
        limits = qos_limits(image.config_list()) if hasattr(image, "config_list") else {}
        if limits:
            raise BenchError(
                "a QoS limit applies to the scratch image ({}, from the mgr's or the pool's options): the round "
                "would measure the limit; {} lifts it for pool {} only".format(
                    ", ".join("{}={}".format(k, v) for k, v in sorted(limits.items())),
                    "; ".join("`rbd config pool set {} {} 0`".format(pool, k) for k in sorted(limits)),
                    pool,
                )
            )
    except BaseException:
        image.close()
        raise
    return image


def qos_limits(config: Any) -> Dict[str, str]:
    """The QoS limits set (not 0) among an image's options, as Image.config_list lists them."""
    out: Dict[str, str] = {}
    for option in config:
        name, value = option.get("name"), str(option.get("value", "")).strip()
        if name in QOS_LIMITS and value not in ("", "0"):
            out[str(name)] = value
    return out


def _open_namespace(adapter: Any, pool: str, namespace: str) -> Any:
    """An I/O context on the scratch namespace of the scratch pool, the RBD namespace created if missing:
    the image, and the rbd_directory and rbd_trash objects librbd keeps beside it, stay in it."""
    import rbd

    ioctx = adapter.open_ioctx(pool)
    try:
        if namespace and not rbd.RBD().namespace_exists(ioctx, namespace):
            rbd.RBD().namespace_create(ioctx, namespace)
        ioctx.set_namespace(namespace)
    except Exception:
        ioctx.close()
        raise
    return ioctx
