"""Bottlenecks: per cluster and host, which resource (media, CPU, network) is saturated, the OSDs nearest to
it, the alerts firing, and the client I/O beside them: cause and effect on one screen."""

from __future__ import annotations

from grafana_foundation_sdk.builders import table as table_builder
from grafana_foundation_sdk.models import dashboard as dm

from alerts.alerting import ALERT_TYPE

from .common import (
    CLUSTER,
    HOSTS,
    Row,
    Steps,
    board,
    figure,
    graph,
    host_variable,
    limit,
    listing,
    over,
    q,
    runbook,
    states,
    to_dashboard,
)

NAME = "bottlenecks"
MEDIA, CPU, NETWORK = "PerfwatchDeviceSaturated", "PerfwatchOSDCPUSaturated", "PerfwatchHostNetworkSaturated"
OSD_DETAIL = to_dashboard("osd-detail", "OSD detail", "${host:queryparam}")


def verdicts() -> Row:
    return Row(
        "Verdicts: which resource holds the cluster back",
        [
            states(
                "Is the cluster the limit?",
                "While clients do I/O: yes while any OSD is saturated (a device, its CPU, or a NIC that carries "
                "Ceph's traffic: see the verdicts beside it); no while none is. Then what limits the clients "
                "is outside the cluster: the clients themselves, their links, or the network between. Compare what "
                "the clients see with the OSDs' own op latency (the client I/O row): far above it, with no OSD "
                "host's NIC full, the time is spent outside. The campaigns' large reads ran flat at about 10 GB/s "
                "this way, the limit of the clients' 80 Gbit/s of uplinks, with the OSD hosts' media, CPU and "
                "links idle.",
                [q("cluster:ceph_perfwatch_cluster_is_limit:bool", CLUSTER, legend="the cluster")],
                ("no: the limit is outside the cluster", "yes: see the verdicts"),
                links=[runbook(NETWORK)],
                width=6,
            ),
            figure(
                "Saturated OSDs by resource",
                "How many OSDs each saturation verdict holds now. 0 everywhere: no resource is saturated, whatever "
                "the utilisation graphs below show (a verdict needs utilisation and saturation at once). Above 0: "
                "see which hosts in the verdict history beside it, then the OSD detail dashboard.",
                "short",
                [q("cluster:ceph_perfwatch_saturated_osds:count", CLUSTER, legend="{{resource}}")],
                steps=Steps("green", ((1.0, "red"),)),
                links=[runbook(MEDIA), runbook(CPU), runbook(NETWORK)],
                width=6,
            ),
            states(
                "Verdict per host and resource",
                "One line per host and resource: red while at least one OSD of the host is saturated on that "
                "resource (media: a device busy and queued and slow for its kind; CPU: at its limit and throttled, or "
                "the host out of CPU; network: a NIC at capacity). Read it left to right to see when it began and "
                "whether it moves between hosts.",
                [
                    q(
                        "host:ceph_perfwatch_saturation:verdict",
                        CLUSTER,
                        HOSTS,
                        legend="{{hostname}} {{resource}}",
                    )
                ],
                ("ok", "saturated"),
                links=[OSD_DETAIL],
                width=12,
            ),
        ],
    )


def utilisation() -> Row:
    def resource(name: str) -> str:
        return f'resource="{name}"'

    return Row(
        "Utilisation per host: its busiest OSD on each resource",
        [
            graph(
                "Media: busiest device",
                "Per host, the busy fraction of the busiest device under one of its OSDs (node_exporter's io_time). "
                f"The dashed line is the media verdict's busy threshold ({limit('media_busy_ratio'):.0%}). Busy "
                "alone is not saturation (multi-queue NVMe reads 100 % early): the verdict also needs a queue and "
                "slow commits, shown below and on the OSD detail dashboard.",
                "percentunit",
                [q("host:ceph_perfwatch_utilisation:ratio", CLUSTER, HOSTS, resource("media"), legend="{{hostname}}")],
                steps=over("media_busy_ratio"),
                links=[runbook(MEDIA), OSD_DETAIL],
            ),
            graph(
                "CPU: against the limit, else the host",
                "Per host, the highest CPU use of its OSDs: against the OSD's cgroup CPU limit where it has one, else "
                f"its host's busy fraction. The dashed line is the verdict's threshold "
                f"({limit('cpu_quota_ratio'):.0%} of the limit; {limit('host_cpu_busy_ratio'):.0%} busy for a host). "
                "Near it with little media queueing: CPU holds the OSDs back (the 4 KiB campaigns' case).",
                "percentunit",
                [q("host:ceph_perfwatch_utilisation:ratio", CLUSTER, HOSTS, resource("cpu"), legend="{{hostname}}")],
                steps=over("cpu_quota_ratio"),
                links=[runbook(CPU), OSD_DETAIL],
            ),
            graph(
                "Network: the NICs that carry Ceph's networks",
                "Each NIC that carries Ceph's public or cluster network (an OSD's address on its host; a VLAN's lower "
                "NIC, a bridge's ports, a bond as one link) against its capacity (tc shaping rate, else link "
                "speed), per direction, labelled with the network it carries. NICs that carry no Ceph traffic are "
                f"left out: they hold no OSD back. The dashed line is the network verdict's threshold "
                f"({limit('network_utilisation_ratio'):.0%}). Flat at the line while media and CPU idle: that "
                "network is the bottleneck (the large-read campaigns' case: public, transmit).",
                "percentunit",
                [
                    q(
                        "host_nic:ceph_perfwatch_ceph_network_utilisation:ratio",
                        CLUSTER,
                        HOSTS,
                        legend="{{hostname}} {{device}} {{network}} {{direction}}",
                    )
                ],
                steps=over("network_utilisation_ratio"),
                links=[runbook(NETWORK), OSD_DETAIL],
            ),
        ],
    )


