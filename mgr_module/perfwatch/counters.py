"""The one table of Ceph counters we export, and the code that reads them out of a daemon's dumps.

Every entry names the logger, the counter's spellings (newest release first) and what kind of value
it is. The names are looked up in what the live daemon returns, so a rename across releases is one
more spelling in a tuple here. Pure: dicts in, samples out.
"""

import re
from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Tuple

Labels = Tuple[Tuple[str, str], ...]


class Family(NamedTuple):
    name: str  # without the ceph_perfwatch_ prefix
    type: str  # counter | gauge | summary
    help: str


class Sample(NamedTuple):
    family: str  # the Family name
    suffix: str  # "" or "_sum" / "_count" for summaries
    labels: Labels
    value: float


class Spec(NamedTuple):
    family: str
    logger: str
    names: Tuple[str, ...]  # spellings across releases, newest first
    read: str  # "value" | "avg" (avgcount+sum -> summary) | "avg_sum" (only the sum) | "pri_sum"
    labels: Labels = ()


FAMILIES: Dict[str, Family] = {}


def declare_family(name: str, type_: str, help_: str, registry: Optional[Dict[str, Family]] = None) -> str:
    """Register a metric family (name without prefix) in `registry` (default: the module's FAMILIES);
    returns the name for use in Samples."""
    table = FAMILIES if registry is None else registry
    if name in table and table[name] != Family(name, type_, help_):
        raise ValueError("family {} declared twice, differently".format(name))
    table[name] = Family(name, type_, help_)
    return name


# --- BlueStore cache ----------------------------------------------------------------------------
ONODE_HITS = declare_family("bluestore_onode_hits_total", "counter", "BlueStore onode cache hits")
ONODE_MISSES = declare_family("bluestore_onode_misses_total", "counter", "BlueStore onode cache misses")
ONODES = declare_family("bluestore_onodes", "gauge", "Onodes in the BlueStore cache")
BUF_HIT = declare_family("bluestore_buffer_hit_bytes_total", "counter", "Bytes read from the BlueStore buffer cache")
BUF_MISS = declare_family(
    "bluestore_buffer_miss_bytes_total", "counter", "Bytes read that missed the BlueStore buffer cache"
)
MEM_TARGET = declare_family(
    "bluestore_memory_target_bytes", "gauge", "The OSD memory target the cache autotuner works to"
)
CACHE_BUDGET = declare_family(
    "bluestore_cache_budget_bytes", "gauge", "Bytes the autotuner gives to all BlueStore caches"
)
CACHE_TARGET = declare_family(
    "bluestore_cache_target_bytes", "gauge", "Bytes the autotuner assigned to one cache (sum over priorities)"
)
CACHE_COMMITTED = declare_family(
    "bluestore_cache_committed_bytes", "gauge", "Bytes one cache may use now (its target rounded up to whole chunks)"
)
MEMPOOL_BYTES = declare_family("bluestore_mempool_bytes", "gauge", "Bytes held in a bluestore_cache_* mempool")
MEMPOOL_ITEMS = declare_family("bluestore_mempool_items", "gauge", "Items held in a bluestore_cache_* mempool")

# --- RocksDB (the whole logger is priority 0: no Ceph exporter shows it) -------------------------
COMPACTIONS = declare_family("rocksdb_compactions_total", "counter", "RocksDB compactions, by what started them")
COMPACT_QUEUE = declare_family("rocksdb_compaction_queue_length", "gauge", "Compaction ranges waiting in the queue")
GET_LAT = declare_family("rocksdb_get_latency_seconds", "summary", "RocksDB get latency")
SUBMIT_LAT = declare_family("rocksdb_submit_latency_seconds", "summary", "RocksDB write submit latency")
SUBMIT_SYNC_LAT = declare_family("rocksdb_submit_sync_latency_seconds", "summary", "RocksDB synchronous submit latency")
WRITE_DELAY = declare_family(
    "rocksdb_write_delay_seconds_total",
    "counter",
    "Seconds writes were stalled by RocksDB (moves with rocksdb_perf on)",
)

# --- BlueFS ---------------------------------------------------------------------------------------
DB_TOTAL = declare_family("bluefs_db_total_bytes", "gauge", "Size of the BlueFS DB device")
DB_USED = declare_family("bluefs_db_used_bytes", "gauge", "Bytes used on the BlueFS DB device")
SLOW_USED = declare_family("bluefs_slow_used_bytes", "gauge", "RocksDB bytes spilled over onto the slow (main) device")
WAL_TOTAL = declare_family("bluefs_wal_total_bytes", "gauge", "Size of the BlueFS WAL device (0 without one)")
WAL_USED = declare_family("bluefs_wal_used_bytes", "gauge", "Bytes used on the BlueFS WAL device")

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
RGW_REQS = declare_family("rgw_requests_total", "counter", "Requests the RGW has served")
RGW_FAILED = declare_family("rgw_failed_requests_total", "counter", "Requests the RGW has failed")
RGW_QLEN = declare_family("rgw_queue_length", "gauge", "Requests waiting in the RGW's queue")
RGW_QACTIVE = declare_family("rgw_active_requests", "gauge", "Requests the RGW is working on")
RGW_META_HIT = declare_family(
    "rgw_metadata_cache_hits_total", "counter", "RGW metadata cache hits (bucket info lookups among them)"
)
RGW_META_MISS = declare_family("rgw_metadata_cache_misses_total", "counter", "RGW metadata cache misses")
RGW_LIST_LAT = declare_family(
    "rgw_list_objects_latency_seconds", "summary", "RGW bucket listing latency (Reef and later)"
)
RGW_LIST_BUCKETS_LAT = declare_family(
    "rgw_list_buckets_latency_seconds", "summary", "RGW list-buckets latency (Reef and later)"
)

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
