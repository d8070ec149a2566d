"""The verdicts end to end: each knob with the load that exposes it, the lab's Prometheus evaluating the lab
profile's rules, the alerts read from the lab's Alertmanager. Each saturation alert must fire for the OSD,
host and device (or NIC) the knob holds back, and no other saturation alert may fire; after `lab clear`
(the load still running) it must resolve. A healthy load raises none.

Figures are printed (run with -s): seconds from the load's start to firing, the labels, the other saturation
alerts seen, seconds from `clear` to resolved. The 180 s bars are the issue's.
"""

from __future__ import annotations

import json
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator

import pytest

from .alert_checks import HEALTHY_SECONDS, ROWS, Load, am_alerts, key, knob_fires_then_resolves, saturation, wait_quiet
from .labutil import LabHandle
from .saturating import saturating

VICTIM = 1  # osd.1, on the lab's second host


@pytest.fixture(scope="module")
def quiet_lab(lab: LabHandle) -> Iterator[LabHandle]:
    with saturating(lab, "the saturation alert tests") as handle:
        yield handle
    print("\n| knob | alert | s to firing | labels | other saturation alerts | s to resolved |")
    print("| --- | --- | --- | --- | --- | --- |")
    print("\n".join(ROWS))


@pytest.mark.every_release
def test_cpu_knob_and_small_random_writes_fire_the_osd_cpu_alert_only(quiet_lab: LabHandle) -> None:
    host = quiet_lab.lab.topo.host_of(VICTIM).crush_name
    knob_fires_then_resolves(
        quiet_lab,
        ["cpu", "--osd", str(VICTIM), "--cores", "0.2"],
        "small-random-write",
        {"alertname": "PerfwatchOSDCPUSaturated", "ceph_daemon": f"osd.{VICTIM}", "hostname": host,
         "reason": "cgroup_limit"},
        f"cpu 0.2 cores on osd.{VICTIM}, 4 KiB random writes",
    )  # fmt: skip


def test_media_knob_and_large_writes_fire_the_media_alert_for_the_osds_device_only(
    quiet_lab: LabHandle,
) -> None:
    host = quiet_lab.lab.topo.host_of(VICTIM).crush_name
    device = quiet_lab.lab.state.loops[str(VICTIM)].rsplit("/", 1)[1]
    knob_fires_then_resolves(
        quiet_lab,
        ["media", "--osd", str(VICTIM), "--iops", "300", "--mbps", "10"],
        "large-write",
        # the lab's loop devices say they rotate, on a transport that cannot tell: kind unknown, judged as hdd
        {"alertname": "PerfwatchDeviceSaturated", "hostname": host, "device": device, "kind": "unknown"},
        f"media 300 IOPS, 10 MB/s on osd.{VICTIM}, 4 MiB writes",
    )  # fmt: skip


def test_network_knob_and_large_reads_fire_the_network_alert_for_the_hosts_nic_only(quiet_lab: LabHandle) -> None:
    host = quiet_lab.lab.topo.host_of(VICTIM).crush_name
    knob_fires_then_resolves(
        quiet_lab,
        ["network", "--host", host, "--rate", "80mbit"],
        "large-read",
        {"alertname": "PerfwatchHostNetworkSaturated", "hostname": host, "device": "eth0", "direction": "transmit"},
        f"network 80mbit on {host}, 4 MiB reads",
    )


def test_a_healthy_load_raises_no_saturation_alert(quiet_lab: LabHandle) -> None:
    """4 KiB random writes with one in flight: a closed loop that cannot queue at any device, CPU or link."""
    wait_quiet(quiet_lab)
    load = Load(quiet_lab, "light-random-write", HEALTHY_SECONDS)
    seen: set[str] = set()
    try:
        while load.proc.poll() is None:
            seen.update(key(a) for a in saturation(am_alerts(quiet_lab)))
            time.sleep(5)
    finally:
        out = load.stop()
    ROWS.append(
        f"| none (healthy: {out.removeprefix('lab: ')}) | none expected | | | {', '.join(sorted(seen)) or 'none'} | |"
    )
    print(f"\n{ROWS[-1]}")
    assert load.proc.returncode == 0
    assert not seen, f"saturation alerts under a healthy load: {seen}"
    # and not because the rules are blind: a verdict for every OSD and resource, every one 0
    prometheus = quiet_lab.lab.monitoring_urls()["prometheus"].rstrip("/")
    url = f"{prometheus}/api/v1/query?" + urllib.parse.urlencode({"query": "osd:ceph_perfwatch_saturation:verdict"})
    with urllib.request.urlopen(url, timeout=5) as resp:
        verdicts = json.load(resp)["data"]["result"]
    assert len(verdicts) == 3 * len(quiet_lab.lab.topo.osds), verdicts
    assert all(float(v["value"][1]) == 0 for v in verdicts), verdicts
