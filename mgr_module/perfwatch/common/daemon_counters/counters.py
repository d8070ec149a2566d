"""The one table of Ceph counters we export, and the code that reads them out of a daemon's dumps. Pure.

Every entry names the logger, the counter's spellings (newest release first) and what kind of value it is;
the names are looked up in what the live daemon returns, so a rename across releases is one more spelling
in a tuple. The families the samples belong to are declared in counter_families.py. An entry only some
releases have carries `releases`: a daemon lacking it is expected and reported as *unavailable*
(`counters_unavailable`, a line of `ceph perfwatch status`), not *missing* (`counters_missing`: a counter
every release has, or an unknown rename). What each release has: docs/decisions/release-counters.md.
"""

from typing import Any, Dict, Iterable, List, NamedTuple, Tuple

from ..metrics_model import Labels, Sample
from .counter_families import (
    BUF_HIT,
    BUF_MISS,
    CACHE_BUDGET,
    CACHE_COMMITTED,
    CACHE_TARGET,
    COMPACT_QUEUE,
    COMPACTIONS,
    COMPACTIONS_COMPLETED,
    COMPACTIONS_RUNNING,
    DB_TOTAL,
    DB_USED,
    GET_LAT,
    LAST_COMPACTION,
    MEM_TARGET,
    ONODE_HITS,
    ONODE_MISSES,
    ONODES,
    OSD_OPS,
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
from .counter_rows import MEMPOOL_LOGGER, MEMPOOLS_MISSING, Layout, Row, read_mempools


class Spec(NamedTuple):
    family: str  # a name declared in counter_families.py
    logger: str
    names: Tuple[str, ...]  # spellings across releases, newest first
    read: str  # "value" | "avg" (avgcount+sum -> summary) | "avg_sum" (only the sum) | "pri_sum"
    labels: Labels = ()
    releases: str = ""  # set when only some releases have it: which ones (absent elsewhere is expected)
    other_loggers: Tuple[str, ...] = ()  # further loggers that hold it in some releases, tried in order


PACIFIC_ONLY = "Pacific 16.2 (gone in Reef 18.2 and Tentacle 20.2)"
ROCKSDB_EVENTS = "Reef 18.2 and later (RocksDB compaction events, tracker 67040); not Pacific 16.2"
RGW_OP_LATENCY = "Tentacle 20.2 (rgw_op logger); no RGW logger of Pacific 16.2 or Reef 18.2.7 has it"


# --- BlueStore cache, RocksDB (priority 0: no Ceph exporter shows it), BlueFS ---------------------
CACHES = ("data", "meta", "kv", "kv_onode")

OSD_SPECS: Tuple[Spec, ...] = (
    Spec(ONODE_HITS, "bluestore", ("onode_hits", "bluestore_onode_hits"), "value"),
    Spec(ONODE_MISSES, "bluestore", ("onode_misses", "bluestore_onode_misses"), "value"),
    Spec(ONODES, "bluestore", ("bluestore_onodes", "onodes"), "value"),
    # What kind of ops the onode lookups come with (a write of a new object misses by design, a read of
    # one the cache evicted misses because the cache is too small): subop_w is priority 0, never sent to
    # the mgr, so no Ceph exporter shows it.
    Spec(OSD_OPS, "osd", ("op_r",), "value", (("op", "read"),)),
    Spec(OSD_OPS, "osd", ("op_w",), "value", (("op", "write"),)),
    Spec(OSD_OPS, "osd", ("subop_w",), "value", (("op", "replica_write"),)),
    Spec(BUF_HIT, "bluestore", ("bluestore_buffer_hit_bytes", "buffer_hit_bytes"), "value"),
    Spec(BUF_MISS, "bluestore", ("bluestore_buffer_miss_bytes", "buffer_miss_bytes"), "value"),
    Spec(MEM_TARGET, "bluestore-pricache", ("target_bytes",), "value"),
    Spec(CACHE_BUDGET, "bluestore-pricache", ("cache_bytes",), "value"),
    *(Spec(CACHE_TARGET, "bluestore-pricache:" + c, ("pri*_bytes",), "pri_sum", (("cache", c),)) for c in CACHES),
    *(Spec(CACHE_COMMITTED, "bluestore-pricache:" + c, ("committed_bytes",), "value", (("cache", c),)) for c in CACHES),
    Spec(COMPACTIONS, "rocksdb", ("compact",), "value", (("trigger", "background"),)),
    Spec(COMPACTIONS, "rocksdb", ("compact_range",), "value", (("trigger", "range"),), PACIFIC_ONLY),
    Spec(COMPACTIONS, "rocksdb", ("compact_queue_merge",), "value", (("trigger", "queue_merge"),)),
    Spec(COMPACT_QUEUE, "rocksdb", ("compact_queue_len",), "value"),
    Spec(COMPACTIONS_COMPLETED, "rocksdb", ("compact_completed",), "value", (), ROCKSDB_EVENTS),
    # compact_running: Ceph declares it a counter, but it goes up and down (compactions running now)
    Spec(COMPACTIONS_RUNNING, "rocksdb", ("compact_running",), "value", (), ROCKSDB_EVENTS),
    Spec(LAST_COMPACTION, "rocksdb", ("compact_lasted",), "value", (), ROCKSDB_EVENTS),
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

# --- RGW: what the running release lets the mgr see (priority >= 5 counters reported to it) --------
RGW_SPECS: Tuple[Spec, ...] = (
    Spec(RGW_REQS, "rgw", ("req",), "value"),
    Spec(RGW_FAILED, "rgw", ("failed_req",), "value"),
    Spec(RGW_QLEN, "rgw", ("qlen",), "value"),
    Spec(RGW_QACTIVE, "rgw", ("qactive",), "value"),
    Spec(RGW_META_HIT, "rgw", ("cache_hit",), "value"),
    Spec(RGW_META_MISS, "rgw", ("cache_miss",), "value"),
    Spec(RGW_LIST_LAT, "rgw_op", ("list_obj_lat",), "avg", (), RGW_OP_LATENCY, ("rgw",)),
    Spec(RGW_LIST_BUCKETS_LAT, "rgw_op", ("list_buckets_lat",), "avg", (), RGW_OP_LATENCY, ("rgw",)),
)

# What an OSD is asked for its counters (by the module through the mgr, by a host exporter through its socket):
# its mempools too are in it (the mempool logger), so one command a cycle, not two (`dump_mempools` as well)
PERF_DUMP = {"prefix": "perf dump", "format": "json"}


class NotAnObject(ValueError):
    """An OSD's reply to PERF_DUMP is not a JSON object."""


class Extracted(NamedTuple):
    samples: List[Sample]
    missing: List[str]  # "logger.counter" of entries every release has that the daemon lacks
    unavailable: List[str]  # "logger.counter" of release-dependent entries this daemon's release lacks


def name_of(spec: Spec) -> str:
    return "{}.{}".format(spec.logger, spec.names[0])


_LAYOUTS: Dict[Tuple[Spec, ...], Layout] = {}


def layout(specs: Iterable[Spec]) -> Layout:
    """The row layout of a counter table (counter_rows.Layout), made once per table."""
    key = tuple(specs)
    found = _LAYOUTS.get(key)
    if found is None:
        found = _LAYOUTS[key] = Layout(key)
    return found


OSD_LAYOUT = layout(OSD_SPECS)
OSD_LOGGERS = tuple(sorted((*OSD_LAYOUT.loggers, MEMPOOL_LOGGER)))  # the loggers of a perf dump osd_row() reads


def extract_detail(specs: Iterable[Spec], dump: Dict[str, Any], daemon: str) -> Extracted:
    """Samples for one daemon from its `perf dump`, and the table entries it lacks, missing or unavailable."""
    table = layout(specs)
    row = table.read(dump)
    return Extracted(table.samples(row, daemon), list(row.missing), list(row.unavailable))


def extract(specs: Iterable[Spec], dump: Dict[str, Any], daemon: str) -> Tuple[List[Sample], List[str]]:
    """Samples for one daemon from its `perf dump`, and the table entries its release should have but lacks."""
    got = extract_detail(specs, dump, daemon)
    return got.samples, got.missing


def releases_of(name: str) -> str:
    """Which releases have the release-dependent table entry "logger.counter" (empty if none is so named)."""
    for spec in OSD_SPECS + RGW_SPECS:
        if spec.releases and name_of(spec) == name:
            return spec.releases
    return ""


def osd_row(dump: Any) -> Row:
    """One OSD's row (OSD_LAYOUT, then its bluestore_cache_* mempools) from its reply to PERF_DUMP (the
    whole of it, or only its loggers OSD_LOGGERS). NotAnObject if the reply is not an object."""
    if not isinstance(dump, dict):
        raise NotAnObject("answer is not a JSON object")
    logger = dump.get(MEMPOOL_LOGGER)
    if not isinstance(logger, dict):
        row = OSD_LAYOUT.read(dump)
        return row._replace(missing=(*row.missing, MEMPOOLS_MISSING))
    pools, lacking = read_mempools(logger)
    row = OSD_LAYOUT.read(dump, pools)
    return row._replace(missing=(*row.missing, *lacking)) if lacking else row


def osd_counters(dump: Any, daemon: str) -> Extracted:
    """One OSD's samples from its reply to PERF_DUMP (labelled ceph_daemon only), the table entries it lacks
    and those its release does not have. NotAnObject if the reply is not an object."""
    row = osd_row(dump)
    return Extracted(OSD_LAYOUT.samples(row, daemon), list(row.missing), list(row.unavailable))


PERFCOUNTER_TIME = 1  # a counter "type" bit (mgr_module.MgrModule.PERFCOUNTER_TIME): the mgr holds nanoseconds


def flatten_mgr_counters(counters: Dict[str, Dict[str, Any]]) -> Dict[str, Any]:
    """The mgr's per-daemon counters ({"rgw.req": {"value": v, "count": c, "type": t}}) in perf-dump shape.
    The mgr keeps time counters in nanoseconds (its prometheus module divides them too): in seconds here."""
    dump: Dict[str, Dict[str, Any]] = {}
    for path, info in counters.items():
        logger, _, name = path.partition(".")
        value = info.get("value", 0)
        if int(info.get("type", 0)) & PERFCOUNTER_TIME and isinstance(value, (int, float)):
            value = value / 1e9
        if "count" in info:
            dump.setdefault(logger, {})[name] = {"sum": value, "avgcount": info["count"]}
        else:
            dump.setdefault(logger, {})[name] = value
    return dump


def flatten_labeled_counters(counters: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    """The unlabeled instances (labels {}) of a daemon's counters as the mgr's labeled-counter call gives
    them ({"rgw_op": [{"labels": {}, "counters": {"list_obj_lat": {"value": v, "count": c, ...}}}]}), in
    the shape of the mgr's unlabeled counters ({"rgw_op.list_obj_lat": {...}}). Labeled instances (per
    bucket, per user, ...) are left out: one series per daemon."""
    out: Dict[str, Dict[str, Any]] = {}
    for logger, instances in counters.items():
        if not isinstance(instances, list):
            continue
        for instance in instances:
            if (
                not isinstance(instance, dict)
                or instance.get("labels")
                or not isinstance(instance.get("counters"), dict)
            ):
                continue
            for name, info in instance["counters"].items():
                if isinstance(info, dict) and "value" in info:
                    out["{}.{}".format(logger, name)] = info
    return out
