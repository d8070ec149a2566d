"""Every metric family the mgr module exports, declared in one place into MODULE_REGISTRY.

The names (without the ceph_perfwatch_ prefix that render() adds) are what Samples carry: counters.py
reads the Ceph counters into the first group, collector.py reports itself with the second,
benchmarks/metrics.py turns results into the third. The host exporter has a registry of its own.
"""

from typing import Tuple

from .metrics_model import Registry

MODULE_REGISTRY = Registry()
_declare = MODULE_REGISTRY.declare

DAEMON: Tuple[str, ...] = ("ceph_daemon",)

# --- Ceph counters (counters.py): BlueStore cache -----------------------------------------------------
ONODE_HITS = _declare("bluestore_onode_hits_total", "counter", "BlueStore onode cache hits", DAEMON).name
ONODE_MISSES = _declare("bluestore_onode_misses_total", "counter", "BlueStore onode cache misses", DAEMON).name
ONODES = _declare("bluestore_onodes", "gauge", "Onodes in the BlueStore cache", DAEMON).name
OSD_NETWORK = _declare(
    "osd_network_info",
    "gauge",
    "Always 1: an up OSD's public or cluster address (from the OSD map) and the interface Ceph picked for it at "
    'boot ("" when it did not say); joins the host exporter\'s network_address_info on the address',
    (*DAEMON, "network", "address", "iface"),
).name
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

# --- the collection itself (collector.py) -------------------------------------------------------------
DURATION = _declare("collection_duration_seconds", "gauge", "Seconds the last collection cycle took").name
LAST_COLLECTION = _declare("last_collection_timestamp_seconds", "gauge", "When the last collection cycle ended").name
COLLECTIONS = _declare("collections_total", "counter", "Collection cycles run since the module started").name
POLLED = _declare("daemons_polled", "gauge", "Daemons asked for counters in the last cycle").name
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
CACHE_AGE = _declare("cache_age_seconds", "gauge", "Age of the collected data this scrape was served from").name
HTTP_REFUSED = _declare(
    "http_refused_total",
    "counter",
    "Connections and requests the endpoint refused since it last started listening, by reason: plain HTTP "
    "to its TLS port, a failed TLS handshake (no or a bad client certificate), a client certificate without "
    "an allowed name, no or wrong basic auth credentials",
    ("reason",),
).name

# --- benchmark results (benchmarks/metrics.py): ceph_daemon only for a result of one OSD ---------------
BENCH: Tuple[str, ...] = (*DAEMON, "kind", "metric")
BENCH_RESULT = {
    "iops": _declare(
        "bench_iops", "gauge", "Last benchmark result in operations per second", BENCH, optional=DAEMON
    ).name,
    "bytes_per_second": _declare(
        "bench_throughput_bytes_per_second",
        "gauge",
        "Last benchmark result in bytes per second",
        BENCH,
        optional=DAEMON,
    ).name,
    "seconds": _declare("bench_latency_seconds", "gauge", "Last benchmark latency result", BENCH, optional=DAEMON).name,
}
BENCH_BASELINE = {
    "iops": _declare(
        "bench_baseline_iops", "gauge", "Rolling median of recent results (operations/s)", BENCH, optional=DAEMON
    ).name,
    "bytes_per_second": _declare(
        "bench_baseline_throughput_bytes_per_second",
        "gauge",
        "Rolling median of recent results (bytes/s)",
        BENCH,
        optional=DAEMON,
    ).name,
    "seconds": _declare(
        "bench_baseline_latency_seconds", "gauge", "Rolling median of recent latencies", BENCH, optional=DAEMON
    ).name,
}
BENCH_IS_REGRESSION = _declare(
    "bench_regression", "gauge", "1 while the last result is a regression (no series otherwise)", BENCH, optional=DAEMON
).name
BENCH_LAST_RUN = _declare(
    "bench_last_run_timestamp_seconds", "gauge", "When a run of the kind last ended", ("kind",)
).name
BENCH_RUNS = _declare(
    "bench_runs_total", "counter", "Benchmark runs since the module started, by outcome", ("kind", "outcome")
).name
BENCH_PROBE = _declare(
    "bench_probe_latency_seconds",
    "histogram",
    "Latency of light probe operations, per device class of the OSD measured (not per OSD: each OSD's own "
    "figures are bench_latency_seconds and its baseline)",
    ("kind", "metric", "device_class"),
).name
BENCH_PROBE_COVERAGE = _declare(
    "bench_probe_coverage_osds",
    "gauge",
    "Up OSDs by what the light probe knows of them: fresh (a result within the rounds it takes to cover every "
    "reachable OSD, plus one), waiting (reachable, their turn comes) or unreachable (the acting primary of no "
    "scratch PG: not measured). In memory: after a failover every OSD waits until probed again",
    ("kind", "state"),
).name
BENCH_PROBE_ROUNDS_TO_COVER = _declare(
    "bench_probe_rounds_to_cover",
    "gauge",
    "Rounds the light probe takes to measure every reachable OSD (at most rados_probe_osds_per_round a round)",
    ("kind",),
).name

