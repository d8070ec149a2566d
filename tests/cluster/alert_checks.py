"""Saturation alerts read from a lab's Alertmanager: a knob and a load, the alert expected, how long it took
to fire and to resolve after `lab clear`, and every other saturation alert seen meanwhile (a table row each)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any

from lab.procs import stop_child

from .labutil import REPO, LabHandle, run_lab

FIRE_WITHIN = 180.0
RESOLVE_WITHIN = 180.0
POLL = 1.0  # seconds between reads of Alertmanager: an alert's times are measured to within this
# A load that must fire nothing runs this long: longer than the slowest saturation alert takes to fire
# under a knob (about 50 s, CPU: the lab profile's 30 s rate window, `for:` 30 s for CPU and 10 s for media
# and network, scrapes and rule hops).
HEALTHY_SECONDS = 60.0
ROWS: list[str] = []


def am_alerts(lab: LabHandle, annotations: bool = False) -> list[dict[str, Any]]:
    """Alerts the lab's Alertmanager holds now (active, suppressed or not), as their label dicts (with
    `annotations`: the labels and, under "annotations", the annotations)."""
    url = lab.lab.monitoring_urls()["alertmanager"].rstrip("/") + "/api/v2/alerts"
    with urllib.request.urlopen(url, timeout=5) as resp:
        found = json.load(resp)
    if annotations:
        return [{**a["labels"], "annotations": a["annotations"]} for a in found]
    return [a["labels"] for a in found]


def query(lab: LabHandle, expr: str) -> list[dict[str, Any]]:
    """An instant query of the lab's Prometheus: its result vector."""
    prometheus = lab.lab.monitoring_urls()["prometheus"].rstrip("/")
    url = f"{prometheus}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.load(r)["data"]["result"]


