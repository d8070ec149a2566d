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
    address: str  # the address the host's daemons bind to


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
        net = f"198.18.{config.subnet_index}"
        core, bridge = f"{net}.1", f"{config.name}-br"
        hosts = tuple(
            Host(
                index=i,
                crush_name=f"{config.name}-host{i}",
                netns=f"{config.name}-h{i}",
                veth=f"{config.name}-h{i}",
                address=f"{net}.{10 + i}",
            )
            for i in range(1, config.hosts + 1)
        )
        client = Host(
            index=0, crush_name="client", netns=f"{config.name}-cl", veth=f"{config.name}-cl", address=f"{net}.250"
        )
    osds = tuple(Osd(id=i, host=hosts[i % len(hosts)]) for i in range(config.osds))
    return Topology(core_address=core, bridge=bridge, prefix_len=24, hosts=hosts, osds=osds, client=client)
