"""`rgw`: bucket-index latency. Omap set/get/list/remove on a probe object in the bucket-index pool (in
a namespace of ours, beside RGW's own `.dir.*` shard objects), and read-only listing of real index shards."""

import os
import statistics
import urllib.parse
from typing import Any, Dict, List, Optional

from ...ceph.capacity_view import CapacityView
from ..base import BenchError, Benchmark, Context, ParamSpec
from ..engine.s3_client import S3Client, listed_keys
from ..lifecycle.capacity import check_nearfull, pool_osds
from ..lifecycle.scratch_pool import S3_KEY_PREFIX, cleanup_prefixed
from ..measurement import Measurement

INDEX_SUFFIX = "buckets.index"
SHARD_PREFIX = ".dir."


class RgwIndex(Benchmark):
    name = "rgw"
    heavy = False
    writes = True
    description = "bucket-index (omap) latency: a probe object's omap ops, and listing of real index shards"
    interval_option = "rgw_probe_interval"
    params = (
        ParamSpec("keys", 16, 1, 1000, "omap keys written, read and removed on the probe object"),
        ParamSpec("shards", 4, 0, 64, "real index shards to list (read-only, 100 keys each)"),
    )

    def scope(self, params: Dict[str, int], osds: List[int]) -> str:
        return "the bucket index"

    def run(self, ctx: Context) -> List[Measurement]:
        pools = index_pools(ctx.adapter)
        s3_configured = bool(ctx.options.get("rgw_s3_endpoint"))
        if not pools and not s3_configured:
            raise BenchError(
                "no bucket-index pool (*.{}): RGW has no bucket yet, and no S3 endpoint is configured "
                "(mgr/perfwatch/rgw_s3_endpoint)".format(INDEX_SUFFIX)
            )
        ctx.check_capacity(self)  # a few KiB, but never into an OSD past the nearfull margin
        out: List[Measurement] = []
        for pool in pools:
            ctx.check()
            ctx.register_scratch(
                {"pool": pool, "namespace": str(ctx.options["scratch_namespace"]), "prefix": ctx.run_id}
            )
            out.extend(self._probe(ctx, pool))
        if s3_configured:
            ctx.check()
            out.extend(self._s3(ctx))
        return out

    def check_capacity(
        self, plan: List[Any], requested: Any, params: Dict[str, int], options: Dict[str, Any], view: CapacityView
    ) -> None:
        osds = [o for name in view.pools if name.endswith(INDEX_SUFFIX) for o in pool_osds(view, name)]
        if options.get("rgw_s3_endpoint"):
            osds = sorted(view.osds)  # the S3 object lands in a data pool of RGW's choosing
        check_nearfull(view, osds, params["keys"] * 128 + 4096, "rgw probe")

    def _s3(self, ctx: Context) -> List[Measurement]:
        """PUT, LIST and DELETE of one 4 KiB object named with the run id, in a bucket perfwatch owns.
        The object is registered as scratch before it is written; nothing else is ever deleted."""
        opts = ctx.options
        if not opts.get("rgw_s3_access_key") or not opts.get("rgw_s3_secret_key"):
            raise BenchError("rgw_s3_endpoint is set but rgw_s3_access_key or rgw_s3_secret_key is not")
        client = _client(opts, ctx.step_timeout(float(opts["request_timeout"])))
        bucket_name = str(opts["rgw_s3_bucket"])
        bucket = "/" + urllib.parse.quote(bucket_name)
        claim_bucket(client, bucket_name)
        key = s3_key(ctx.run_id)
        path = "{}/{}".format(bucket, urllib.parse.quote(key))
        ctx.register_scratch({"s3_bucket": bucket_name, "s3_key": key})
        _status, put, _ = client.request("PUT", path, body=os.urandom(4096))
        try:
            query = "list-type=2&prefix=" + urllib.parse.quote(key, safe="")
            _status, listed, _body = client.request("GET", bucket, query=query)
        finally:
            client.request("DELETE", path, ok=(200, 204, 404))
        return [
            Measurement(self.name, "s3_put_latency", None, put, "seconds"),
            Measurement(self.name, "s3_list_latency", None, listed, "seconds"),
        ]

    def _probe(self, ctx: Context, pool: str) -> List[Measurement]:
        io = ctx.io_factory(pool, str(ctx.options["scratch_namespace"]))
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

    def cleanup(
        self, adapter: Any, io_factory: Any, scratch: Dict[str, Any], log: Any, options: Dict[str, Any]
    ) -> None:
        if "s3_key" in scratch:
            self._cleanup_s3(scratch, log, options)
        else:
            cleanup_prefixed(io_factory, scratch, log)

    def _cleanup_s3(self, scratch: Dict[str, Any], log: Any, opts: Dict[str, Any]) -> None:
        """Delete the one S3 object the entry names (a probe's, registered before it was written)."""
        if not opts.get("rgw_s3_endpoint") or not opts.get("rgw_s3_secret_key"):
            raise BenchError(
                "S3 probe object {} awaits cleanup, but no S3 endpoint or key is set".format(scratch["s3_key"])
            )
        client = _client(opts, float(opts["request_timeout"]))
        path = "/{}/{}".format(urllib.parse.quote(scratch["s3_bucket"]), urllib.parse.quote(scratch["s3_key"]))
        client.request("DELETE", path, ok=(200, 204, 404))
        log.info("removed S3 probe object %s/%s", scratch["s3_bucket"], scratch["s3_key"])

    def recovered_entries(self, run_id: str, options: Dict[str, Any], adapter: Any) -> List[Dict[str, Any]]:
        ns = str(options["scratch_namespace"])
        out = [{"pool": pool, "namespace": ns, "prefix": run_id} for pool in index_pools(adapter)]
        if options.get("rgw_s3_endpoint"):
            out.append({"s3_bucket": str(options["rgw_s3_bucket"]), "s3_key": s3_key(run_id)})
        return out


