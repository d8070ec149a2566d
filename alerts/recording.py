"""Recording rules: every PromQL expression of the project, once. Alerts and dashboards read these names.

Names follow `level:metric:operation`; the level says which labels a series keeps: osd_device (cluster,
hostname, ceph_daemon, device, role), osd (cluster, hostname, ceph_daemon; no hostname where no host signal
is involved), host (cluster, hostname), host_device (and device), host_nic (and device, direction),
host_address (and address, device), cluster. No name carries its rate window (the profile's), so dashboards
read the same names in both profiles. Every `on()` and `by()` names `cluster`, so clusters can share one
Prometheus, and no recorded series keeps `instance` or `job`, so a mgr failover does not split a series.
"""

from __future__ import annotations

from typing import Any

from .profiles import Profile
from .promql import (
    HOST,
    HOST_DEVICE,
    OSD,
    OSD_HOST,
    OSD_ONLY,
    Rule,
    by,
    mean_from_counters,
    rate,
    rule,
    sel,
    with_label,
)
from .recording_dashboards import dashboard_rules
from .recording_inputs import health_rules
from .recording_load import load_rules
from .recording_media import (
    OSD_DEVICE_VERDICT,
    media_commit_rules,
    media_detail_rules,
    media_topology_rules,
    media_verdict_rules,
)
from .recording_network import heartbeat_rules, network_topology_rules, network_verdict_rules, nic_role_rule
from .recording_store import baseline_ratio_rules, bench_rules, store_rules

VERDICT = "osd:ceph_perfwatch_saturation:verdict"


def verdict_rule(resource: str, expr: str) -> Rule:
    """The verdict series of one resource: each resource's group records its own (the `resource` label,
    set by the rule, keeps the three apart), so no verdict waits for another group's evaluation."""
    return {"record": VERDICT, "expr": expr, "labels": {"resource": resource}}


def topology_rules(p: Profile) -> list[Rule]:
    """What lies beneath each OSD: the exporters' info series, which change with the hardware, not with the
    load. The verdict groups read them as this group's last evaluation left them (and so does
    perfwatch-network-topology, which says which NIC carries which OSD's networks)."""
    return [
        *media_topology_rules(p),
        rule(
            "osd:ceph_perfwatch_osd:info",
            by(OSD_HOST, "max", sel("ceph_perfwatch_osd_device_info", p.exporter_selector)),
        ),
    ]


def media_rules(p: Profile) -> list[Rule]:
    """From the devices' and the OSDs' counters to the media verdict, in one evaluation."""
    w, mod, exp, node = p.rate_window, p.module_selector, p.exporter_selector, p.node_selector

    def disk(metric: str) -> str:
        return rate(sel(metric, node), w)

    return [
        # media: busy fraction and average requests in flight of every device of every host (the max: a host
        # whose node_exporter two jobs scrape counts each device once)
        rule("host_device:node_disk_busy:ratio", by(HOST_DEVICE, "max", disk("node_disk_io_time_seconds_total"))),
        rule(
            "host_device:node_disk_queue:avg", by(HOST_DEVICE, "max", disk("node_disk_io_time_weighted_seconds_total"))
        ),
        # await: seconds per completed I/O, reads and writes together (iostat's await); the four counters of
        # one target joined as they come and the max taken once (four maxes, joined: 0.04 s more at 10,000 OSDs)
        rule(
            "host_device:node_disk_await:seconds",
            by(
                HOST_DEVICE,
                "max",
                f"\n  ({disk('node_disk_read_time_seconds_total')} + {disk('node_disk_write_time_seconds_total')})"
                f"\n  / clamp_min({disk('node_disk_reads_completed_total')} + "
                f"{disk('node_disk_writes_completed_total')}, 1e-9)\n",
            ),
        ),
        # the OSD's BlueStore kv commit: RocksDB synchronous submits, mean seconds over the window
        rule(
            "osd:ceph_perfwatch_commit_latency:seconds",
            mean_from_counters("ceph_perfwatch_rocksdb_submit_sync_latency_seconds", exp, mod, OSD, w),
        ),
        *media_commit_rules(p),
        *media_verdict_rules(p),
        # each OSD's: the verdict of the devices beneath it, at once (not through the per OSD device series of
        # perfwatch-details: one rule less in the chain)
        verdict_rule("media", by(OSD_HOST, "max", OSD_DEVICE_VERDICT)),
    ]


