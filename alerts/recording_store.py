"""Recording rules of BlueStore, RocksDB and BlueFS per OSD (store_rules), and of benchmark results per
cluster (bench_rules)."""

from __future__ import annotations

from .profiles import Profile
from .promql import CLUSTER, OSD, Rule, by, either, rate, rule, sel


def store_rules(p: Profile) -> list[Rule]:
    """BlueStore cache, RocksDB and BlueFS per OSD."""
    w, mod, exp = p.rate_window, p.module_selector, p.exporter_selector

    def osd_rate(metric: str, *matchers: str, labels: str = "") -> str:
        return by(OSD, "sum", either(metric, exp, mod, *matchers, over=lambda s: rate(s, w), labels=labels))

    def osd_gauge(metric: str) -> str:
        return by(OSD, "max", either(metric, exp, mod))

    hits, misses = osd_rate("ceph_perfwatch_bluestore_onode_hits_total"), "osd:ceph_perfwatch_onode_misses:rate"
    reads = osd_rate("ceph_perfwatch_osd_ops_total", 'op="read"', labels="op")
    writes = osd_rate("ceph_perfwatch_osd_ops_total", 'op=~"write|replica_write"', labels="op")
    return [
        # the misses once, read by the two rules after it (each computed them again: 0.12 s at 10,000 OSDs)
        rule("osd:ceph_perfwatch_onode_misses:rate", osd_rate("ceph_perfwatch_bluestore_onode_misses_total")),
        rule("osd:ceph_perfwatch_onode_lookups:rate", f"{hits}\n+ on (cluster, ceph_daemon)\n{misses}"),
        rule(
            "osd:ceph_perfwatch_onode_miss:ratio",
            f"{misses}\n/ on (cluster, ceph_daemon)\nclamp_min(osd:ceph_perfwatch_onode_lookups:rate, 1e-9)",
        ),
        # Onodes the cache gained per second: it grows while it has room (each new object's or first
        # read's onode stays), and stops growing once full (each miss evicts another onode).
        rule(
            "osd:ceph_perfwatch_onode_growth:rate",
            by(OSD, "max", either("ceph_perfwatch_bluestore_onodes", exp, mod, over=lambda s: f"deriv({s}[{w}])")),
        ),
        # Onode misses per client read, beyond those the writes cause (a write of a new object misses by
        # design: profiles.onode_misses_per_write each, client and replica writes alike).
        rule(
            "osd:ceph_perfwatch_onode_read_misses:ratio",
            f"clamp_min(\n  osd:ceph_perfwatch_onode_misses:rate\n  - on (cluster, ceph_daemon)\n"
            f"  {p.onode_misses_per_write:g} * {writes},\n  0\n)\n/ on (cluster, ceph_daemon)\n"
            f"clamp_min({reads}, 1e-9)",
        ),
        rule(
            "osd:ceph_perfwatch_compaction_queue:length",
            osd_gauge("ceph_perfwatch_rocksdb_compaction_queue_length"),
        ),
        rule(
            "osd:ceph_perfwatch_rocksdb_write_stall:ratio", osd_rate("ceph_perfwatch_rocksdb_write_delay_seconds_total")
        ),
        rule(
            "osd:ceph_perfwatch_bluefs_spillover:bytes",
            osd_gauge("ceph_perfwatch_bluefs_slow_used_bytes"),
        ),
        rule(
            "osd:ceph_perfwatch_bluefs_db_used:ratio",
            osd_gauge("ceph_perfwatch_bluefs_db_used_bytes")
            + "\n/ on (cluster, ceph_daemon)\n("
            + osd_gauge("ceph_perfwatch_bluefs_db_total_bytes")
            + " > 0)",
        ),
    ]


RATIO = "cluster:ceph_perfwatch_bench_performance:ratio_baseline"
RATIO_LABEL = "measure"  # "latency" or "throughput": which group recorded the ratio
# The (numerator, denominator) families of each result's ratio to its baseline, by the group that divides
# them: latencies inverted (baseline / result), so that below 1 is always worse.
RATIO_PAIRS = {
    "latency": (("ceph_perfwatch_bench_baseline_latency_seconds", "ceph_perfwatch_bench_latency_seconds"),),
    "throughput": (
        ("ceph_perfwatch_bench_iops", "ceph_perfwatch_bench_baseline_iops"),
        (
            "ceph_perfwatch_bench_throughput_bytes_per_second",
            "ceph_perfwatch_bench_baseline_throughput_bytes_per_second",
        ),
    ),
}


def baseline_ratio_rules(p: Profile) -> dict[str, list[Rule]]:
    """Each result's performance against its own baseline (1 = as usual; below 1 worse), what the module
    judges regressions by; derived here, not exported per OSD. A group per unit: at 10,000 OSDs reading and
    dividing the 60,000 results and 60,000 baselines took 0.85-0.9 s of CPU in one rule."""
    mod, keep = p.module_selector, f"{CLUSTER}, ceph_daemon, kind, metric"
    return {
        unit: [
            {
                **rule(RATIO, by(keep, "max", "\nor ".join(f"{sel(n, mod)}\n/ ({sel(d, mod)} > 0)" for n, d in pairs))),
                # the groups' rules differ by this label, so no two rules record the same series (promtool)
                "labels": {RATIO_LABEL: unit},
            }
        ]
        for unit, pairs in RATIO_PAIRS.items()
    }


def bench_rules(p: Profile) -> list[Rule]:
    """Benchmark results per cluster: bucket-index latency, each result against its baseline, regressions,
    IOPS per stored GB."""
    mod = p.module_selector
    iops = by(OSD, "max", sel("ceph_perfwatch_bench_iops", mod, p.iops_bench_selector))
    return [
        rule(
            "cluster:ceph_perfwatch_bucket_index_latency:seconds",
            by(f"{CLUSTER}, metric", "max", sel("ceph_perfwatch_bench_latency_seconds", mod, p.bucket_index_selector)),
        ),
        # 1 while a result is a regression (the module exports the flag only then), 0 for the other results
        # with a baseline (the ratios of the baseline groups before this one, as they last recorded them)
        rule(
            "cluster:ceph_perfwatch_bench_regression:bool",
            by(f"{CLUSTER}, ceph_daemon, kind, metric", "max", sel("ceph_perfwatch_bench_regression", mod))
            + f"\nor 0 * {by(f'{CLUSTER}, ceph_daemon, kind, metric', 'max', RATIO)}",
        ),
        rule("cluster:ceph_perfwatch_stored:bytes", by(CLUSTER, "sum", sel("ceph_pool_stored", p.ceph_selector))),
        rule(
            "cluster:ceph_perfwatch_stored_raw:bytes", by(CLUSTER, "sum", sel("ceph_pool_stored_raw", p.ceph_selector))
        ),
        # measured 4 KiB write IOPS of the media (osd benchmark; one result per OSD, whichever mgr serves it)
        # per raw stored GB: a replicated write costs a device write per replica and each replica is stored
        # raw, so this is client IOPS per client GB. Only once every OSD has a result: a sum over the few
        # benchmarked would understate the cluster.
        rule(
            "cluster:ceph_perfwatch_iops_per_stored_gb:ratio",
            f"sum by (cluster) ({iops})\n/ on (cluster)\n(cluster:ceph_perfwatch_stored_raw:bytes / 1e9 > 0)\n"
            f"and on (cluster)\n(count by (cluster) ({iops})\n>= on (cluster)\n"
            "count by (cluster) (osd:ceph_perfwatch_osd:info))",
        ),
    ]
