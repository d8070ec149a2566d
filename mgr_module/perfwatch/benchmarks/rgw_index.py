"""`rgw`: bucket-index latency. Omap set/get/list/remove on a probe object in the bucket-index pool (in
a namespace of ours, beside RGW's own `.dir.*` shard objects), and read-only listing of real index shards."""

import os
import statistics
import urllib.parse
from typing import Any, Dict, List

from .base import BenchError, Benchmark, Context, ParamSpec
from .results import Measurement
from .s3 import S3Client, listed_keys
from .scratch import cleanup_prefixed

INDEX_SUFFIX = "buckets.index"
NAMESPACE = "perfwatch"
SHARD_PREFIX = ".dir."


class RgwIndex(Benchmark):
    name = "rgw"
    heavy = False
    description = "bucket-index (omap) latency: a probe object's omap ops, and listing of real index shards"
    params = (
        ParamSpec("keys", 16, 1, 1000, "omap keys written, read and removed on the probe object"),
        ParamSpec("shards", 4, 0, 64, "real index shards to list (read-only, 100 keys each)"),
    )

    def run(self, ctx: Context) -> List[Measurement]:
        pools = ctx.adapter.pool_names_ending(INDEX_SUFFIX)
        s3_configured = bool(ctx.options.get("rgw_s3_endpoint"))
        if not pools and not s3_configured:
            raise BenchError(
                "no bucket-index pool (*.{}): RGW has no bucket yet, and no S3 endpoint is configured "
                "(mgr/perfwatch/rgw_s3_endpoint)".format(INDEX_SUFFIX)
            )
        out: List[Measurement] = []
        for pool in pools:
            ctx.check()
            ctx.register_scratch({"pool": pool, "namespace": NAMESPACE, "prefix": ctx.run_id})
            out.extend(self._probe(ctx, pool))
        if s3_configured:
            ctx.check()
            out.extend(self._s3(ctx))
        return out

    def _s3(self, ctx: Context) -> List[Measurement]:
        """PUT, LIST and DELETE of a 4 KiB object named with the run id. Probe objects of other run ids that
        the LIST finds (left by a mgr that died mid-probe) are deleted too."""
        opts = ctx.options
        if not opts.get("rgw_s3_access_key") or not opts.get("rgw_s3_secret_key"):
            raise BenchError("rgw_s3_endpoint is set but rgw_s3_access_key or rgw_s3_secret_key is not")
        client = S3Client(opts["rgw_s3_endpoint"], opts["rgw_s3_access_key"], opts["rgw_s3_secret_key"],
                          opts["rgw_s3_region"], ctx.step_timeout(float(opts["request_timeout"])))  # fmt: skip
        bucket = "/" + urllib.parse.quote(str(opts["rgw_s3_bucket"]))
        client.request("PUT", bucket, ok=(200, 409))  # exists already: fine
        key = "{}/{}".format(bucket, urllib.parse.quote(ctx.run_id))
        _status, put, _ = client.request("PUT", key, body=os.urandom(4096))
        try:
            _status, listed, body = client.request("GET", bucket, query="list-type=2&prefix=" + self.name + "-")
            for leftover in listed_keys(body)[:20]:  # a few per probe; the next probe takes the rest
                ctx.check()
                if leftover != ctx.run_id:  # a probe object of a mgr that died mid-probe
                    client.request("DELETE", "{}/{}".format(bucket, urllib.parse.quote(leftover)), ok=(200, 204, 404))
                    ctx.log.info("removed leftover S3 probe object %s", leftover)
        finally:
            client.request("DELETE", key, ok=(200, 204, 404))
        return [
            Measurement(self.name, "s3_put_latency", None, put, "seconds"),
            Measurement(self.name, "s3_list_latency", None, listed, "seconds"),
        ]

    def _probe(self, ctx: Context, pool: str) -> List[Measurement]:
        io = ctx.io_factory(pool, NAMESPACE)
        obj = "{}.probe".format(ctx.run_id)
        keys = {"k{:05d}".format(i): b"v" * 64 for i in range(ctx.params["keys"])}
        timings: Dict[str, float] = {}
        try:
            timings["omap_set"] = io.omap_set(obj, keys, ctx.step_timeout(io.timeout))
            timings["omap_get"] = io.omap_get(obj, list(keys)[:8], ctx.step_timeout(io.timeout))
            timings["omap_list"] = io.omap_list(obj, 1000, ctx.step_timeout(io.timeout))
            timings["omap_remove"] = io.omap_remove(obj, list(keys), ctx.step_timeout(io.timeout))
            io.remove(obj, ctx.step_timeout(io.timeout))
        finally:
            io.close()
        out = [Measurement(self.name, op + "_latency", None, value, "seconds") for op, value in timings.items()]
        if ctx.params["shards"]:
            shard_io = ctx.io_factory(pool, "")
            try:
                shards = shard_io.list_objects(SHARD_PREFIX, ctx.params["shards"])
                lats = [shard_io.omap_list(shard, 100, ctx.step_timeout(shard_io.timeout)) for shard in shards]
            finally:
                shard_io.close()
            if lats:
                out.append(Measurement(self.name, "index_list_latency", None, statistics.mean(lats), "seconds"))
        return out

    def cleanup(self, adapter: Any, io_factory: Any, scratch: Dict[str, Any], log: Any) -> None:
        cleanup_prefixed(io_factory, scratch, log)