def cpu_rules(p: Profile) -> list[Rule]:
    """From the OSDs' and hosts' CPU counters to the CPU verdict, in one evaluation: at its cgroup limit and
    throttled; or, without a limit, its host busy with work waiting."""
    w, exp, node = p.rate_window, p.exporter_selector, p.node_selector
    # per CPU and mode first (max): a host whose node_exporter two jobs scrape counts each CPU once
    idle_per_cpu = by(f"{HOST}, cpu, mode", "max", rate(sel("node_cpu_seconds_total", node, 'mode=~"idle|iowait"'), w))
    idle = by(HOST, "sum", idle_per_cpu)
    periods = by(OSD_HOST, "sum", rate(sel("ceph_perfwatch_daemon_cgroup_cpu_periods_total", exp, OSD_ONLY), w))
    host_cpu = (
        f"(host:node_cpu_busy:ratio >= bool {p.host_cpu_busy_ratio})\n* on (cluster, hostname)\n"
        f"(host:node_procs_running_per_core:ratio >= bool {p.host_runnable_per_core})"
    )
    at_limit = with_label(
        f"(osd:ceph_perfwatch_cpu_quota_usage:ratio >= bool {p.cpu_quota_ratio})\n"
        "* on (cluster, hostname, ceph_daemon)\n"
        f"(osd:ceph_perfwatch_cpu_throttled_periods:ratio >= bool {p.cpu_throttled_periods_ratio})",
        "reason",
        "cgroup_limit",
    )
    host_out = with_label(
        "(osd:ceph_perfwatch_cpu_usage:cores unless on (cluster, hostname, ceph_daemon) "
        "osd:ceph_perfwatch_cpu_limit:cores)\n"
        f"* 0 + on (cluster, hostname) group_left ()\n({host_cpu})",
        "reason",
        "host_cpu",
    )
    return [
        # the OSD's cores used, its cgroup limit, the share of CFS periods it was throttled in
        rule(
            "osd:ceph_perfwatch_cpu_usage:cores",
            by(OSD_HOST, "sum", rate(sel("ceph_perfwatch_daemon_cpu_seconds_total", exp, OSD_ONLY), w)),
        ),
        rule(
            "osd:ceph_perfwatch_cpu_limit:cores",
            by(OSD_HOST, "max", sel("ceph_perfwatch_daemon_cgroup_cpu_limit_cores", exp, OSD_ONLY)),
        ),
        rule(
            "osd:ceph_perfwatch_cpu_throttled_periods:ratio",
            by(OSD_HOST, "sum", rate(sel("ceph_perfwatch_daemon_cgroup_cpu_throttled_periods_total", exp, OSD_ONLY), w))
            + f"\n/\n({periods} > 0)",
        ),
        # the host's CPUs, counted once for the two ratios below (13,344 series at 10,000 OSDs, read twice before)
        rule(
            "host:node_cpus:count",
            by(HOST, "count", by(f"{HOST}, cpu", "max", sel("node_cpu_seconds_total", node, 'mode="idle"'))),
        ),
        rule("host:node_cpu_busy:ratio", f"1 - {idle}\n/ on (cluster, hostname)\nhost:node_cpus:count"),
        rule(
            "host:node_procs_running_per_core:ratio",
            by(HOST, "max", f"avg_over_time({sel('node_procs_running', node)}[{w}])")
            + "\n/ on (cluster, hostname)\nhost:node_cpus:count",
        ),
        rule(
            "osd:ceph_perfwatch_cpu_quota_usage:ratio",
            "osd:ceph_perfwatch_cpu_usage:cores\n/ on (cluster, hostname, ceph_daemon)\n"
            "(osd:ceph_perfwatch_cpu_limit:cores > 0)",
        ),
        rule("osd:ceph_perfwatch_cpu_saturated:bool", f"{at_limit}\nor\n{host_out}"),
        verdict_rule("cpu", by(OSD_HOST, "max", "osd:ceph_perfwatch_cpu_saturated:bool")),
    ]


def network_rules(p: Profile) -> list[Rule]:
    """From the NICs' counters to the network verdict, in one evaluation: a NIC that carries Ceph's traffic
    at its capacity in one direction."""
    w, exp, node = p.rate_window, p.exporter_selector, p.node_selector
    nic_rate = "max by (cluster, hostname, device) ({})"
    # A tc shaping rate limits what the host sends, not what it receives: receive is judged against the
    # link speed only (a shaped NIC's receive side has no capacity series, and no receive verdict).
    capacity = {
        direction: by(HOST_DEVICE, "max", sel("ceph_perfwatch_network_link_capacity_bytes", exp, sources) + " > 0")
        for direction, sources in (("transmit", ""), ("receive", 'source!="tc"'))
    }
    nic = {
        direction: with_label(
            nic_rate.format(rate(sel(f"node_network_{direction}_bytes_total", node, p.nic_selector), w)),
            "direction",
            direction,
        )
        + f"\n/ on (cluster, hostname, device) group_left ()\n{capacity[direction]}"
        for direction in ("transmit", "receive")
    }
    return [
        # each NIC's throughput against its capacity, per direction
        rule("host_nic:ceph_perfwatch_network_utilisation:ratio", f"{nic['transmit']}\nor\n{nic['receive']}"),
        nic_role_rule(),
        *network_verdict_rules(p),
        verdict_rule("network", "osd:ceph_perfwatch_network_saturated:bool"),
    ]


