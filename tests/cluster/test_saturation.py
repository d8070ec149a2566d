"""The lab's bottleneck knobs, seen the way an operator sees them: through the perfwatch host exporter
and node_exporter, while client load runs from the lab's client namespace. Each knob is cleared again.

Figures are printed (run with -s to see them); the asserts hold the issue's acceptance bars.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from .labutil import LabHandle, run_lab
from .saturating import saturating
from .scrape import Scrape, client_load, rate, scrape, scrape_since

VICTIM = 1  # osd.1 lives on the lab's second host
CPU_QUOTA = 0.2
MEDIA_IOPS, MEDIA_MBPS = 300, 10
NET_RATE, NET_BYTES = "80mbit", 10e6


@pytest.fixture(scope="module")
def sat(lab: LabHandle) -> Iterator[LabHandle]:
    with saturating(lab, "the saturation tests") as handle:
        yield handle


# When a knob last changed (time.monotonic()): the exporters' answers must come from a later collection.
_changed_at = [0.0]


def knob(lab: LabHandle, *args: str) -> None:
    proc = run_lab(lab.dir, *args)
    assert proc.returncode == 0, proc.stderr
    _changed_at[0] = time.monotonic()
    print(f"\n{proc.stdout.strip()}")


def exporter_url(lab: LabHandle, osd: int, kind: str = "exporter") -> str:
    host = lab.lab.topo.host_of(osd)
    return lab.lab.exporter_urls()[f"{kind}.{host.crush_name}"]


def window(urls: list[str], seconds: float) -> tuple[list[Scrape], list[Scrape]]:
    """Two scrapes of each exporter `seconds` apart, both of collections made after the last knob change."""
    first = [scrape_since(u, _changed_at[0]) for u in urls]
    time.sleep(seconds)
    return first, [scrape_since(u, max(f.at for f in first) + 1) for u in urls]


def osd_cpu(a: Scrape, b: Scrape, osd: int) -> float:
    return rate(a, b, "ceph_perfwatch_daemon_cpu_seconds_total", ceph_daemon=f"osd.{osd}")


def throttled(a: Scrape, b: Scrape, osd: int) -> float:
    return rate(a, b, "ceph_perfwatch_daemon_cgroup_cpu_throttled_seconds_total", ceph_daemon=f"osd.{osd}")


def test_cpu_knob_holds_one_osd_at_its_quota_and_throttles_only_it(sat: LabHandle) -> None:
    osds = [o.id for o in sat.lab.topo.osds]
    urls = [exporter_url(sat, o) for o in osds]
    knob(sat, "saturate", "cpu", "--osd", str(VICTIM), "--cores", str(CPU_QUOTA))
    try:
        with client_load(sat, "small-random-write", 20) as on:
            time.sleep(4)
            before, after = window(urls, 10)
        a, b = before[VICTIM], after[VICTIM]
        cpu, thr = osd_cpu(a, b, VICTIM), throttled(a, b, VICTIM)
        print(f"cpu knob on: osd.{VICTIM} {cpu:.3f} cores (quota {CPU_QUOTA}), throttled {thr:.3f} s/s; {on.line}")
        assert b.total("ceph_perfwatch_daemon_cgroup_cpu_limit_cores", ceph_daemon=f"osd.{VICTIM}") == CPU_QUOTA
        assert 0.7 * CPU_QUOTA <= cpu <= 1.15 * CPU_QUOTA
        assert thr > 0.05, "throttled seconds must grow while the OSD wants more than its quota"
        for other in osds:
            if other == VICTIM:
                continue
            oa, ob = before[other], after[other]
            print(f"  osd.{other}: {osd_cpu(oa, ob, other):.3f} cores, throttled {throttled(oa, ob, other):.3f} s/s")
            assert ob.total("ceph_perfwatch_daemon_cgroup_cpu_limit_cores", ceph_daemon=f"osd.{other}") is None
            assert throttled(oa, ob, other) == 0
    finally:
        knob(sat, "clear", "cpu")
    with client_load(sat, "small-random-write", 12) as off:
        time.sleep(3)
        (a,), (b,) = window([urls[VICTIM]], 6)
    cpu, thr = osd_cpu(a, b, VICTIM), throttled(a, b, VICTIM)
    print(f"cpu knob cleared: osd.{VICTIM} {cpu:.3f} cores, throttled {thr:.3f} s/s; {off.line}")
    assert b.total("ceph_perfwatch_daemon_cgroup_cpu_limit_cores", ceph_daemon=f"osd.{VICTIM}") is None
    assert thr == 0 and cpu > 1.25 * CPU_QUOTA
    assert off.iops > on.iops


def osd_bench_throughput(lab: LabHandle, osd: int) -> float:
    """Bytes per second of the OSD's own bench: 40 MiB in 4 MiB writes. Large writes go to the device
    itself (4 KiB ones are deferred through the RocksDB WAL in batches, which an IOPS cap hardly slows:
    their figure under the knob swung from 306 to 1,606 IOPS between runs), so the knob's 10 MB/s
    decides this figure: about 0.2 s unthrottled, 4 s throttled."""
    return float(lab.ceph("tell", f"osd.{osd}", "bench", str(40 << 20), str(4 << 20), timeout=120)["bytes_per_sec"])


def disk_rates(lab: LabHandle, device: str, seconds: float) -> tuple[float, float]:
    """(utilisation 0..1, average queue length) of a device from node_exporter over `seconds`."""
    (a,), (b,) = window([exporter_url(lab, VICTIM, "node-exporter")], seconds)
    util = rate(a, b, "node_disk_io_time_seconds_total", device=device)
    queue = rate(a, b, "node_disk_io_time_weighted_seconds_total", device=device)
    return util, queue


def test_media_knob_makes_the_osd_device_busy_and_its_bench_slow(sat: LabHandle) -> None:
    info = scrape(exporter_url(sat, VICTIM)).find(
        "ceph_perfwatch_osd_device_info", ceph_daemon=f"osd.{VICTIM}", role="block", via="direct"
    )
    assert len(info) == 1, info
    device = info[0][0]["device"]
    assert device == sat.lab.state.loops[str(VICTIM)].rsplit("/", 1)[1]  # the exporter's map is right
    with client_load(sat, "small-random-write", 12):
        time.sleep(3)
        util_off, queue_off = disk_rates(sat, device, 6)
    bench_off = osd_bench_throughput(sat, VICTIM)
    print(
        f"\nmedia knob off: {device} util {util_off:.0%}, queue {queue_off:.2f}; osd bench {bench_off / 1e6:.1f} MB/s"
    )
    knob(sat, "saturate", "media", "--osd", str(VICTIM), "--iops", str(MEDIA_IOPS), "--mbps", str(MEDIA_MBPS))
    try:
        # A throttled device fills its queue within a few seconds of load; measure after that.
        with client_load(sat, "small-random-write", 20) as on:
            time.sleep(6)
            util_on, queue_on = disk_rates(sat, device, 10)
        bench_on = osd_bench_throughput(sat, VICTIM)
        print(f"media knob on: {device} util {util_on:.0%}, queue {queue_on:.2f}; osd bench {bench_on / 1e6:.1f} MB/s")
        print(f"  {on.line}")
        assert util_on >= 0.9, f"{device} only {util_on:.0%} busy under the media knob"
        assert queue_on > queue_off
        assert bench_on < 0.2 * bench_off
    finally:
        knob(sat, "clear", "media")
    bench_cleared = osd_bench_throughput(sat, VICTIM)
    print(f"media knob cleared: osd bench {bench_cleared / 1e6:.1f} MB/s")
    assert bench_cleared > 3 * bench_on


def host_send_rates(lab: LabHandle, seconds: float) -> dict[str, float]:
    """Bytes per second each host sent, from the root-namespace end of its veth (rx there)."""
    from lab import net

    hosts = lab.lab.topo.hosts
    first = {h.crush_name: net.interface_bytes(h.veth or "")[0] for h in hosts}
    t0 = time.monotonic()
    time.sleep(seconds)
    second = {h.crush_name: net.interface_bytes(h.veth or "")[0] for h in hosts}
    elapsed = time.monotonic() - t0
    return {name: (second[name] - first[name]) / elapsed for name in first}


def capacity(lab: LabHandle, osd: int) -> list[tuple[dict[str, str], float]]:
    url = exporter_url(lab, osd)
    return scrape_since(url, _changed_at[0]).find("ceph_perfwatch_network_link_capacity_bytes", device="eth0")


def test_network_knob_caps_one_host_link_and_the_aggregate_drops(sat: LabHandle) -> None:
    shaped = sat.lab.topo.host_of(VICTIM).crush_name
    with client_load(sat, "large-read", 10) as off:
        time.sleep(3)
        rates_off = host_send_rates(sat, 5)
    print(f"\nnetwork knob off: {_mb(rates_off)}; {off.line}")
    knob(sat, "saturate", "network", "--host", shaped, "--rate", NET_RATE)
    try:
        [(labels, value)] = capacity(sat, VICTIM)
        assert (labels["source"], value) == ("tc", NET_BYTES)  # the shaped capacity, for the rules
        unshaped = capacity(sat, 0)
        assert unshaped and all(lbl["source"] == "speed" for lbl, _ in unshaped)
        with client_load(sat, "large-read", 12) as on:
            time.sleep(3)
            rates_on = host_send_rates(sat, 6)
        print(f"network knob on ({NET_RATE} on {shaped}): {_mb(rates_on)}; {on.line}")
        assert rates_on[shaped] <= 1.05 * NET_BYTES
        assert on.mb_per_second < 0.6 * off.mb_per_second
        # Ceph's client waits on the slow host, so every host sends less under a closed-loop load. Whether
        # the other hosts' links are unaffected is asked of the links themselves: a raw TCP send from each.
        raw = {h.crush_name: tcp_send_rate(sat, h.netns or "", 2.0) for h in sat.lab.topo.hosts}
        print(f"  raw TCP send from each host: {_mb(raw)}")
        assert raw[shaped] <= 1.1 * NET_BYTES
        for name, value in raw.items():
            if name != shaped:
                assert value > 5 * NET_BYTES, f"{name} is not shaped and must not be held to {NET_RATE}"
    finally:
        knob(sat, "clear", "network")
    restored = capacity(sat, VICTIM)
    assert restored and all(lbl["source"] == "speed" for lbl, _ in restored)
    with client_load(sat, "large-read", 8) as cleared:
        time.sleep(2)
        rates_cleared = host_send_rates(sat, 4)
    print(f"network knob cleared: {_mb(rates_cleared)}; {cleared.line}")
    assert rates_cleared[shaped] > 1.5 * NET_BYTES


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


def _mb(rates: dict[str, float]) -> str:
    return ", ".join(f"{name} {value / 1e6:.1f} MB/s" for name, value in rates.items())
