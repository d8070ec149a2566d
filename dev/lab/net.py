"""Network namespaces, veth pairs and the bridge that joins the simulated hosts."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from .config import LabError
from .state import LabState
from .topology import Host, Topology


def _ip(*args: str) -> None:
    proc = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if proc.returncode != 0:
        raise LabError(f"`ip {' '.join(args)}` failed: {proc.stderr.strip()}")


def link_exists(name: str) -> bool:
    return Path(f"/sys/class/net/{name}").exists()


def netns_exists(name: str) -> bool:
    return Path(f"/run/netns/{name}").exists()


def namespaced_hosts(topo: Topology) -> list[Host]:
    """The simulated hosts and the load client: everything that gets a namespace and a veth."""
    return [h for h in (*topo.hosts, topo.client) if h.netns]


def lab_links(topo: Topology) -> list[str]:
    """Every root-namespace link the lab makes: its bridges and the host ends of its veth pairs."""
    bridges = [topo.bridge, topo.cluster_bridge, topo.other_bridge]
    veths = [v for h in namespaced_hosts(topo) for v in (h.veth, h.cluster_veth, h.other_veth)]
    return [n for n in bridges + veths if n]


def taken(topo: Topology) -> list[str]:
    """The lab's links (bridges, veths) and namespaces that exist already: ["link pwlab-br", "netns pwlab-h1"]."""
    everyone = namespaced_hosts(topo)
    found = [f"link {n}" for n in lab_links(topo) if link_exists(n)]
    return found + [f"netns {h.netns}" for h in everyone if h.netns and netns_exists(h.netns)]


def check_free(topo: Topology) -> None:
    names = taken(topo)
    if names:
        raise LabError(
            f"{', '.join(names)} already exist and no lab on record holds them: pick another --name, "
            f"or remove them with `ip link del <link>` / `ip netns del <namespace>` if nothing uses them"
        )


def _bridge(name: str, address: str | None, state: LabState, save: Callable[[], None]) -> None:
    _ip("link", "add", name, "type", "bridge")
    state.links.append(name)
    save()
    if address:
        _ip("addr", "add", address, "dev", name)
    _ip("link", "set", name, "up")


def _link(
    host: Host, veth: str, inside: str, address: str, bridge: str, state: LabState, save: Callable[[], None]
) -> None:
    """A veth pair: `inside` (with `address`) in the host's namespace, `veth` on `bridge` in the root one."""
    assert host.netns
    peer = f"{veth}p"
    _ip("link", "add", veth, "type", "veth", "peer", "name", peer)
    state.links.append(veth)
    save()
    _ip("link", "set", peer, "netns", host.netns)
    _ip("-n", host.netns, "link", "set", peer, "name", inside)
    _ip("-n", host.netns, "addr", "add", address, "dev", inside)
    _ip("-n", host.netns, "link", "set", inside, "up")
    _ip("link", "set", veth, "master", bridge)
    _ip("link", "set", veth, "up")


def create(topo: Topology, state: LabState, save: Callable[[], None]) -> None:
    """Bridge with the core address, then per host a namespace and a veth pair (eth0); with a cluster network,
    a second and a third bridge and per host eth1 (cluster network) and eth2 (other traffic), all up before
    any OSD starts (an OSD whose cluster address is not there yet fails to bind and exits). Records as it
    goes."""
    if not topo.namespaced:
        return
    assert topo.bridge is not None
    _bridge(topo.bridge, f"{topo.core_address}/{topo.prefix_len}", state, save)
    if topo.cluster_bridge and topo.other_bridge:
        _bridge(topo.cluster_bridge, None, state, save)
        _bridge(topo.other_bridge, f"{topo.other_sink}/{topo.other_prefix_len}", state, save)
    for host in namespaced_hosts(topo):
        assert host.netns and host.veth
        _ip("netns", "add", host.netns)
        state.netns.append(host.netns)
        save()
        _link(host, host.veth, "eth0", f"{host.address}/{topo.prefix_len}", topo.bridge, state, save)
        _ip("-n", host.netns, "link", "set", "lo", "up")
        if host.cluster_veth and host.cluster_address and topo.cluster_bridge:
            cidr = f"{host.cluster_address}/{topo.other_prefix_len}"
            _link(host, host.cluster_veth, "eth1", cidr, topo.cluster_bridge, state, save)
        if host.other_veth and host.other_address and topo.other_bridge:
            cidr = f"{host.other_address}/{topo.other_prefix_len}"
            _link(host, host.other_veth, "eth2", cidr, topo.other_bridge, state, save)


def destroy(state: LabState) -> list[str]:
    """Remove what `create` recorded; returns the problems met (never raises: `down` must finish)."""
    problems: list[str] = []
    for link in reversed(state.links):
        if link_exists(link):
            proc = subprocess.run(["ip", "link", "del", link], capture_output=True, text=True, timeout=30)
            if proc.returncode != 0 and link_exists(link):
                problems.append(f"link {link}: {proc.stderr.strip()}")
    for ns in reversed(state.netns):
        if netns_exists(ns):
            proc = subprocess.run(["ip", "netns", "del", ns], capture_output=True, text=True, timeout=30)
            if proc.returncode != 0:
                problems.append(f"netns {ns}: {proc.stderr.strip()}")
    return problems


def interface_bytes(link: str) -> tuple[int, int]:
    """(rx, tx) byte counters of a root-namespace link. A host's veth: rx is what the host sent."""
    base = Path(f"/sys/class/net/{link}/statistics")
    return int((base / "rx_bytes").read_text()), int((base / "tx_bytes").read_text())
