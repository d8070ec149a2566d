"""The families of a Ceph daemon's counters and of reading them, declared into DAEMON_COUNTER_REGISTRY:
what counters.py makes of a daemon's dumps, and how the reading went (up, last success, failures by reason,
entries missing or unavailable). The mgr module declares every one of them into its MODULE_REGISTRY
(collection/module_families.py); the host exporter, which reads its own OSDs' admin sockets with the same table
(`--daemon-counters`), declares them into its registry with its cluster and hostname labels.

The names are without the ceph_perfwatch_ prefix that render() adds. Pure.
"""

from typing import Tuple

from ..metrics_model import Registry

DAEMON_COUNTER_REGISTRY = Registry()
_declare = DAEMON_COUNTER_REGISTRY.declare

DAEMON: Tuple[str, ...] = ("ceph_daemon",)

# --- Ceph counters (counters.py): BlueStore cache -----------------------------------------------------
ONODE_HITS = _declare("bluestore_onode_hits_total", "counter", "BlueStore onode cache hits", DAEMON).name
ONODE_MISSES = _declare("bluestore_onode_misses_total", "counter", "BlueStore onode cache misses", DAEMON).name
ONODES = _declare("bluestore_onodes", "gauge", "Onodes in the BlueStore cache", DAEMON).name
OSD_OPS = _declare(
    "osd_ops_total",
    "counter",
    "Ops the OSD served: client reads and writes as primary (op_r, op_w), replica writes (subop_w)",
    (*DAEMON, "op"),
).name
BUF_HIT = _declare(
    "bluestore_buffer_hit_bytes_total", "counter", "Bytes read from the BlueStore buffer cache", DAEMON
).name
BUF_MISS = _declare(
    "bluestore_buffer_miss_bytes_total", "counter", "Bytes read that missed the BlueStore buffer cache", DAEMON
).name
MEM_TARGET = _declare(
    "bluestore_memory_target_bytes", "gauge", "The OSD memory target the cache autotuner works to", DAEMON
).name
CACHE_BUDGET = _declare(
    "bluestore_cache_budget_bytes", "gauge", "Bytes the autotuner gives to all BlueStore caches", DAEMON
).name
CACHE_TARGET = _declare(
    "bluestore_cache_target_bytes",
    "gauge",
    "Bytes the autotuner assigned to one cache (sum over priorities)",
    (*DAEMON, "cache"),
).name
CACHE_COMMITTED = _declare(
    "bluestore_cache_committed_bytes",
    "gauge",
    "Bytes one cache may use now (its target rounded up to whole chunks)",
    (*DAEMON, "cache"),
).name
MEMPOOL_BYTES = _declare(
    "bluestore_mempool_bytes", "gauge", "Bytes held in a bluestore_cache_* mempool", (*DAEMON, "pool")
).name
MEMPOOL_ITEMS = _declare(
    "bluestore_mempool_items", "gauge", "Items held in a bluestore_cache_* mempool", (*DAEMON, "pool")
).name

# --- Ceph counters: RocksDB (the whole logger is priority 0: no Ceph exporter shows it) ---------------
COMPACTIONS = _declare(
    "rocksdb_compactions_total", "counter", "RocksDB compactions, by what started them", (*DAEMON, "trigger")
).name
COMPACTIONS_COMPLETED = _declare(
    "rocksdb_compactions_completed_total",
    "counter",
    "Compactions RocksDB finished, whatever started them, its own level compactions too (Reef and later)",
    DAEMON,
).name
COMPACTIONS_RUNNING = _declare(
    "rocksdb_compactions_running", "gauge", "RocksDB compactions running now (Reef and later)", DAEMON
).name
LAST_COMPACTION = _declare(
    "rocksdb_last_compaction_duration_seconds",
    "gauge",
    "Seconds the last finished RocksDB compaction took (Reef and later)",
    DAEMON,
).name
COMPACT_QUEUE = _declare(
    "rocksdb_compaction_queue_length", "gauge", "Compaction ranges waiting in the queue", DAEMON
).name
GET_LAT = _declare("rocksdb_get_latency_seconds", "summary", "RocksDB get latency", DAEMON).name
SUBMIT_LAT = _declare("rocksdb_submit_latency_seconds", "summary", "RocksDB write submit latency", DAEMON).name
SUBMIT_SYNC_LAT = _declare(
    "rocksdb_submit_sync_latency_seconds", "summary", "RocksDB synchronous submit latency", DAEMON
).name
WRITE_DELAY = _declare(
    "rocksdb_write_delay_seconds_total",
    "counter",
    "Seconds writes were stalled by RocksDB (moves with rocksdb_perf on)",
    DAEMON,
).name

