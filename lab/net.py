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


def taken(topo: Topology) -> list[str]:
    """The lab's links (bridge, veths) and namespaces that exist already: ["link pwlab-br", "netns pwlab-h1"]."""
    everyone = namespaced_hosts(topo)
    found = [f"link {n}" for n in ([topo.bridge] + [h.veth for h in everyone]) if n and link_exists(n)]
    return found + [f"netns {h.netns}" for h in everyone if h.netns and netns_exists(h.netns)]


def check_free(topo: Topology) -> None:
    names = taken(topo)
    if names:
        raise LabError(
            f"{', '.join(names)} already exist and no lab on record holds them: pick another --name, "
            f"or remove them with `ip link del <link>` / `ip netns del <namespace>` if nothing uses them"
        )


def create(topo: Topology, state: LabState, save: Callable[[], None]) -> None:
    """Bridge with the core address, then per host a namespace and a veth pair. Records as it goes."""
    if not topo.namespaced:
        return
    assert topo.bridge is not None
    _ip("link", "add", topo.bridge, "type", "bridge")
    state.links.append(topo.bridge)
    save()
    _ip("addr", "add", f"{topo.core_address}/{topo.prefix_len}", "dev", topo.bridge)
    _ip("link", "set", topo.bridge, "up")
    for host in namespaced_hosts(topo):
        assert host.netns and host.veth
        _ip("netns", "add", host.netns)
        state.netns.append(host.netns)
        save()
        peer = f"{host.veth}p"
        _ip("link", "add", host.veth, "type", "veth", "peer", "name", peer)
        state.links.append(host.veth)
        save()
        _ip("link", "set", peer, "netns", host.netns)
        _ip("-n", host.netns, "link", "set", peer, "name", "eth0")
        _ip("-n", host.netns, "addr", "add", f"{host.address}/{topo.prefix_len}", "dev", "eth0")
        _ip("-n", host.netns, "link", "set", "eth0", "up")
        _ip("-n", host.netns, "link", "set", "lo", "up")
        _ip("link", "set", host.veth, "master", topo.bridge)
        _ip("link", "set", host.veth, "up")


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