def saturation() -> Row:
    return Row(
        "Saturation: work waiting for each resource",
        [
            graph(
                "Media: requests in flight per OSD device",
                "Average requests in flight on each OSD's devices (node_exporter's weighted io_time). Above the "
                f"dashed line ({limit('media_queue_depth'):g}) while the device is busy, requests queue on the media. "
                "One line per device: narrow the host variable on a large cluster.",
                "short",
                [
                    q(
                        "osd_device:ceph_perfwatch_media_queue:avg",
                        CLUSTER,
                        HOSTS,
                        legend="{{hostname}} {{ceph_daemon}} {{device}}",
                    )
                ],
                steps=over("media_queue_depth"),
                links=[runbook(MEDIA)],
            ),
            graph(
                "CPU: runnable threads per core",
                "Per host, the runnable threads per core (node_procs_running, averaged). Above 1, threads wait for a "
                "CPU; above the dashed line "
                f"({limit('host_runnable_per_core'):g}) with the host busy, the CPU verdict holds the host's unlimited "
                "OSDs back.",
                "short",
                [q("host:node_procs_running_per_core:ratio", CLUSTER, HOSTS, legend="{{hostname}}")],
                steps=over("host_runnable_per_core"),
                links=[runbook(CPU)],
            ),
            graph(
                "Network: dropped packets",
                "Packets dropped per second per interface, both directions. Any steady rate beside a full link means "
                "the link, not the OSDs, loses work; with slow heartbeat pings it explains flapping OSDs.",
                "pps",
                [q("host_nic:node_network_drops:rate", CLUSTER, HOSTS, legend="{{hostname}} {{device}}")],
                links=[runbook(NETWORK)],
            ),
            graph(
                "Network: slowest heartbeat over each NIC",
                "Per NIC that carries Ceph's traffic, the slowest heartbeat round trip of its host's OSDs to their "
                "peers over the network it carries (front pings for public, back pings for cluster; the net "
                "probe's figures, every net_probe_interval). Climbing beside a full NIC: that link delays the "
                "OSDs' messages, and above 1 s Ceph raises OSD_SLOW_PING_TIME_FRONT/BACK.",
                "s",
                [q("host_nic:ceph_perfwatch_heartbeat_ping:seconds", CLUSTER, HOSTS, legend="{{hostname}} {{device}}")],
                links=[runbook(NETWORK)],
            ),
        ],
    )


def held_back() -> Row:
    devices = listing(
        "Devices and the OSDs they hold",
        "One row per OSD and device: the host, the device and its kind (hdd, ssd, nvme; unknown is judged as "
        "hdd), the OSD and what the device is to it (block, db, wal), and the device's media verdict (1: "
        "saturated), saturated devices first. A shared DB/WAL device lists every OSD whose RocksDB it holds; "
        "an NVMe split into several OSDs lists each: one alert (PerfwatchDeviceSaturated) per device names them "
        "all.",
        "none",
        q("osd_device:ceph_perfwatch_device_verdict:bool", CLUSTER, HOSTS),
        top=50,
        links=[runbook(MEDIA)],
        width=24,
        height=8,
    )
    return Row("Devices: which OSDs each holds, and whether it holds them back", [devices])