def detail_rules(p: Profile) -> list[Rule]:
    """Beside the verdicts, for the dashboards and the alerts' text: per OSD device its device's signals,
    limits and verdict; NIC drops."""
    w, node = p.rate_window, p.node_selector

    def per_osd_device(host_device: str) -> str:
        return (
            f"osd_device:ceph_perfwatch_osd_device:info\n* on (cluster, hostname, device) group_left ()\n{host_device}"
        )

    return [
        rule("osd_device:ceph_perfwatch_media_busy:ratio", per_osd_device("host_device:node_disk_busy:ratio")),
        rule("osd_device:ceph_perfwatch_media_queue:avg", per_osd_device("host_device:node_disk_queue:avg")),
        rule("osd_device:ceph_perfwatch_media_await:seconds", per_osd_device("host_device:node_disk_await:seconds")),
        *media_detail_rules(p),
        rule(
            "host_nic:node_network_drops:rate",
            by(HOST_DEVICE, "max", rate(sel("node_network_receive_drop_total", node, p.nic_selector), w))
            + "\n+ on (cluster, hostname, device)\n"
            + by(HOST_DEVICE, "max", rate(sel("node_network_transmit_drop_total", node, p.nic_selector), w)),
        ),
    ]


def probe_rules(p: Profile) -> list[Rule]:
    """The light probes' results per OSD, for the dashboards and the network alert's text."""
    mod = p.module_selector
    return [
        # the light probes' last latency against their rolling baseline (1 = as usual, 3 = three times slower)
        rule(
            "osd:ceph_perfwatch_probe_latency:ratio_baseline",
            by(f"{OSD}, metric", "max", sel("ceph_perfwatch_bench_latency_seconds", mod, 'kind="rados"'))
            + "\n/ on (cluster, ceph_daemon, metric)\n("
            + by(f"{OSD}, metric", "max", sel("ceph_perfwatch_bench_baseline_latency_seconds", mod, 'kind="rados"'))
            + " > 0)",
        ),
        # OSD heartbeat ping times the mgr holds (the net probe), front and back: slow pings
        rule(
            "osd:ceph_perfwatch_heartbeat_ping:seconds",
            by(f"{OSD}, metric", "max", sel("ceph_perfwatch_bench_latency_seconds", mod, 'kind="net"')),
        ),
        *heartbeat_rules(),
    ]


def groups(p: Profile) -> list[dict[str, Any]]:
    """The recording rule groups, in evaluation order (a group reads earlier groups' results).

    Each verdict's chain, from its raw inputs to its verdict series, is one group, so it takes one evaluation,
    not one per hop (docs/decisions/rule-cost-measurement.md#the-verdict-chains-lag). The three resources'
    chains share no signal: a group each, evaluated side by side; what they share is topology (which devices
    and NICs serve which OSD), read from the groups before. What no verdict reads comes after them."""
    made = [
        ("perfwatch-topology", topology_rules(p)),
        ("perfwatch-network-topology", network_topology_rules(p)),
        ("perfwatch-media", media_rules(p)),
        ("perfwatch-cpu", cpu_rules(p)),
        ("perfwatch-network", network_rules(p)),
        ("perfwatch-details", detail_rules(p)),
        ("perfwatch-probes", probe_rules(p)),
        ("perfwatch-store", store_rules(p)),
        *((f"perfwatch-baselines-{unit}", rules) for unit, rules in baseline_ratio_rules(p).items()),
        ("perfwatch-benchmarks", bench_rules(p)),
        ("perfwatch-inputs", health_rules(p)),
        ("perfwatch-load", load_rules(p, VERDICT)),
    ]
    for part, rules in dashboard_rules(p).items():
        made.append((f"perfwatch-dashboards-{part}" if part else "perfwatch-dashboards", rules))
    return [{"name": name, "interval": p.evaluation_interval, "rules": rules} for name, rules in made]
