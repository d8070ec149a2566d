"""Recording rules that say whether every input of the verdicts is there (self-monitoring)."""

from __future__ import annotations

from .profiles import Profile
from .promql import CLUSTER, OSD, OSD_ONLY, Rule, by, either, rate, rule, sel, with_label


def health_rules(p: Profile) -> list[Rule]:
    """Is every input there? The verdicts are silent when theirs vanish: these say so."""
    mod, exp, node = p.module_selector, p.exporter_selector, p.node_selector
    missing = [
        # an OSD device node_exporter does not report (unlabelled target, excluded device, exporter gone)
        ("node_disk", "osd_device:ceph_perfwatch_osd_device:info unless on (cluster, hostname, device) "
                      "host_device:node_disk_busy:ratio"),
        # an OSD the module does not report (module disabled, collection failing)
        ("perfwatch_module", "osd:ceph_perfwatch_osd:info unless on (cluster, ceph_daemon) "
                             "osd:ceph_perfwatch_commit_latency:seconds"),
        # an OSD the module reads whose host exporter does not report its CPU
        ("perfwatch_host_exporter", "max by (cluster, ceph_daemon) (ceph_perfwatch_daemon_up{" + mod + ", "
                                    + OSD_ONLY + "}) == 1 unless on (cluster, ceph_daemon) "
                                    "osd:ceph_perfwatch_cpu_usage:cores"),
        # an up OSD (the module gives every up OSD's addresses, whoever reads its counters) that no host
        # exporter reports: with daemon_counters_source=exporters nothing else would say so
        ("perfwatch_host_exporter", "max by (cluster, ceph_daemon) (" + sel("ceph_perfwatch_osd_network_info", mod)
                                    + ") unless on (cluster, ceph_daemon) osd:ceph_perfwatch_osd:info"),
        # a host with OSDs whose CPU node_exporter does not report
        ("node_cpu", "osd:ceph_perfwatch_osd:info unless on (cluster, hostname) host:node_cpu_busy:ratio"),
        # an OSD none of whose NICs (those that carry its networks) has its throughput and capacity known
        # (not one that is down in the OSD map: the module reports no address for it, and it has no traffic)
        ("network_capacity", "osd:ceph_perfwatch_osd:info unless on (cluster, hostname, ceph_daemon) "
                             "osd:ceph_perfwatch_network_saturated:bool and on (cluster, ceph_daemon) "
                             "(osd:ceph_perfwatch_osd_network:info or osd:ceph_perfwatch_network_fallback:info)"),
    ]  # fmt: skip
    return [
        rule(
            "osd:ceph_perfwatch_verdict_input_missing:info",
            "\nor\n".join(with_label(f"({expr})", "input", name) for name, expr in missing),
        ),
        rule(
            "cluster:ceph_perfwatch_collection_age:seconds",
            by(CLUSTER, "min", f"time() - {sel('ceph_perfwatch_last_collection_timestamp_seconds', mod)}"),
        ),
        rule(
            "osd:ceph_perfwatch_daemon_up:bool", by(OSD, "max", either("ceph_perfwatch_daemon_up", exp, mod, OSD_ONLY))
        ),
        rule(
            "osd:ceph_perfwatch_fetch_errors:rate",
            by(
                f"{OSD}, reason",
                "sum",
                # per reason: the module's "down" is a reason no exporter has
                either(
                    "ceph_perfwatch_fetch_errors_total",
                    exp,
                    mod,
                    over=lambda s: rate(s, p.rate_window),
                    labels="reason",
                ),
            ),
        ),
        # OSDs whose counters both the module and their host's exporter export (daemon_counters_source
        # left at "module" while the exporters run with --daemon-counters): the rules read the exporters'
        # alone (promql.either), but both collect
        rule(
            "cluster:ceph_perfwatch_osds_counted_twice:count",
            # sources per OSD: each exporter target (instance), and the module (its job: its active and
            # standby mgrs are one source)
            by(
                CLUSTER,
                "count",
                by(
                    OSD,
                    "count",
                    by(f"{OSD}, instance", "max", sel("ceph_perfwatch_daemon_up", exp, OSD_ONLY))
                    + "\nor\n"
                    + by(f"{OSD}, job", "max", sel("ceph_perfwatch_daemon_up", mod, OSD_ONLY)),
                )
                + " > 1",
            ),
        ),
        rule("cluster:ceph_perfwatch_module_targets:count", by(CLUSTER, "count", sel("up", mod))),
        rule(
            "cluster:ceph_perfwatch_module_serving:count",
            by(CLUSTER, "count", sel("ceph_perfwatch_last_collection_timestamp_seconds", mod)),
        ),
        rule(
            "host:ceph_perfwatch_exporter_cache_age:seconds",
            "max by (cluster, hostname, job, instance) (" + sel("ceph_perfwatch_exporter_cache_age_seconds", exp) + ")",
        ),
        rule(
            "host:ceph_perfwatch_exporter_up:bool",
            # node_exporter only on the hosts that have a perfwatch host exporter target: a fleet-wide
            # `node` job also scrapes machines that are no Ceph hosts
            "max by (cluster, hostname, job, instance) (\n"
            + sel("up", exp)
            + "\nor\n("
            + sel("up", node)
            + " and on (cluster, hostname) "
            + sel("up", exp)
            + ")\n)",
        ),
    ]