# --- Ceph counters: BlueFS -----------------------------------------------------------------------------
DB_TOTAL = _declare("bluefs_db_total_bytes", "gauge", "Size of the BlueFS DB device", DAEMON).name
DB_USED = _declare("bluefs_db_used_bytes", "gauge", "Bytes used on the BlueFS DB device", DAEMON).name
SLOW_USED = _declare(
    "bluefs_slow_used_bytes", "gauge", "RocksDB bytes spilled over onto the slow (main) device", DAEMON
).name
WAL_TOTAL = _declare("bluefs_wal_total_bytes", "gauge", "Size of the BlueFS WAL device (0 without one)", DAEMON).name
WAL_USED = _declare("bluefs_wal_used_bytes", "gauge", "Bytes used on the BlueFS WAL device", DAEMON).name

# --- Ceph counters: RGW, what the running release lets the mgr see -------------------------------------
RGW_REQS = _declare("rgw_requests_total", "counter", "Requests the RGW has served", DAEMON).name
RGW_FAILED = _declare("rgw_failed_requests_total", "counter", "Requests the RGW has failed", DAEMON).name
RGW_QLEN = _declare("rgw_queue_length", "gauge", "Requests waiting in the RGW's queue", DAEMON).name
RGW_QACTIVE = _declare("rgw_active_requests", "gauge", "Requests the RGW is working on", DAEMON).name
RGW_META_HIT = _declare(
    "rgw_metadata_cache_hits_total", "counter", "RGW metadata cache hits (bucket info lookups among them)", DAEMON
).name
RGW_META_MISS = _declare("rgw_metadata_cache_misses_total", "counter", "RGW metadata cache misses", DAEMON).name
RGW_LIST_LAT = _declare(
    "rgw_list_objects_latency_seconds",
    "summary",
    "RGW bucket listing latency (Tentacle and later: rgw_op; see counters_unavailable)",
    DAEMON,
).name
RGW_LIST_BUCKETS_LAT = _declare(
    "rgw_list_buckets_latency_seconds",
    "summary",
    "RGW list-buckets latency (Tentacle and later: rgw_op; see counters_unavailable)",
    DAEMON,
).name

# --- reading a daemon's counters (collector.py; the host exporter's daemon_counters.py) ----------------
FETCH_ERRORS = _declare(
    "fetch_errors_total", "counter", "Failed attempts to read a daemon's counters, by reason", (*DAEMON, "reason")
).name
DAEMON_UP = _declare(
    "daemon_up", "gauge", "1 if the daemon's counters were read in the last cycle, else 0", DAEMON
).name
LAST_SUCCESS = _declare(
    "daemon_last_success_timestamp_seconds", "gauge", "When the daemon's counters were last read successfully", DAEMON
).name
MISSING = _declare(
    "counters_missing",
    "gauge",
    "Counters of our table that every release has but the daemon lacks (an unknown rename shows here)",
    DAEMON,
).name
UNAVAILABLE = _declare(
    "counters_unavailable",
    "gauge",
    "1 for each counter of our table that only some releases have and the daemon's release does not "
    "(`ceph perfwatch status` says which releases have it); its family has no sample for that daemon",
    (*DAEMON, "counter"),
).name
