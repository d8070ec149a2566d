"""OSD detail: one OSD's verdict and why: its devices' busy, queue and await, its CPU against its limit and
throttling, its host's NICs against their capacity, its client I/O, probe latency and `osd bench` against
their baselines."""

from __future__ import annotations

from grafana_foundation_sdk.models import dashboard as dm

from .common import (
    CLUSTER,
    HOST,
    OSD,
    Row,
    board,
    figure,
    graph,
    host_variable,
    limit,
    osd_variable,
    over,
    per_field,
    q,
    runbook,
    states,
    with_baseline,
)

NAME = "osd-detail"
MEDIA, CPU, NETWORK = "PerfwatchDeviceSaturated", "PerfwatchOSDCPUSaturated", "PerfwatchHostNetworkSaturated"
DEVICE = "{{device}} ({{role}})"
NIC = "host_nic:ceph_perfwatch_network_utilisation:ratio"


def verdict() -> Row:
    now = figure(
        "Utilisation by resource",
        "This OSD's nearest approach to each limit now: its busiest device, its CPU against its cgroup limit (else "
        "its host's CPU), its host's fullest NIC. Red from each verdict's threshold up; a verdict also needs "
        "saturation (queue, throttling), below.",
        "percentunit",
        [q("osd:ceph_perfwatch_utilisation:ratio", CLUSTER, OSD, legend="{{resource}}")],
        width=8,
    )
    per_field(
        now,
        {
            "media": over("media_busy_ratio"),
            "cpu": over("cpu_quota_ratio"),
            "network": over("network_utilisation_ratio"),
        },
    )
    return Row(
        "Verdict",
        [
            states(
                "Saturation verdict",
                "One line per resource: red while this OSD is saturated on it. Media: a device busy, queued and the "
                "OSD's commits slow. CPU: at its cgroup limit and throttled, or its host out of CPU. Network: a NIC "
                "of its host at capacity. The rows below show each condition.",
                [q("osd:ceph_perfwatch_saturation:verdict", CLUSTER, OSD, legend="{{resource}}")],
                ("ok", "saturated"),
                links=[runbook(MEDIA), runbook(CPU), runbook(NETWORK)],
                width=16,
            ),
            now,
        ],
    )


def media() -> Row:
    where = CLUSTER, OSD
    return Row(
        "Media: the OSD's devices (block, DB, WAL)",
        [
            graph(
                "Device busy",
                "Fraction of time each device under the OSD had I/O in flight. At the dashed line "
                f"({limit('media_busy_ratio'):.0%}) the first media condition holds; on NVMe it is reached long "
                "before saturation, so read it with the queue and the commit latency.",
                "percentunit",
                [q("osd_device:ceph_perfwatch_media_busy:ratio", *where, legend=DEVICE)],
                steps=over("media_busy_ratio"),
                links=[runbook(MEDIA)],
                width=6,
            ),
            graph(
                "Device queue",
                "Average requests in flight on each device. Above the dashed line "
                f"({limit('media_queue_depth'):g}) while busy, requests wait for the media.",
                "short",
                [q("osd_device:ceph_perfwatch_media_queue:avg", *where, legend=DEVICE)],
                steps=over("media_queue_depth"),
                links=[runbook(MEDIA)],
                width=6,
            ),
            graph(
                "Device await",
                "Mean time a request spent queued and served on each device (like iostat's await), and the limit "
                "for the device's kind (dashed: HDD, SSD and NVMe differ). Flash serves a small request in well "
                "under a millisecond, a disk in several; above its limit with a busy, deep queue, the device is "
                "saturated.",
                "s",
                [
                    q("osd_device:ceph_perfwatch_media_await:seconds", *where, legend=DEVICE),
                    q("osd_device:ceph_perfwatch_media_await_limit:seconds", *where, legend=DEVICE + " limit"),
                ],
                width=6,
            ),
            graph(
                "BlueStore commit latency",
                "Mean RocksDB synchronous submit (the OSD's kv commit) latency, and the limit for the kind of the "
                "device holding its RocksDB WAL (block.wal, else block.db, else block). Above it with that device "
                "busy and queued, the media verdict names that device: the OSD's own writes wait on it.",
                "s",
                [
                    q("osd:ceph_perfwatch_commit_latency:seconds", *where, legend="commit"),
                    q("osd:ceph_perfwatch_commit_limit:seconds", *where, legend="limit"),
                ],
                links=[runbook(MEDIA)],
                width=6,
            ),
        ],
    )


