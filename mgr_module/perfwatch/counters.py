"""The one table of Ceph counters we export, and the code that reads them out of a daemon's dumps.

Every entry names the logger, the counter's spellings (newest release first) and what kind of value
it is. The names are looked up in what the live daemon returns, so a rename across releases is one
more spelling in a tuple here. The families the samples belong to are declared in metric_families.
Pure: dicts in, samples out.
"""

import re
from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Tuple

from .metric_families import (
    BUF_HIT,
    BUF_MISS,
    CACHE_BUDGET,
    CACHE_COMMITTED,
    CACHE_TARGET,
    COMPACT_QUEUE,
    COMPACTIONS,
    DB_TOTAL,
    DB_USED,
    GET_LAT,
    MEM_TARGET,
    MEMPOOL_BYTES,
    MEMPOOL_ITEMS,
    ONODE_HITS,
    ONODE_MISSES,
    ONODES,
    RGW_FAILED,
    RGW_LIST_BUCKETS_LAT,
    RGW_LIST_LAT,
    RGW_META_HIT,
    RGW_META_MISS,
    RGW_QACTIVE,
    RGW_QLEN,
    RGW_REQS,
    SLOW_USED,
    SUBMIT_LAT,
    SUBMIT_SYNC_LAT,
    WAL_TOTAL,
    WAL_USED,
    WRITE_DELAY,
)
from .metrics_model import Labels, Sample


class Spec(NamedTuple):
    family: str  # a name declared in metric_families
    logger: str
    names: Tuple[str, ...]  # spellings across releases, newest first
    read: str  # "value" | "avg" (avgcount+sum -> summary) | "avg_sum" (only the sum) | "pri_sum"
    labels: Labels = ()


# --- BlueStore cache, RocksDB (priority 0: no Ceph exporter shows it), BlueFS ---------------------
CACHES = ("data", "meta", "kv", "kv_onode")

OSD_SPECS: Tuple[Spec, ...] = (
    Spec(ONODE_HITS, "bluestore", ("onode_hits", "bluestore_onode_hits"), "value"),
    Spec(ONODE_MISSES, "bluestore", ("onode_misses", "bluestore_onode_misses"), "value"),
    Spec(ONODES, "bluestore", ("bluestore_onodes", "onodes"), "value"),
    Spec(BUF_HIT, "bluestore", ("bluestore_buffer_hit_bytes", "buffer_hit_bytes"), "value"),
    Spec(BUF_MISS, "bluestore", ("bluestore_buffer_miss_bytes", "buffer_miss_bytes"), "value"),
    Spec(MEM_TARGET, "bluestore-pricache", ("target_bytes",), "value"),
    Spec(CACHE_BUDGET, "bluestore-pricache", ("cache_bytes",), "value"),
    *(Spec(CACHE_TARGET, "bluestore-pricache:" + c, ("pri*_bytes",), "pri_sum", (("cache", c),)) for c in CACHES),
    *(Spec(CACHE_COMMITTED, "bluestore-pricache:" + c, ("committed_bytes",), "value", (("cache", c),)) for c in CACHES),
    Spec(COMPACTIONS, "rocksdb", ("compact",), "value", (("trigger", "background"),)),
    Spec(COMPACTIONS, "rocksdb", ("compact_range",), "value", (("trigger", "range"),)),
    Spec(COMPACTIONS, "rocksdb", ("compact_queue_merge",), "value", (("trigger", "queue_merge"),)),
    Spec(COMPACT_QUEUE, "rocksdb", ("compact_queue_len",), "value"),
    Spec(GET_LAT, "rocksdb", ("get_latency",), "avg"),
    Spec(SUBMIT_LAT, "rocksdb", ("submit_latency",), "avg"),
    Spec(SUBMIT_SYNC_LAT, "rocksdb", ("submit_sync_latency",), "avg"),
    Spec(WRITE_DELAY, "rocksdb", ("rocksdb_write_delay_time",), "avg_sum"),
    Spec(DB_TOTAL, "bluefs", ("db_total_bytes",), "value"),
    Spec(DB_USED, "bluefs", ("db_used_bytes",), "value"),
    Spec(SLOW_USED, "bluefs", ("slow_used_bytes",), "value"),
    Spec(WAL_TOTAL, "bluefs", ("wal_total_bytes",), "value"),
    Spec(WAL_USED, "bluefs", ("wal_used_bytes",), "value"),
)

