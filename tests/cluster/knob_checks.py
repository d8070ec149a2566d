"""What each lab knob does, seen the way an operator sees it (the host exporters, node_exporter, a raw TCP
stream), checked while its saturation alert is firing: the knob holds back the one OSD, device or link it
names and nothing else. Figures are printed (run with -s)."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time

from .labutil import LabHandle
from .scrape import Scrape, rate, scrape, scrape_since


def exporter_url(lab: LabHandle, osd: int, kind: str = "exporter") -> str:
    host = lab.lab.topo.host_of(osd)
    return lab.lab.exporter_urls()[f"{kind}.{host.crush_name}"]


def window(urls: list[str], seconds: float) -> tuple[list[Scrape], list[Scrape]]:
    """Two scrapes of each endpoint `seconds` apart, of two different collections."""
    first = [scrape(u) for u in urls]
    time.sleep(seconds)
    return first, [scrape_since(u, max(f.at for f in first) + 1) for u in urls]


def cpu_knob_holds_only_its_osd(lab: LabHandle, victim: int, cores: float) -> None:
    """The OSD runs at about its quota and is throttled; no other OSD has a limit or is throttled."""
    osds = [o.id for o in lab.lab.topo.osds]
    before, after = window([exporter_url(lab, o) for o in osds], 4)
    for osd, a, b in zip(osds, before, after, strict=True):
        daemon = f"osd.{osd}"
        used = rate(a, b, "ceph_perfwatch_daemon_cpu_seconds_total", ceph_daemon=daemon)
        throttled = rate(a, b, "ceph_perfwatch_daemon_cgroup_cpu_throttled_seconds_total", ceph_daemon=daemon)
        limit = b.total("ceph_perfwatch_daemon_cgroup_cpu_limit_cores", ceph_daemon=daemon)
        print(f"  {daemon}: {used:.3f} cores, limit {limit}, throttled {throttled:.3f} s/s")
        if osd == victim:
            assert limit == cores
            assert 0.7 * cores <= used <= 1.15 * cores
            assert throttled > 0.05, "throttled seconds must grow while the OSD wants more than its quota"
        else:
            assert limit is None and throttled == 0


def media_knob_fills_its_device(lab: LabHandle, victim: int, device: str) -> None:
    """The OSD's device is busy nearly all the time with requests queued (node_exporter's view)."""
    (a,), (b,) = window([exporter_url(lab, victim, "node-exporter")], 4)
    busy = rate(a, b, "node_disk_io_time_seconds_total", device=device)
    queue = rate(a, b, "node_disk_io_time_weighted_seconds_total", device=device)
    print(f"  {device}: {busy:.0%} busy, {queue:.1f} requests in flight")
    assert busy >= 0.9 and queue > 1


def tcp_send_rate(lab: LabHandle, netns: str, seconds: float) -> float:
    """Bytes per second one TCP stream carries from a host's namespace to the lab's core address."""
    listener = socket.create_server((lab.lab.topo.core_address, 0))
    port = listener.getsockname()[1]
    got = {"bytes": 0, "seconds": 0.0}

    def receive() -> None:
        conn, _ = listener.accept()
        with conn:
            t0 = time.monotonic()
            while chunk := conn.recv(1 << 20):
                got["bytes"] += len(chunk)
            got["seconds"] = time.monotonic() - t0

    thread = threading.Thread(target=receive, daemon=True)
    thread.start()
    sender = (
        "import socket, time\n"
        f"s = socket.create_connection(('{lab.lab.topo.core_address}', {port}))\n"
        f"end, block = time.monotonic() + {seconds}, b'x' * 65536\n"
        "while time.monotonic() < end: s.sendall(block)\n"
        "s.close()\n"
    )
    subprocess.run(["ip", "netns", "exec", netns, sys.executable, "-c", sender], check=True, timeout=seconds + 30)
    thread.join(timeout=30)
    listener.close()
    return got["bytes"] / got["seconds"]


def network_knob_caps_only_its_link(lab: LabHandle, shaped: str, device: str, rate_bytes: float) -> None:
    """The host exporters give the shaped link its tc rate as capacity (the others their speed); a raw TCP
    stream from the shaped host is held to the rate (public network: it leaves on eth0), from the others not."""
    for host in lab.lab.topo.hosts:
        url = lab.lab.exporter_urls()[f"exporter.{host.crush_name}"]
        rows = scrape(url).find("ceph_perfwatch_network_link_capacity_bytes", device=device)
        sources = [(labels["source"], value) for labels, value in rows]
        print(f"  {host.crush_name} {device} capacity: {sources}")
        if host.crush_name == shaped:
            assert sources == [("tc", rate_bytes)]
        else:
            assert sources and all(source == "speed" for source, _ in sources)
    if device != "eth0":
        return
    raw = {h.crush_name: tcp_send_rate(lab, h.netns or "", 1.0) for h in lab.lab.topo.hosts}
    print("  raw TCP send: " + ", ".join(f"{name} {value / 1e6:.1f} MB/s" for name, value in raw.items()))
    for name, value in raw.items():
        if name == shaped:
            assert value <= 1.1 * rate_bytes
        else:
            assert value > 5 * rate_bytes, f"{name} is not shaped and must not be held to {rate_bytes:g} B/s"