# --- whose load (load/): rates over the window since the module last asked its OSD perf queries -------------
# Gauges: an OSD's busiest pools and clients change from one window to the next. Label "op": read, write.
_W = " in the last window (OSD perf query, counted by the primary OSD)"
_BUSY = "; approximate while load_clients_sampled_osds is above 0"
LOAD = {
    key: _declare("load_" + key, "gauge", text, labels).name
    for key, text, labels in (
        ("pool_ops", "Client ops per second on the pool" + _W, ("pool", "op")),
        ("pool_bytes", "Client bytes per second on the pool" + _W, ("pool", "op")),
        ("pool_latency_seconds", "Mean OSD-side latency of the pool's client ops" + _W, ("pool", "op")),
        ("client_ops", "Ops per second of the busiest clients cluster-wide" + _W + _BUSY, ("client", "op")),
        ("client_bytes", "Bytes per second of the busiest clients cluster-wide" + _W + _BUSY, ("client", "op")),
        ("client_latency_seconds", "Mean OSD-side latency of the busiest clients' ops" + _W, ("client", "op")),
        ("osd_ops", "All client ops per second the OSD served as primary" + _W, (*DAEMON, "op")),
        ("osd_bytes", "All client bytes per second the OSD served as primary" + _W, (*DAEMON, "op")),
        ("osd_pool_ops", "Client ops per second on each of the OSD's busiest pools" + _W, (*DAEMON, "pool", "op")),
        ("osd_pool_bytes", "Client bytes per second on each of the OSD's busiest pools" + _W, (*DAEMON, "pool", "op")),
        ("osd_client_ops", "Ops per second of each of the OSD's busiest clients" + _W + _BUSY,
         (*DAEMON, "client", "op")),
        ("osd_client_bytes", "Bytes per second of each of the OSD's busiest clients" + _W, (*DAEMON, "client", "op")),
        ("clients_sampled_osds", "OSDs that counted more (client, pool) keys than load_client_sample in the last "
         "window: such an OSD may have reported a sample of its clients, weighted by ops (0: none did)", ()),
        ("window_seconds", "Seconds the last window of the load queries covered", ()),
        ("osds_without_series", "OSDs with client I/O in the last window left without per-OSD load series "
         "(load_osd_series_max reached; the busiest OSDs keep theirs)", ()),
        ("queries", "1 per OSD perf query of the module registered on the active mgr (0: wanted, not registered)",
         ("query",)),
    )
}  # fmt: skip
LOAD_QUERY_ERRORS = _declare(
    "load_query_errors_total",
    "counter",
    "OSD perf queries refused (invalid: before sending; refused: by the mgr), lost (the mgr no longer knew the "
    "id) or unanswered (asking for its counts raised; asked again)",
    ("query", "reason"),
).name
