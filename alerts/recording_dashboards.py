"""Recording rules that only the dashboards read: client I/O, await, utilisation per OSD and host, caches,
histograms, RGW."""

from __future__ import annotations

from collections.abc import Callable

from .profiles import Profile
from .promql import CLUSTER, HOST, OSD, Rule, by, either, mean_from_summary, rate, rule, sel, with_label
from .recording_network import per_osd


def dashboard_rules(p: Profile) -> dict[str, list[Rule]]:
    """What the dashboards (dashboards/) show beside the verdicts: client I/O from Ceph's module, device
    await, utilisation per OSD and host and resource, buffer cache misses, compactions, probe latency
    histograms, RGW requests and its bucket-index ops. No alert reads these. (Plain gauges, such as cache
    targets, mempools or the RGW queue, the dashboards read as they are.)

    In three groups, by what they read (none reads another's results but the verdicts', which read client
    I/O): client I/O ("io"), utilisation and verdicts per host and cluster (""), BlueStore, RocksDB, probe
    histograms and RGW ("store"); one group took 2.2 s of CPU at 10,000 OSDs."""
    w, mod, exp, ceph = p.rate_window, p.module_selector, p.exporter_selector, p.ceph_selector

    def per_op(make: Callable[[str], str], read: str, write: str) -> str:
        return f"{with_label(make(read), 'op', 'read')}\nor\n{with_label(make(write), 'op', 'write')}"

    def osd_ceph_rate(metric: str) -> str:  # max: the module and ceph-exporter may both export an OSD's counters
        return by(OSD, "max", rate(sel(metric, ceph), w))

    def latency(labels: str) -> Callable[[str], str]:
        return lambda prefix: mean_from_summary(prefix, (ceph,), labels, w)

    buffer_hits, buffer_misses = (
        by(
            OSD,
            "sum",
            either(f"ceph_perfwatch_bluestore_buffer_{kind}_bytes_total", exp, mod, over=lambda s: rate(s, w)),
        )
        for kind in ("hit", "miss")
    )
    cpu = (
        "osd:ceph_perfwatch_cpu_quota_usage:ratio\nor\n"
        "osd:ceph_perfwatch_osd:info * on (cluster, hostname) group_left () host:node_cpu_busy:ratio"
    )
    network = per_osd("host_nic:ceph_perfwatch_network_utilisation:ratio")
    media = "max by (cluster, hostname, ceph_daemon) (osd_device:ceph_perfwatch_media_busy:ratio)"
    rgw = "cluster, ceph_daemon"
    io = [
        # client I/O the OSDs serve (Ceph's prometheus module or ceph-exporter), op = read | write
        rule("osd:ceph_osd_op:rate", per_op(osd_ceph_rate, "ceph_osd_op_r", "ceph_osd_op_w")),
        rule("osd:ceph_osd_op_bytes:rate", per_op(osd_ceph_rate, "ceph_osd_op_r_out_bytes", "ceph_osd_op_w_in_bytes")),
        rule("osd:ceph_osd_op_latency:seconds", per_op(latency(OSD), "ceph_osd_op_r_latency", "ceph_osd_op_w_latency")),
        rule("cluster:ceph_osd_op:rate", by(f"{CLUSTER}, op", "sum", "osd:ceph_osd_op:rate")),
        rule("cluster:ceph_osd_op_bytes:rate", by(f"{CLUSTER}, op", "sum", "osd:ceph_osd_op_bytes:rate")),
        rule(
            "cluster:ceph_osd_op_latency:seconds",
            per_op(latency(CLUSTER), "ceph_osd_op_r_latency", "ceph_osd_op_w_latency"),
        ),
    ]
    verdicts = [
        # media: mean time a request spends queued and served (iostat's await), per device and per OSD device
        # utilisation per OSD and resource: its busiest device; its CPU against its limit, else its host's
        # CPU; the fullest NIC that carries its networks. Then per host, and how many OSDs each verdict holds
        rule(
            "osd:ceph_perfwatch_utilisation:ratio",
            "\nor\n".join(
                with_label(expr, "resource", resource)
                for resource, expr in (("media", media), ("cpu", cpu), ("network", network))
            ),
        ),
        # each NIC that carries Ceph's traffic, with the network it carries (NICs that carry none left out)
        rule(
            "host_nic:ceph_perfwatch_ceph_network_utilisation:ratio",
            "host_nic:ceph_perfwatch_network_utilisation:ratio\n"
            "* on (cluster, hostname, device) group_left (network)\nhost_nic:ceph_perfwatch_nic_networks:info",
        ),
        rule(
            "host:ceph_perfwatch_utilisation:ratio",
            by(f"{HOST}, resource", "max", "osd:ceph_perfwatch_utilisation:ratio"),
        ),
        rule(
            "host:ceph_perfwatch_saturation:verdict",
            by(f"{HOST}, resource", "max", "osd:ceph_perfwatch_saturation:verdict"),
        ),
        rule(
            "cluster:ceph_perfwatch_saturated_osds:count",
            by(f"{CLUSTER}, resource", "sum", "osd:ceph_perfwatch_saturation:verdict"),
        ),
        # Is the cluster the limit? While clients do I/O: 1 while some OSD is saturated on some resource; 0
        # while none is (no device, CPU or NIC that carries Ceph's traffic is full), so what limits the
        # clients is outside the cluster (the clients, their links, the network between). Absent when idle.
        rule(
            "cluster:ceph_perfwatch_cluster_is_limit:bool",
            by(CLUSTER, "sum", "osd:ceph_perfwatch_saturation:verdict")
            + " > bool 0\nand on (cluster)\n("
            + by(CLUSTER, "sum", "osd:ceph_osd_op:rate")
            + " > 0)",
        ),
    ]
    store = [
        # BlueStore: buffer cache misses (bytes); RocksDB compactions
        rule(
            "osd:ceph_perfwatch_buffer_miss:ratio",
            f"{buffer_misses}\n/ on (cluster, ceph_daemon)\nclamp_min({buffer_hits}\n+ on (cluster, ceph_daemon)\n"
            f"{buffer_misses}, 1e-9)",
        ),
        rule(
            "osd:ceph_perfwatch_rocksdb_compactions:rate",
            by(
                f"{OSD}, trigger",
                "sum",
                either(
                    "ceph_perfwatch_rocksdb_compactions_total", exp, mod, over=lambda s: rate(s, w), labels="trigger"
                ),
            ),
        ),
        rule(  # Reef 18.2 and later: every compaction RocksDB finishes, its own level compactions too
            "osd:ceph_perfwatch_rocksdb_compactions_completed:rate",
            by(
                OSD,
                "sum",
                either("ceph_perfwatch_rocksdb_compactions_completed_total", exp, mod, over=lambda s: rate(s, w)),
            ),
        ),
        # the light probes' latency histograms, summed over OSDs and mgrs (they reset when the mgr does)
        rule(
            "cluster:ceph_perfwatch_probe_latency_bucket:rate",
            by(
                f"{CLUSTER}, kind, metric, le",
                "sum",
                rate(sel("ceph_perfwatch_bench_probe_latency_seconds_bucket", mod), w),
            ),
        ),
        # RGW (ceph_daemon rgw.<gid> as the mgr knows it; the exporter's is rgw.<id>, with its hostname)
        rule(
            "cluster:ceph_perfwatch_rgw_requests:rate",
            by(rgw, "sum", rate(sel("ceph_perfwatch_rgw_requests_total", mod), w)),
        ),
        rule(
            "cluster:ceph_perfwatch_rgw_failed_requests:rate",
            by(rgw, "sum", rate(sel("ceph_perfwatch_rgw_failed_requests_total", mod), w)),
        ),
        rule(
            "cluster:ceph_perfwatch_rgw_objecter_ops:rate",
            by(f"{HOST}, ceph_daemon, op", "sum", rate(sel("ceph_perfwatch_rgw_objecter_ops_total", exp), w)),
        ),
    ]
    return {"io": io, "": verdicts, "store": store}
