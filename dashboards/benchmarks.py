"""Benchmarks and capacity: results against their baselines per OSD, regressions, the light probes' latency
distributions as heatmaps, and measured IOPS per stored GB against the 3-30 IOPS/GB planning range."""

from __future__ import annotations

from grafana_foundation_sdk.models import dashboard as dm

from .common import (
    CLUSTER,
    MODULE,
    Row,
    Steps,
    board,
    figure,
    graph,
    latency_heatmap,
    limit,
    q,
    runbook,
    states,
    with_baseline,
)

NAME = "benchmarks"
RESULT = "{{kind}} {{metric}} {{ceph_daemon}}"
OSD_BENCH = (
    "Appears after `ceph perfwatch bench run --kind osd` (or osd_bench_interval); the baseline after a few runs."
)
# (kind, metric, what it is) of the probe histograms drawn as heatmaps
HEATMAPS = (
    ("rados", "write_latency", "rados probe: 4 KiB writes, one per OSD as primary, through the network"),
    ("rados", "read_latency", "rados probe: 4 KiB reads of the same objects"),
    ("net", "ping_back", "net probe: OSD heartbeat round trips on the back (cluster) network"),
    ("rgw", "omap_set_latency", "rgw probe: omap writes on a bucket-index pool, as every RGW PUT makes"),
)


def results() -> Row:
    return Row(
        "Results against their baselines",
        [
            graph(
                "Results against their baselines",
                "Each benchmark's last result as a share of its own rolling-median baseline (100 %: as usual; below: "
                "slower; latencies are inverted so that below is always worse). Under the module's "
                "regression_fraction of its own or its peers' baseline it is a regression (beside).",
                "percentunit",
                [q("cluster:ceph_perfwatch_bench_performance:ratio_baseline", CLUSTER, legend=RESULT)],
                width=12,
            ),
            states(
                "Regressions",
                "One line per benchmark result with a baseline (or a regression): red while it is a regression "
                "(the module's health check PERFWATCH_BENCH_REGRESSION names it too). A regression on an OSD "
                "with a saturated resource is explained by it; alone, suspect the device.",
                [q("cluster:ceph_perfwatch_bench_regression:bool", CLUSTER, legend=RESULT)],
                ("ok", "regressed"),
                links=[runbook("PerfwatchBenchmarkRegression")],
                width=12,
            ),
            graph(
                "osd bench: 4 KiB write IOPS per OSD",
                "Each OSD's own `osd bench` 4 KiB writes on its media (no network), last result and baseline. An "
                f"OSD far below its peers of the same device class has a slower or failing device. {OSD_BENCH}",
                "iops",
                with_baseline("iops", CLUSTER, 'kind="osd"', legend="{{ceph_daemon}}"),
                width=12,
            ),
            graph(
                "osd bench: 4 MiB write throughput per OSD",
                f"Each OSD's own `osd bench` 4 MiB writes: the media's streaming write rate. {OSD_BENCH}",
                "Bps",
                with_baseline("throughput_bytes_per_second", CLUSTER, 'kind="osd"', legend="{{ceph_daemon}}"),
                width=12,
            ),
        ],
    )


def distributions() -> Row:
    return Row(
        "Probe latency distributions",
        [
            latency_heatmap(
                f"{kind} probe: {metric}",
                f"{what}. Each column is the window's probes by latency bucket, summed over OSDs (darker: more). A "
                "band moving up, or a second band above the first, is a slower device, OSD or link; the histograms "
                "start afresh when the active mgr changes.",
                q("cluster:ceph_perfwatch_probe_latency_bucket:rate", CLUSTER, f'kind="{kind}"', f'metric="{metric}"'),
                width=6,
            )
            for kind, metric, what in HEATMAPS
        ]
        + [
            graph(
                "rados probe: OSDs with a fresh result",
                "The up OSDs by what the light rados probe knows of them: fresh (a result within the rounds it takes "
                "to measure every reachable OSD, plus one), waiting (their turn comes) and unreachable (the acting "
                "primary of no scratch PG, so not measured: perfwatch grows its pool within scratch_pool_pgs_per_osd; "
                "README, Every OSD measured). Counted from the module's start: after a failover all wait a while.",
                "short",
                [q("ceph_perfwatch_bench_probe_coverage_osds", MODULE, CLUSTER, 'kind="rados"', legend="{{state}}")],
                width=24,
            )
        ],
    )


def capacity() -> Row:
    low, high = limit("iops_per_gb_target"), limit("iops_per_gb_high_tier")
    return Row(
        "Capacity: IOPS per stored GB",
        [
            figure(
                "Measured IOPS per stored GB",
                "The OSDs' measured 4 KiB write IOPS (osd bench, summed) per GB stored. Public-cloud SSD block "
                f"storage offers {low:g}-{high:g} IOPS per GB: red below {low:g} (IOPS-bound workloads run out of "
                f"media before space), green in the range, blue above {high:g} (IOPS to spare). {OSD_BENCH}",
                "short",
                [q("cluster:ceph_perfwatch_iops_per_stored_gb:ratio", CLUSTER, legend="IOPS per GB")],
                steps=Steps("red", ((low, "green"), (high, "blue"))),
                links=[runbook("PerfwatchIOPSPerGBBelowTarget")],
                width=8,
            ),
            graph(
                "Data stored",
                "Bytes stored in the cluster's pools (Ceph's prometheus module, before replication): the divisor of "
                "IOPS per GB. As it grows with the same media, IOPS per GB falls.",
                "bytes",
                [q("cluster:ceph_perfwatch_stored:bytes", CLUSTER, legend="stored")],
                width=16,
            ),
        ],
    )


def build() -> dm.Dashboard:
    return board(
        NAME,
        "perfwatch / Benchmarks and capacity",
        "perfwatch's benchmarks against their baselines, the probes' latency distributions, and measured IOPS "
        "per stored GB against the planning range.",
        [],
        [results(), distributions(), capacity()],
    )