def offenders() -> Row:
    most = listing(
        "Most utilised OSDs",
        "The OSDs nearest to a limit now, one row per OSD and resource, highest first (its busiest device, its "
        "CPU against its limit or host, its host's fullest NIC). Click an OSD to open its detail dashboard.",
        "percentunit",
        q("osd:ceph_perfwatch_utilisation:ratio", CLUSTER, HOSTS),
        top=20,
        width=12,
        height=10,
    )
    most.data_links(
        [
            to_dashboard(
                "osd-detail", "OSD detail", "var-host=${__data.fields.hostname}", "var-osd=${__data.fields.ceph_daemon}"
            )
        ]
    )
    return Row(
        "Nearest to a limit, alerts, blind spots",
        [
            most,
            listing(
                "Alerts firing",
                "The perfwatch alerts firing now in this cluster (Prometheus's ALERTS series); each names the host, "
                "OSD, device or NIC. Empty is good. The runbook (link at the top) says what each means and does.",
                "none",
                q("ALERTS", CLUSTER, f'type="{ALERT_TYPE}"', 'alertstate="firing"'),
                width=12,
                height=10,
            ),
            figure(
                "Age of the module's data",
                "Seconds since the perfwatch module finished collecting the OSDs' counters. Past the red mark "
                f"({limit('collection_stale_seconds'):g} s) every verdict here is built on old data.",
                "s",
                [q("cluster:ceph_perfwatch_collection_age:seconds", CLUSTER)],
                steps=over("collection_stale_seconds"),
                links=[runbook("PerfwatchCollectionStale")],
                width=6,
                height=6,
            ),
            listing(
                "Verdicts that cannot be made",
                "OSDs whose saturation verdict is silent because an input is missing (node_exporter not labelled "
                "or not reporting the device, the module or the host exporter down, no NIC capacity). Empty is "
                "good: a missing verdict is not a healthy one.",
                "none",
                q("osd:ceph_perfwatch_verdict_input_missing:info", CLUSTER, HOSTS),
                links=[runbook("PerfwatchVerdictInputMissing")],
                width=18,
                height=6,
            ),
        ],
    )


def client() -> Row:
    source = "Ceph's prometheus module (or ceph-exporter), all OSDs of the cluster"
    return Row(
        "Client I/O: the effect",
        [
            graph(
                "Client IOPS",
                f"Read and write operations the OSDs serve per second ({source}). A plateau while a resource above "
                "sits at its line is that resource's ceiling; a plateau with every resource idle points at the "
                "clients.",
                "iops",
                [q("cluster:ceph_osd_op:rate", CLUSTER, legend="{{op}}")],
            ),
            graph(
                "Client throughput",
                f"Bytes read and written by clients per second ({source}). Flat while a NIC sits at capacity: the "
                "network holds the cluster back.",
                "Bps",
                [q("cluster:ceph_osd_op_bytes:rate", CLUSTER, legend="{{op}}")],
            ),
            graph(
                "Client op latency",
                f"Mean latency of client reads and writes inside the OSDs ({source}). Rising while IOPS stay flat "
                "is saturation: requests queue for the saturated resource.",
                "s",
                [q("cluster:ceph_osd_op_latency:seconds", CLUSTER, legend="{{op}}")],
            ),
        ],
    )


def whose_load() -> Row:
    """The busiest pools and clients of the saturated OSDs and of each host (recording_load.py)."""
    note = (
        " From the module's OSD perf queries (option load_attribution; empty while it is off): each OSD counts "
        "the client ops it serves as primary, read and write together; the module exports each OSD's busiest "
        "load_top_per_osd pools and clients."
    )
    sampled = (
        " Client shares are approximate while ceph_perfwatch_load_clients_sampled_osds is above 0: an OSD with "
        "more clients than load_client_sample reports a sample of them."
    )
    what = {
        "pool": ("Pools", "pools", note),
        "client": ("Clients", "clients (client.<global id>)", note + sampled),
    }

    def table(entity: str, per_host: bool) -> table_builder.Panel:
        title, whose, about = what[entity]
        if per_host:
            text = f"Each host's busiest {whose} by their share of the client ops its OSDs serve as primary (a host "
            text += "whose NIC is full: whose traffic it carries)."
            series = f"host:ceph_perfwatch_load_{entity}_ops:ratio"
        else:
            text = f"For each OSD a saturation verdict names (media, CPU or network), its busiest {whose} and their "
            text += "share of its client ops, highest first."
            series = f"osd:ceph_perfwatch_saturated_load_{entity}_ops:ratio"
        return listing(
            f"{title} per host" if per_host else f"{title} on saturated OSDs",
            text + about,
            "percentunit",
            q(series, CLUSTER, HOSTS),
            top=20,
            links=[] if per_host else [runbook(MEDIA), runbook(CPU), runbook(NETWORK)],
            width=12,
            height=8,
        )

    return Row(
        "Whose load: the pools and clients behind each saturated OSD",
        [table(entity, per_host) for per_host in (False, True) for entity in what],
    )


def build() -> dm.Dashboard:
    return board(
        NAME,
        "perfwatch / Bottlenecks",
        "Which resource (media, CPU, network) holds the cluster back, per host and OSD, beside the client I/O.",
        [host_variable()],
        [verdicts(), held_back(), whose_load(), utilisation(), saturation(), offenders(), client()],
    )