def saturation(alerts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [a for a in alerts if a.get("type") == "perfwatch" and "resource" in a]


def key(alert: dict[str, Any]) -> str:
    shown = ("alertname", "ceph_daemon", "hostname", "device", "kind", "network", "direction", "reason")
    return " ".join(f"{k}={alert[k]}" for k in shown if k in alert)


class Load:
    """`python3 -m lab load` in the background, stopped when the test is done with it."""

    def __init__(self, lab: LabHandle, pattern: str, seconds: float, args: tuple[str, ...] = ()) -> None:
        argv = [sys.executable, "-m", "lab", "--dir", str(lab.dir), "load", "--pattern", pattern, *args]
        self.proc = subprocess.Popen(
            [*argv, "--seconds", str(int(seconds))], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.started = time.monotonic()

    def stop(self) -> str:
        """Stops it if still running (`lab load` stops its bench on the way out); what it printed. One that
        does not end in 60 s fails the test with its threads' stacks (procs.stop_child)."""
        return stop_child(self.proc, grace=60.0)


def prometheus_alert_description(lab: LabHandle, labels: dict[str, str]) -> str | None:
    """The description of the alert with these labels as the lab's Prometheus rendered it at its last
    evaluation (Alertmanager holds the one sent last, up to a minute older)."""
    prometheus = lab.lab.monitoring_urls()["prometheus"].rstrip("/")
    with urllib.request.urlopen(f"{prometheus}/api/v1/alerts", timeout=10) as resp:
        alerts = json.load(resp)["data"]["alerts"]
    for alert in alerts:
        if all(alert["labels"].get(k) == v for k, v in labels.items()):
            return str(alert["annotations"].get("description", ""))
    return None


def saturated_verdicts(lab: LabHandle) -> list[str]:
    """The (OSD, resource) verdicts that read 1 now, as "osd.N resource"."""
    found = query(lab, "osd:ceph_perfwatch_saturation:verdict == 1")
    return sorted(f"{v['metric']['ceph_daemon']} {v['metric']['resource']}" for v in found)


def wait_quiet(lab: LabHandle) -> None:
    """No saturation alert, and no saturated verdict, left from an earlier test (each must start from a quiet
    lab: a verdict stays 1 for up to a rate window after its alert resolved)."""
    deadline = time.monotonic() + RESOLVE_WITHIN
    while saturation(am_alerts(lab)) or saturated_verdicts(lab):
        assert time.monotonic() < deadline, (
            f"still saturated: alerts {saturation(am_alerts(lab))}, verdicts {saturated_verdicts(lab)}"
        )
        time.sleep(POLL)


# What each verdict reads, busiest first: printed when an expected alert did not fire (the CI keeps only the
# output), to tell a knob that did not bite from a verdict that did not judge.
VERDICT_INPUTS = (
    "topk(6, host_nic:ceph_perfwatch_network_utilisation:ratio)",
    "topk(4, host_device:node_disk_busy:ratio)",
    "topk(4, osd:ceph_perfwatch_cpu_quota_usage:ratio)",
    "osd:ceph_perfwatch_saturation:verdict == 1",
)


def verdict_inputs(lab: LabHandle) -> str:
    lines = []
    for expr in VERDICT_INPUTS:
        try:
            rows = [(r["metric"], r["value"][1]) for r in query(lab, expr)]
        except Exception as exc:  # evidence for a failure already being reported
            rows = [({"error": repr(exc)}, "")]
        lines.append(f"{expr}: {rows}")
    return "\n".join(lines)


def knob_fires_then_resolves(
    lab: LabHandle,
    knob: list[str],
    pattern: str,
    expected: dict[str, str],
    label: str,
    on_fire: Callable[[dict[str, Any]], None] | None = None,
    load_args: tuple[str, ...] = (),
) -> None:
    """The knob, the load (`lab load --pattern pattern *load_args`); `expected` must fire (then `on_fire`
    gets it, with its annotations), no other saturation alert may, and it must resolve after `lab clear`."""
    wait_quiet(lab)
    applied = run_lab(lab.dir, "saturate", *knob)
    assert applied.returncode == 0, applied.stderr
    load = Load(lab, pattern, FIRE_WITHIN + RESOLVE_WITHIN + 60, load_args)
    others: set[str] = set()
    fired: dict[str, Any] | None = None
    try:
        while fired is None and time.monotonic() - load.started < FIRE_WITHIN:
            time.sleep(POLL)
            for alert in saturation(am_alerts(lab)):
                if all(alert.get(k) == v for k, v in expected.items()):
                    fired = alert
                else:
                    others.add(key(alert))
        to_fire = time.monotonic() - load.started
        assert fired is not None, (
            f"{expected} did not fire within {FIRE_WITHIN:.0f} s; others: {others}\n{verdict_inputs(lab)}"
        )
        if on_fire is not None:
            matching = [a for a in am_alerts(lab, annotations=True) if all(a.get(k) == v for k, v in expected.items())]
            on_fire(matching[0] if matching else fired)
        cleared_at = time.monotonic()
        cleared = run_lab(lab.dir, "clear")
        assert cleared.returncode == 0, cleared.stderr
        resolved = False
        while not resolved and time.monotonic() - cleared_at < RESOLVE_WITHIN:
            time.sleep(POLL)
            now = saturation(am_alerts(lab))
            others.update(key(a) for a in now if not all(a.get(k) == v for k, v in expected.items()))
            resolved = not any(all(a.get(k) == v for k, v in expected.items()) for a in now)
        to_resolve = time.monotonic() - cleared_at
    finally:
        run_lab(lab.dir, "clear")
        load.stop()
    shown = ", ".join(
        f"{k}={fired[k]}"
        for k in ("ceph_daemon", "hostname", "device", "kind", "network", "direction", "reason")
        if k in fired
    )
    ROWS.append(
        f"| {label} | {fired['alertname']} | {to_fire:.0f} | {shown} | {', '.join(sorted(others)) or 'none'} "
        f"| {to_resolve:.0f} |"
    )
    print(f"\n{ROWS[-1]}")
    assert resolved, f"{expected} still active {RESOLVE_WITHIN:.0f} s after `lab clear`"
    assert not others, f"other saturation alerts fired: {others}"
