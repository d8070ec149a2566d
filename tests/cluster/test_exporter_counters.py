"""The OSDs' counters collected by the host exporters instead of the module (for large clusters): a
lab of its own started with `--exporter-counters` (each host exporter runs with --daemon-counters, the
module's daemon_counters_source is `exporters`). The module's endpoint then carries no OSD counter, each
exporter its own host's OSDs', and the lab's Prometheus evaluates the rules from them with no input missing.
With both sources on (the option set back to `module`), nothing is counted twice and
PerfwatchDaemonCountersFromTwoSources fires."""

from __future__ import annotations

import time
import urllib.request
from collections.abc import Iterator

import pytest

from .alert_checks import am_alerts, query
from .labutil import LabHandle, side_lab, wait_until

pytestmark = [pytest.mark.own_lab]
OSDS = 2
COUNTER = "ceph_perfwatch_bluestore_onodes"  # a gauge every OSD's counters have


@pytest.fixture(scope="module")
def counted_lab() -> Iterator[LabHandle]:
    with side_lab("pwcount", "--hosts", "2", "--osds", str(OSDS), "--exporter-counters", timeout=300) as (d, _):
        yield LabHandle(d)


def text(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read().decode()


def active_module_metrics(lab: LabHandle) -> str:
    """/metrics of the mgr that serves them (the standby answers empty)."""
    return max((text(url + "metrics") for url in lab.lab.module_urls().values()), key=len)


def by_job(lab: LabHandle, expr: str) -> dict[str, float]:
    return {r["metric"]["job"]: float(r["value"][1]) for r in query(lab, f"count by (job) ({expr})")}


def test_the_exporters_collect_every_osds_counters_and_the_module_none(counted_lab: LabHandle) -> None:
    lab = counted_lab
    wait_until(lambda: by_job(lab, COUNTER) == {"perfwatch-host": OSDS}, 90, "the exporters' OSD counters")
    module = active_module_metrics(lab)
    assert "ceph_perfwatch_osd_network_info{" in module, "the module still exports what only it knows"
    # no OSD's: the module still reads the RGWs' counters (the exporters read OSDs only), once the RGW reports
    assert COUNTER not in module and 'ceph_perfwatch_daemon_up{ceph_daemon="osd.' not in module, module[:2000]
    exported = {name: text(url) for name, url in lab.lab.exporter_urls().items() if name.startswith("exporter.")}
    per_host = {name: body.count(f"\n{COUNTER}{{") for name, body in exported.items()}
    assert sorted(per_host.values()) == [0, 1, 1], per_host  # the core's exporter has no OSD
    # the rules read them: every OSD's commit latency, up, and no input missing for either
    commit = wait_until(
        lambda: (r := query(lab, "osd:ceph_perfwatch_commit_latency:seconds")) and len(r) == OSDS and r,
        90,
        "the commit latency of every OSD from the exporters",
    )
    assert {r["metric"]["ceph_daemon"] for r in commit} == {f"osd.{i}" for i in range(OSDS)}
    up = query(lab, "osd:ceph_perfwatch_daemon_up:bool")
    assert sorted(float(r["value"][1]) for r in up) == [1.0] * OSDS, up
    # (while the lab starts, an input can be missing for a rate window: wait for the steady state)
    first = query(lab, 'osd:ceph_perfwatch_verdict_input_missing:info{input=~"perfwatch_.*"}')
    wait_until(
        lambda: query(lab, 'osd:ceph_perfwatch_verdict_input_missing:info{input=~"perfwatch_.*"}') == [],
        90,
        "no perfwatch input missing",
    )
    print(f"\ninputs missing at first: {[(r['metric']['ceph_daemon'], r['metric']['input']) for r in first]}")
    assert query(lab, "cluster:ceph_perfwatch_osds_counted_twice:count") == []


def test_both_sources_on_count_once_and_say_so(counted_lab: LabHandle) -> None:
    lab = counted_lab
    lab.ceph("config", "set", "mgr", "mgr/perfwatch/daemon_counters_source", "module", as_json=False)
    started = time.monotonic()
    try:
        wait_until(lambda: by_job(lab, COUNTER) == {"perfwatch-host": OSDS, "perfwatch": OSDS}, 90, "both sources")
        fired = wait_until(
            lambda: [a for a in am_alerts(lab) if a["alertname"] == "PerfwatchDaemonCountersFromTwoSources"],
            180,
            "PerfwatchDaemonCountersFromTwoSources",
        )
        print(
            f"\nboth sources on: PerfwatchDaemonCountersFromTwoSources in {time.monotonic() - started:.0f} s: {fired}"
        )
        assert fired[0]["cluster"] == lab.ceph("fsid")["fsid"]
        # still one series per OSD: the exporter's
        assert len(query(lab, "osd:ceph_perfwatch_commit_latency:seconds")) == OSDS
        assert len(query(lab, "osd:ceph_perfwatch_onode_lookups:rate")) == OSDS
        twice = query(lab, "cluster:ceph_perfwatch_osds_counted_twice:count")
        assert [float(r["value"][1]) for r in twice] == [OSDS], twice
    finally:
        lab.ceph("config", "set", "mgr", "mgr/perfwatch/daemon_counters_source", "exporters", as_json=False)
