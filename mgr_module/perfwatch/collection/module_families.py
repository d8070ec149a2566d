"""Every metric family the mgr module exports, declared in one place into MODULE_REGISTRY.

The names (without the ceph_perfwatch_ prefix that render() adds) are what Samples carry. A daemon's
counters and how reading them went come first: declared in common/daemon_counters/counter_families.py (the host exporter
reads them too) and declared here again, in their order. Then what only the module exports: the OSD map's
networks (osd_networks.py), the collection itself (collector.py), benchmark results (benchmarks/result_samples.py)
and whose load (load/). The host exporter has a registry of its own.
"""

from typing import Tuple

from ..common.daemon_counters.counter_families import DAEMON, DAEMON_COUNTER_REGISTRY
from ..common.metrics_model import Registry

MODULE_REGISTRY = Registry()
for _family in DAEMON_COUNTER_REGISTRY.families():
    MODULE_REGISTRY.declare(*_family)
_declare = MODULE_REGISTRY.declare

# --- the OSD map (osd_networks.py) ---------------------------------------------------------------------
OSD_NETWORK = _declare(
    "osd_network_info",
    "gauge",
    "Always 1: an up OSD's public or cluster address (from the OSD map) and the interface Ceph picked for it at "
    'boot ("" when it did not say); joins the host exporter\'s network_address_info on the address',
    (*DAEMON, "network", "address", "iface"),
).name

# --- the collection itself (collector.py) -------------------------------------------------------------
DURATION = _declare("collection_duration_seconds", "gauge", "Seconds the last collection cycle took").name
LAST_COLLECTION = _declare("last_collection_timestamp_seconds", "gauge", "When the last collection cycle ended").name
COLLECTIONS = _declare("collections_total", "counter", "Collection cycles run since the module started").name
POLLED = _declare("daemons_polled", "gauge", "Daemons asked for counters in the last cycle").name
COLLECTION_CPU = _declare(
    "collection_cpu_seconds_total",
    "counter",
    "CPU seconds the collection cycles took since the module started (the collecting thread and its command "
    "threads; a cycle's rendering of this page counts from the next page): its rate is the share of a core",
).name
DEFERRED = _declare(
    "collections_deferred_total",
    "counter",
    "Passes of the module's loop (every collect_interval, and at an option change) on which the collection was "
    "put off, the cycle before having taken more CPU than collect_cpu_budget_percent of a core allows since it "
    "began; counted at each scrape",
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

# --- benchmark results (benchmarks/result_samples.py): ceph_daemon only for a result of one OSD ---------------
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
