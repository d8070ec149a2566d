"""Recording rules of the network verdict: which NIC carries which of Ceph's networks, so that only those
NICs are judged, and each saturated NIC says which network it carries.

The module's `ceph_perfwatch_osd_network_info` (each up OSD's public and cluster address) meets the host
exporter's `ceph_perfwatch_network_address_info` (the device holding each address and its carrier) on
(cluster, hostname, address), the OSD's own host only. PromQL joins one-to-many only, so every join goes
through a side made unique first (`topk by` per OSD, `max by` per address or NIC), one network at a time. An
OSD whose address is not placed is judged by every NIC of its host (FALLBACK). Why: docs/decisions/network-carriers.md.
"""

from __future__ import annotations

from .profiles import Profile
from .promql import OSD_HOST, Rule, by, rule, sel, with_label

NETWORKS = ("public", "cluster")
BOTH = "public+cluster"  # one NIC carries both (a cluster without a cluster network of its own)
UNKNOWN = "unknown"  # a NIC of a host where some OSD's address could not be placed (judged as before)
# the OSD heartbeat each network carries (the net probe's metric): front on public, back on cluster
PING_METRIC = {"public": "ping_front", "cluster": "ping_back"}

OSD_NETWORK = "osd:ceph_perfwatch_osd_network:info"
CARRIER = "host_address:ceph_perfwatch_address_carrier:info"
NIC_NETWORK = "host_nic:ceph_perfwatch_ceph_network:info"
NIC_ROLE = "host_nic:ceph_perfwatch_nic_networks:info"
FALLBACK = "osd:ceph_perfwatch_network_fallback:info"
ONE_HOST_PER_OSD = "topk by (cluster, ceph_daemon) (1, osd:ceph_perfwatch_osd:info)"


def per_osd(per_nic: str) -> str:
    """A per-NIC series (cluster, hostname, device) carried over to the OSDs whose addresses those NICs carry
    (max over their NICs); an OSD in the fallback takes every NIC of its host."""
    per_address = by(
        "cluster, hostname, address",
        "max",
        f"{CARRIER}\n* on (cluster, hostname, device) group_left ()\n{by('cluster, hostname, device', 'max', per_nic)}",
    )
    return by(
        OSD_HOST,
        "max",
        f"{OSD_NETWORK}\n* on (cluster, hostname, address) group_left ()\n{per_address}\nor\n"
        f"{FALLBACK}\n* on (cluster, hostname) group_left ()\n{by('cluster, hostname', 'max', per_nic)}",
    )


def network_topology_rules(p: Profile) -> list[Rule]:
    """Who carries what: per OSD its addresses on its host, per address its carriers, per NIC the networks
    of the OSDs' addresses it carries. Only info series (the OSD map's addresses, the hosts' devices): they
    change with the hardware and the map, not with the load (group perfwatch-topology, after
    osd:ceph_perfwatch_osd:info)."""
    mod, exp = p.module_selector, p.exporter_selector

    def carried(network: str) -> str:
        addresses = by("cluster, hostname, address", "max", f'{OSD_NETWORK}{{network="{network}"}}')
        nics = by(
            "cluster, hostname, device",
            "max",
            f"{CARRIER}\n* on (cluster, hostname, address) group_left ()\n{addresses}",
        )
        return with_label(nics, "network", network)

    return [
        # each up OSD's address per network, on the host the exporters place it on
        rule(
            OSD_NETWORK,
            by("cluster, ceph_daemon, network, address", "max", sel("ceph_perfwatch_osd_network_info", mod))
            + f"\n* on (cluster, ceph_daemon) group_left (hostname)\n{ONE_HOST_PER_OSD}",
        ),
        # each address of a host and the device that carries its traffic, as `device` (node_exporter's name)
        rule(
            CARRIER,
            by(
                "cluster, hostname, address, device",
                "max",
                f'label_replace({sel("ceph_perfwatch_network_address_info", exp)}, "device", "$1", "carrier", "(.+)")',
            ),
        ),
        # each NIC that carries an OSD's public or cluster address on the OSD's host, one row per network
        rule(NIC_NETWORK, "\nor\n".join(carried(n) for n in NETWORKS)),
        # an OSD network none of whose addresses is held, on the OSD's host, by a device the rules judge (an
        # address the host does not hold, a pod network, an exporter too old to tell, a carrier the
        # nic_selector leaves out); and every OSD of a cluster whose module reports no addresses at all (a
        # module too old): the network verdict judges every NIC of its host for it, as if blind to networks. (An
        # OSD the module does not report while it reports others is down in the OSD map: no traffic, no verdict.)
        rule(
            FALLBACK,
            f"{OSD_NETWORK}\nunless on (cluster, ceph_daemon, network)\n"
            f"({OSD_NETWORK} and on (cluster, hostname, address) {CARRIER}{{{p.nic_selector}}})\nor\n"
            + with_label(
                "osd:ceph_perfwatch_osd:info\nunless on (cluster)\n" + sel("ceph_perfwatch_osd_network_info", mod),
                "network",
                UNKNOWN,
            ),
        ),
    ]