def index_pools(adapter: Any) -> List[str]:
    """RGW's bucket-index pools: named *.buckets.index *and* tagged with the rgw application (a pool of
    another application that happens to be named so is not RGW's, and is never written to)."""
    return [p for p in adapter.pool_names_ending(INDEX_SUFFIX) if "rgw" in (adapter.pool_applications(p) or {})]


OWNER_TAG = ("perfwatch", "probe-bucket")  # the tag perfwatch puts on a bucket it created or adopted empty


def s3_key(run_id: str) -> str:
    return S3_KEY_PREFIX + run_id


def _client(opts: Dict[str, Any], timeout: float) -> S3Client:
    return S3Client(opts["rgw_s3_endpoint"], opts["rgw_s3_access_key"], opts["rgw_s3_secret_key"],
                    opts["rgw_s3_region"], timeout)  # fmt: skip


def tagging_xml() -> bytes:
    key, value = OWNER_TAG
    return (
        '<Tagging xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><TagSet><Tag><Key>{}</Key><Value>{}</Value>'
        "</Tag></TagSet></Tagging>".format(key, value)
    ).encode("utf-8")


def has_owner_tag(body: bytes) -> bool:
    import xml.etree.ElementTree as ET

    tags = {}
    for tag in ET.fromstring(body).iter():
        if tag.tag.endswith("Tag"):
            key = next((c.text for c in tag if c.tag.endswith("Key")), None)
            value = next((c.text for c in tag if c.tag.endswith("Value")), None)
            tags[key] = value
    return tags.get(OWNER_TAG[0]) == OWNER_TAG[1]


def owner_id(body: bytes) -> Optional[str]:
    """The <Owner><ID> of a ListAllMyBuckets or an ACL answer."""
    import xml.etree.ElementTree as ET

    for el in ET.fromstring(body).iter():
        if el.tag.endswith("Owner"):
            return next((c.text for c in el if c.tag.endswith("ID")), None)
    return None


def claim_bucket(client: S3Client, name: str) -> None:
    """Make sure the probe bucket is perfwatch's: missing (then created and tagged), or owned by the
    probe's own user and either tagged as ours (we created it, or adopted it empty) or empty and untagged
    (then tagged). A bucket of another user (even one that granted us access), holding anything, or
    carrying tags of its own, is refused, and nothing in it is touched. (Creating a bucket one already
    owns answers 200, as S3 does in us-east-1: the PUT's status cannot tell "created" from "was there".)"""
    bucket = "/" + urllib.parse.quote(name)
    list_status, _t, listing = client.request("GET", bucket, query="list-type=2&max-keys=3", ok=(200, 404))
    if list_status == 404:  # no such bucket: ours to create
        client.request("PUT", bucket)
        client.request("PUT", bucket, body=tagging_xml(), query="tagging", content_type="application/xml")
        return
    _s, _t, mine = client.request("GET", "/")
    _s, _t, acl = client.request("GET", bucket, query="acl")
    me, owner = owner_id(mine), owner_id(acl)
    if me is None or owner != me:
        raise BenchError(
            "S3 bucket {!r} belongs to user {!r}, not to the probe's user {!r}: perfwatch probes only a bucket "
            "of its own; set mgr/perfwatch/rgw_s3_bucket to a new bucket name".format(name, owner, me)
        )
    tag_status, _t, tags = client.request("GET", bucket, query="tagging", ok=(200, 404))
    if tag_status == 200 and tags and has_owner_tag(tags):
        return
    found = listed_keys(listing)
    if found:
        raise BenchError(
            "S3 bucket {!r} holds objects perfwatch did not write (e.g. {}): perfwatch probes only a bucket "
            "it created or an empty one; set mgr/perfwatch/rgw_s3_bucket to a new bucket name".format(
                name, ", ".join(repr(k) for k in found[:3])
            )
        )
    if tag_status == 200:
        raise BenchError(
            "S3 bucket {!r} carries tags that are not perfwatch's: perfwatch probes only a bucket it created "
            "or an empty, untagged one; set mgr/perfwatch/rgw_s3_bucket to a new bucket name".format(name)
        )
    client.request("PUT", bucket, body=tagging_xml(), query="tagging", content_type="application/xml")