MEMPOOL_PREFIX = "bluestore_cache_"

# --- RGW: what the running release lets the mgr see (priority >= 5 counters reported to it) --------
RGW_SPECS: Tuple[Spec, ...] = (
    Spec(RGW_REQS, "rgw", ("req",), "value"),
    Spec(RGW_FAILED, "rgw", ("failed_req",), "value"),
    Spec(RGW_QLEN, "rgw", ("qlen",), "value"),
    Spec(RGW_QACTIVE, "rgw", ("qactive",), "value"),
    Spec(RGW_META_HIT, "rgw", ("cache_hit",), "value"),
    Spec(RGW_META_MISS, "rgw", ("cache_miss",), "value"),
    Spec(RGW_LIST_LAT, "rgw", ("list_obj_lat",), "avg"),
    Spec(RGW_LIST_BUCKETS_LAT, "rgw", ("list_buckets_lat",), "avg"),
)

_PRI_RE = re.compile(r"^pri\d+_bytes$")


def _lookup(logger: Dict[str, Any], names: Iterable[str]) -> Optional[Any]:
    for name in names:
        if name in logger:
            return logger[name]
    return None


def _read(spec: Spec, logger: Dict[str, Any], labels: Labels) -> List[Sample]:
    if spec.read == "pri_sum":
        values = [v for k, v in logger.items() if _PRI_RE.match(k) and isinstance(v, (int, float))]
        return [Sample(spec.family, "", labels, float(sum(values)))] if values else []
    raw = _lookup(logger, spec.names)
    if raw is None:
        return []
    if spec.read == "value":
        return [Sample(spec.family, "", labels, float(raw))] if isinstance(raw, (int, float)) else []
    if not isinstance(raw, dict) or "sum" not in raw:
        return []
    if spec.read == "avg_sum":
        return [Sample(spec.family, "", labels, float(raw["sum"]))]
    return [
        Sample(spec.family, "_sum", labels, float(raw["sum"])),
        Sample(spec.family, "_count", labels, float(raw.get("avgcount", 0))),
    ]


def extract(specs: Iterable[Spec], dump: Dict[str, Any], daemon: str) -> Tuple[List[Sample], List[str]]:
    """Samples for one daemon from its `perf dump`, and the table entries its release lacks."""
    base: Labels = (("ceph_daemon", daemon),)
    samples: List[Sample] = []
    missing: List[str] = []
    for spec in specs:
        logger = dump.get(spec.logger)
        got = _read(spec, logger, base + spec.labels) if isinstance(logger, dict) else []
        if got:
            samples.extend(got)
        else:
            missing.append("{}.{}".format(spec.logger, spec.names[0]))
    return samples, missing


def extract_mempools(mempools: Dict[str, Any], daemon: str) -> List[Sample]:
    by_pool = mempools.get("mempool", mempools).get("by_pool", {})
    samples: List[Sample] = []
    for pool in sorted(by_pool):
        if not pool.startswith(MEMPOOL_PREFIX):
            continue
        labels: Labels = (("ceph_daemon", daemon), ("pool", pool[len(MEMPOOL_PREFIX) :]))
        stats = by_pool[pool]
        samples.append(Sample(MEMPOOL_BYTES, "", labels, float(stats.get("bytes", 0))))
        samples.append(Sample(MEMPOOL_ITEMS, "", labels, float(stats.get("items", 0))))
    return samples


def flatten_mgr_counters(counters: Dict[str, Dict[str, Any]]) -> Dict[str, Any]:
    """The mgr's per-daemon counters ({"rgw.req": {"value": v, "count": c}}) in perf-dump shape."""
    dump: Dict[str, Dict[str, Any]] = {}
    for path, info in counters.items():
        logger, _, name = path.partition(".")
        if "count" in info:
            dump.setdefault(logger, {})[name] = {"sum": info.get("value", 0), "avgcount": info["count"]}
        else:
            dump.setdefault(logger, {})[name] = info.get("value", 0)
    return dump
