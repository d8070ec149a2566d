"""The verdicts end to end: each knob with the load that exposes it, the lab's Prometheus evaluating the lab
profile's rules, the alerts read from the lab's Alertmanager. Each saturation alert must fire for the OSD,
host and device (or NIC) the knob holds back, and no other saturation alert may fire; after `lab clear`
(the load still running) it must resolve. A healthy load raises none.

Figures are printed (run with -s): seconds from the load's start to firing, the labels, the other saturation
alerts seen, seconds from `clear` to resolved. The 180 s bars are the issue's.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from .labutil import REPO, LabHandle, run_lab
from .saturating import saturating

VICTIM = 1  # osd.1, on the lab's second host
FIRE_WITHIN = 180.0
RESOLVE_WITHIN = 180.0
HEALTHY_SECONDS = 100.0  # the lab profile's rate window + `for:` + a scrape (65 s), and more
ROWS: list[str] = []


def am_alerts(lab: LabHandle) -> list[dict[str, Any]]:
    """Alerts the lab's Alertmanager holds now (active, suppressed or not), as their label dicts."""
    url = lab.lab.monitoring_urls()["alertmanager"].rstrip("/") + "/api/v2/alerts"
    with urllib.request.urlopen(url, timeout=5) as resp:
        return [a["labels"] for a in json.load(resp)]


def saturation(alerts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [a for a in alerts if a.get("type") == "perfwatch" and "resource" in a]


def key(alert: dict[str, Any]) -> str:
    shown = ("alertname", "ceph_daemon", "hostname", "device", "direction", "reason")
    return " ".join(f"{k}={alert[k]}" for k in shown if k in alert)


class Load:
    """`python3 -m lab load` in the background, stopped when the test is done with it."""

    def __init__(self, lab: LabHandle, pattern: str, seconds: float) -> None:
        argv = [sys.executable, "-m", "lab", "--dir", str(lab.dir), "load", "--pattern", pattern]
        self.proc = subprocess.Popen(
            [*argv, "--seconds", str(int(seconds))], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.started = time.monotonic()

    def stop(self) -> str:
        """Stops it if still running; what it printed."""
        if self.proc.poll() is None:
            self.proc.terminate()  # `lab load` stops its bench on the way out
        out, _ = self.proc.communicate(timeout=60)
        return out.decode().strip()


@pytest.fixture(scope="module")
def quiet_lab(lab: LabHandle) -> Iterator[LabHandle]:
    with saturating(lab, "the saturation alert tests") as handle:
        yield handle
    print("\n| knob | alert | s to firing | labels | other saturation alerts | s to resolved |")
    print("| --- | --- | --- | --- | --- | --- |")
    print("\n".join(ROWS))


def wait_quiet(lab: LabHandle) -> None:
    """No saturation alert left from an earlier test (each must start from a quiet lab)."""
    deadline = time.monotonic() + RESOLVE_WITHIN
    while saturation(am_alerts(lab)):
        assert time.monotonic() < deadline, f"saturation alerts still active: {saturation(am_alerts(lab))}"
        time.sleep(5)


def knob_fires_then_resolves(
    lab: LabHandle, knob: list[str], pattern: str, expected: dict[str, str], label: str
) -> None:
    wait_quiet(lab)
    applied = run_lab(lab.dir, "saturate", *knob)
    assert applied.returncode == 0, applied.stderr
    load = Load(lab, pattern, FIRE_WITHIN + RESOLVE_WITHIN + 60)
    others: set[str] = set()
    fired: dict[str, Any] | None = None
    try:
        while fired is None and time.monotonic() - load.started < FIRE_WITHIN:
            time.sleep(5)
            for alert in saturation(am_alerts(lab)):
                if all(alert.get(k) == v for k, v in expected.items()):
                    fired = alert
                else:
                    others.add(key(alert))
        to_fire = time.monotonic() - load.started
        assert fired is not None, f"{expected} did not fire within {FIRE_WITHIN:.0f} s; others: {others}"
        cleared_at = time.monotonic()
        cleared = run_lab(lab.dir, "clear")
        assert cleared.returncode == 0, cleared.stderr
        resolved = False
        while not resolved and time.monotonic() - cleared_at < RESOLVE_WITHIN:
            time.sleep(5)
            now = saturation(am_alerts(lab))
            others.update(key(a) for a in now if not all(a.get(k) == v for k, v in expected.items()))
            resolved = not any(all(a.get(k) == v for k, v in expected.items()) for a in now)
        to_resolve = time.monotonic() - cleared_at
    finally:
        run_lab(lab.dir, "clear")
        load.stop()
    shown = ", ".join(
        f"{k}={fired[k]}" for k in ("ceph_daemon", "hostname", "device", "direction", "reason") if k in fired
    )
    ROWS.append(
        f"| {label} | {fired['alertname']} | {to_fire:.0f} | {shown} | {', '.join(sorted(others)) or 'none'} "
        f"| {to_resolve:.0f} |"
    )
    print(f"\n{ROWS[-1]}")
    assert resolved, f"{expected} still active {RESOLVE_WITHIN:.0f} s after `lab clear`"
    assert not others, f"other saturation alerts fired: {others}"


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


def test_media_knob_and_large_writes_fire_the_media_alert_for_the_osd_and_its_device_only(
    quiet_lab: LabHandle,
) -> None:
    host = quiet_lab.lab.topo.host_of(VICTIM).crush_name
    device = quiet_lab.lab.state.loops[str(VICTIM)].rsplit("/", 1)[1]
    knob_fires_then_resolves(
        quiet_lab,
        ["media", "--osd", str(VICTIM), "--iops", "300", "--mbps", "10"],
        "large-write",
        {"alertname": "PerfwatchOSDMediaSaturated", "ceph_daemon": f"osd.{VICTIM}", "hostname": host,
         "device": device},
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
