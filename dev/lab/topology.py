"""Where every daemon of the lab lives: which simulated host, which network namespace, which address.

Pure data derived from a LabConfig, so the layout can be unit-tested without touching the machine.
"""

from __future__ import annotations

import dataclasses

from .config import LabConfig


@dataclasses.dataclass(frozen=True)
class Host:
    index: int  # 1-based
    crush_name: str  # the CRUSH host bucket the host's OSDs go under
    netns: str | None  # None: the root namespace (the --hosts 1 fast path)
    veth: str | None  # root-namespace end of the host's veth pair, enslaved to the bridge
    address: str  # the address the host's daemons bind to (Ceph's public network)
    # --cluster-network: the host's link for Ceph's cluster network (eth1) and one for other traffic (eth2):
    # the root-namespace end of each veth pair, and the host's address on it
    cluster_veth: str | None = None
    cluster_address: str | None = None
    other_veth: str | None = None
    other_address: str | None = None


@dataclasses.dataclass(frozen=True)
class Osd:
    id: int
    host: Host


@dataclasses.dataclass(frozen=True)
class Topology:
    core_address: str  # mon, mgrs and RGW bind here
    bridge: str | None
    prefix_len: int
    hosts: tuple[Host, ...]
    osds: tuple[Osd, ...]
    client: Host  # where `lab load` runs its client: a namespace of its own when hosts are namespaced
    # --cluster-network: the bridges of the hosts' eth1 (no address: only the hosts are on it) and eth2
    # (whose root-namespace address, `other_sink`, receives the traffic `lab saturate network --network
    # other` makes), and the cluster network's CIDR
    cluster_bridge: str | None = None
    other_bridge: str | None = None
    other_sink: str | None = None
    cluster_cidr: str | None = None
    other_prefix_len: int = 25

    @property
    def namespaced(self) -> bool:
        return self.bridge is not None

    def host_named(self, name: str) -> Host:
        """A host by its index ("2"), short name ("h2", "host2") or CRUSH name ("pwlab-host2")."""
        for host in self.hosts:
            if name in (str(host.index), f"h{host.index}", f"host{host.index}", host.crush_name):
                return host
        names = ", ".join(h.crush_name for h in self.hosts)
        raise KeyError(f"no host {name!r} in this lab (hosts: {names}; or give the index 1..{len(self.hosts)})")

    def osds_on(self, host: Host) -> list[int]:
        return [o.id for o in self.osds if o.host == host]

    def host_of(self, osd_id: int) -> Host:
        for osd in self.osds:
            if osd.id == osd_id:
                return osd.host
        raise KeyError(f"no osd.{osd_id} in this lab")


def plan(config: LabConfig) -> Topology:
    """Hosts and OSD placement. OSDs are spread round-robin, so each host gets one before any gets two."""
    if config.hosts == 1:
        host = Host(index=1, crush_name=f"{config.name}-host1", netns=None, veth=None, address="127.0.0.1")
        hosts: tuple[Host, ...] = (host,)
        core, bridge = "127.0.0.1", None
        client = Host(index=0, crush_name="client", netns=None, veth=None, address="127.0.0.1")
    else:
        net, back = f"198.18.{config.subnet_index}", f"198.19.{config.subnet_index}"
        core, bridge = f"{net}.1", f"{config.name}-br"
        split = config.cluster_network
        hosts = tuple(
            Host(
                index=i,
                crush_name=f"{config.name}-host{i}",
                netns=f"{config.name}-h{i}",
                veth=f"{config.name}-h{i}",
                address=f"{net}.{10 + i}",
                # .10+i of the lower /25 for the cluster network, .140+i of the upper one for other traffic
                cluster_veth=f"{config.name}-c{i}" if split else None,
                cluster_address=f"{back}.{10 + i}" if split else None,
                other_veth=f"{config.name}-o{i}" if split else None,
                other_address=f"{back}.{140 + i}" if split else None,
            )
            for i in range(1, config.hosts + 1)
        )
        client = Host(
            index=0, crush_name="client", netns=f"{config.name}-cl", veth=f"{config.name}-cl", address=f"{net}.250"
        )
    osds = tuple(Osd(id=i, host=hosts[i % len(hosts)]) for i in range(config.osds))
    if config.cluster_network and config.hosts > 1:
        back = f"198.19.{config.subnet_index}"
        return Topology(
            core_address=core, bridge=bridge, prefix_len=24, hosts=hosts, osds=osds, client=client,
            cluster_bridge=f"{config.name}-cb", other_bridge=f"{config.name}-ob", other_sink=f"{back}.129",
            cluster_cidr=f"{back}.0/25",
        )  # fmt: skip
    return Topology(core_address=core, bridge=bridge, prefix_len=24, hosts=hosts, osds=osds, client=client)