def cpu() -> Row:
    limited = graph(
        "CPU against its cgroup limit",
        "A: CPU used against the cgroup limit (dashed at "
        f"{limit('cpu_quota_ratio'):.0%}); B: share of CFS periods throttled (red from "
        f"{limit('cpu_throttled_periods_ratio'):.0%}); C: the limit, in cores (right axis). A near its line and B "
        "above its mark: the limit holds the OSD back. Empty for an OSD without a CPU limit.",
        "percentunit",
        [
            q("osd:ceph_perfwatch_cpu_quota_usage:ratio", CLUSTER, OSD, legend="of limit"),
            q("osd:ceph_perfwatch_cpu_throttled_periods:ratio", CLUSTER, OSD, legend="periods throttled"),
            q("osd:ceph_perfwatch_cpu_limit:cores", CLUSTER, OSD, legend="limit (cores)"),
        ],
        steps=over("cpu_quota_ratio"),
        links=[runbook(CPU)],
        width=6,
    )
    per_field(limited, {"B": over("cpu_throttled_periods_ratio")}, by_query=True)
    limited.override_by_query("C", [dm.DynamicConfigValue(id_val="unit", value="suffix: cores")])
    return Row(
        "CPU: the OSD's, and its host's",
        [
            graph(
                "CPU used",
                "Cores the OSD's process uses (user and system). Flat at a round number with throttling beside it: "
                "a CPU limit; flat while the host is busy: the host's CPU.",
                "suffix: cores",
                [q("osd:ceph_perfwatch_cpu_usage:cores", CLUSTER, OSD, legend="used")],
                links=[runbook(CPU)],
                width=6,
            ),
            limited,
            graph(
                "Host CPU busy",
                "Fraction of the host's CPU time not idle. Above the dashed line "
                f"({limit('host_cpu_busy_ratio'):.0%}) with many runnable threads per core, the host's OSDs without "
                "a CPU limit are out of CPU.",
                "percentunit",
                [q("host:node_cpu_busy:ratio", CLUSTER, HOST, legend="{{hostname}}")],
                steps=over("host_cpu_busy_ratio"),
                links=[runbook(CPU)],
                width=6,
            ),
            graph(
                "Host runnable threads per core",
                "The host's runnable threads per core (node_procs_running, averaged). Above 1 threads wait for a "
                "CPU; above the dashed line "
                f"({limit('host_runnable_per_core'):g}) while busy, the host's CPU is the bottleneck.",
                "short",
                [q("host:node_procs_running_per_core:ratio", CLUSTER, HOST, legend="{{hostname}}")],
                steps=over("host_runnable_per_core"),
                links=[runbook(CPU)],
                width=6,
            ),
        ],
    )


def network() -> Row:
    return Row(
        "Network: its host's NICs",
        [
            graph(
                "NIC utilisation",
                "Each interface of the OSD's host against its capacity (tc shaping rate, else link speed), per "
                f"direction. At the dashed line ({limit('network_utilisation_ratio'):.0%}) the link is full and "
                "every OSD of the host waits on it.",
                "percentunit",
                [q(NIC, CLUSTER, HOST, legend="{{device}} {{direction}}")],
                steps=over("network_utilisation_ratio"),
                links=[runbook(NETWORK)],
            ),
            graph(
                "NIC drops",
                "Packets dropped per second on each interface of the host, both directions. Steady drops beside a "
                "full link: the link loses work.",
                "pps",
                [q("host_nic:node_network_drops:rate", CLUSTER, HOST, legend="{{device}}")],
            ),
            graph(
                "Heartbeat ping time",
                "The OSD's heartbeat round trip to its peers, front (public) and back (cluster) networks, as the mgr "
                "holds it (the net probe). Climbing with a full NIC: the network slows this OSD; climbing alone: "
                "the peer or the OSD is stalled.",
                "s",
                [q("osd:ceph_perfwatch_heartbeat_ping:seconds", CLUSTER, OSD, legend="{{metric}}")],
            ),
        ],
    )


def client_and_baselines() -> Row:
    return Row(
        "Client I/O, and latency against its baseline",
        [
            graph(
                "Client IOPS",
                "Client read and write operations this OSD serves per second (Ceph's prometheus module). Flat while "
                "a resource above is at its line: that resource is its ceiling.",
                "iops",
                [q("osd:ceph_osd_op:rate", CLUSTER, OSD, legend="{{op}}")],
                width=6,
            ),
            graph(
                "Client throughput",
                "Client bytes read and written per second on this OSD.",
                "Bps",
                [q("osd:ceph_osd_op_bytes:rate", CLUSTER, OSD, legend="{{op}}")],
                width=6,
            ),
            graph(
                "Client op latency",
                "Mean latency of client reads and writes inside this OSD. Rising with flat IOPS: requests queue for "
                "a saturated resource.",
                "s",
                [q("osd:ceph_osd_op_latency:seconds", CLUSTER, OSD, legend="{{op}}")],
                width=6,
            ),
            graph(
                "Probe latency against its baseline",
                "The rados probe's last 4 KiB write and read latency on this OSD divided by its rolling baseline "
                "(1: as usual; 3: three times slower). Rising with a saturated resource: the verdict explains it.",
                "suffix:x",
                [q("osd:ceph_perfwatch_probe_latency:ratio_baseline", CLUSTER, OSD, legend="{{metric}}")],
                width=6,
            ),
            graph(
                "Probe latency and baseline",
                "The rados probe's last latencies on this OSD and their rolling-median baselines; the probe "
                "writes and reads one 4 KiB object with this OSD as its primary, at most once a second.",
                "s",
                with_baseline("latency_seconds", CLUSTER, OSD, 'kind="rados"', legend="{{metric}}"),
                width=12,
            ),
            graph(
                "osd bench against its baseline",
                "The OSD's own `osd bench` 4 KiB write IOPS on its media (no network), last result and baseline. "
                "Far below its baseline: the media or its DB/WAL device degraded. Appears after "
                "`ceph perfwatch bench run --kind osd`; the baseline after a few runs.",
                "iops",
                with_baseline("iops", CLUSTER, OSD, 'kind="osd"', legend="{{metric}}"),
                links=[runbook("PerfwatchBenchmarkRegression")],
                width=12,
            ),
        ],
    )


def build() -> dm.Dashboard:
    return board(
        NAME,
        "perfwatch / OSD detail",
        "One OSD: its saturation verdict and each condition behind it, its client I/O and its latency against its "
        "baselines.",
        [host_variable(multi=False), osd_variable(False, "osd:ceph_perfwatch_osd:info", 'hostname="$host"')],
        [verdict(), media(), cpu(), network(), client_and_baselines()],
    )