def nic_role_rule() -> Rule:
    """One row per judged NIC: which network it carries. Read after host_nic:ceph_perfwatch_network_utilisation:ratio
    (the NICs of a host with an OSD in the fallback)."""

    def nic_of(network: str) -> str:
        return f'{NIC_NETWORK}{{network="{network}"}}'

    on_nic = " on (cluster, hostname, device) "
    public, cluster = nic_of("public"), nic_of("cluster")
    roles = [
        with_label(f"({public} and{on_nic}{cluster})", "network", BOTH),
        f"({public} unless{on_nic}{cluster})",
        f"({cluster} unless{on_nic}{public})",
        # a host with an OSD in the fallback: its NICs that carry no known network of Ceph, judged as before
        with_label(
            by("cluster, hostname, device", "max", "host_nic:ceph_perfwatch_network_utilisation:ratio")
            + f" * 0 + 1\nunless{on_nic}{NIC_NETWORK}\nand on (cluster, hostname) {FALLBACK}",
            "network",
            UNKNOWN,
        ),
    ]
    # one row per judged NIC: network = public | cluster | public+cluster | unknown
    return rule(NIC_ROLE, "\nor\n".join(roles))


def heartbeat_rules() -> list[Rule]:
    """Evidence for the dashboards and the alert's text, no verdict: per NIC, the slowest heartbeat round
    trip of the OSDs whose address it carries. Read after osd:ceph_perfwatch_heartbeat_ping:seconds."""
    pings = 'osd:ceph_perfwatch_heartbeat_ping:seconds{metric=~"ping_front|ping_back"}'
    for network, metric in PING_METRIC.items():
        pings = f'label_replace({pings}, "network", "{network}", "metric", "{metric}")'
    return [
        # evidence: per NIC, the slowest heartbeat round trip of the OSDs whose address it carries, on that
        # address's network (front pings for public, back pings for cluster)
        rule(
            "host_nic:ceph_perfwatch_heartbeat_ping:seconds",
            by(
                "cluster, hostname, device",
                "max",
                f"{CARRIER}\n* on (cluster, hostname, address) group_left ()\n"
                + by(
                    "cluster, hostname, address",
                    "max",
                    f"{OSD_NETWORK}\n* on (cluster, ceph_daemon, network) group_left ()\n{pings}",
                ),
            ),
        ),
    ]


def network_verdict_rules(p: Profile) -> list[Rule]:
    """A NIC that carries Ceph's traffic at its capacity in one direction, with the network it carries; and
    per OSD, any NIC that carries one of its networks (the `network` part of the OSD's verdict)."""
    return [
        rule(
            "host_nic:ceph_perfwatch_network_saturated:bool",
            f"(host_nic:ceph_perfwatch_network_utilisation:ratio >= bool {p.network_utilisation_ratio})\n"
            f"* on (cluster, hostname, device) group_left (network)\n{NIC_ROLE}",
        ),
        rule("osd:ceph_perfwatch_network_saturated:bool", per_osd("host_nic:ceph_perfwatch_network_saturated:bool")),
    ]
