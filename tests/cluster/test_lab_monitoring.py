"""The session lab runs the whole monitoring loop: its own Prometheus scrapes every target of the four
jobs the alert rules rely on (perfwatch, perfwatch-host, node, ceph), labelled with the lab's fsid and
the simulated host names, and sends alerts to the lab's Alertmanager, which answers and gossips with no one."""

from __future__ import annotations

import json
import time
import urllib.parse
import urllib.request
from typing import Any

import pytest

from .labutil import LabHandle

pytestmark = pytest.mark.every_release  # what differs between Ceph releases

WAIT = 120  # seconds: the Ceph module starts after `up` enables it; targets are scraped every 5 s


def get(base: str, path: str, **params: str) -> Any:
    url = f"{base.rstrip('/')}{path}" + (f"?{urllib.parse.urlencode(params)}" if params else "")
    with urllib.request.urlopen(url, timeout=5) as resp:
        assert resp.status == 200, url
        return json.load(resp)


def query(prometheus: str, expr: str) -> list[dict[str, Any]]:
    body = get(prometheus, "/api/v1/query", query=expr)
    assert body["status"] == "success", body
    return body["data"]["result"]


def test_the_labs_prometheus_has_every_target_of_the_four_jobs_up(lab: LabHandle) -> None:
    handle = lab.lab
    fsid = handle.state.fsid
    prometheus = handle.monitoring_urls()["prometheus"]
    expected = {
        (job, target.address): {"job": job, "instance": target.address, "cluster": fsid, **dict(target.labels)}
        for job, targets in handle.catalogue.scrape_jobs().items()
        for target in targets
    }
    assert {job for job, _ in expected} == {"perfwatch", "perfwatch-host", "node", "ceph"}
    assert len(expected) == 2 + 4 + 3 + 2  # 2 mgrs; 3 hosts and the core; 3 hosts; 2 mgrs
    # Ceph's prometheus module on a standby mgr: Pacific's serves it there too; the Reef and Tentacle mgrs of
    # the lab do not (Tentacle's logs "does not implement a standby mode"), so nothing listens on that port.
    # Allowed: nothing listening on a standby's Ceph port. Everything else, and the active mgr's, must be up.
    active = lab.ceph("mgr", "stat")["active_name"]
    ports = handle.catalogue.ceph_metrics_ports()
    standby_ceph = {("ceph", f"{handle.topo.core_address}:{p}") for m, p in ports.items() if m != active}
    deadline = time.monotonic() + WAIT
    while True:
        targets = get(prometheus, "/api/v1/targets", state="active")["data"]["activeTargets"]
        health = {(t["labels"]["job"], t["labels"]["instance"]): t for t in targets}
        not_up = {key: health[key]["lastError"] or health[key]["health"] for key in expected if key in health}
        not_up = {key: why for key, why in not_up.items() if health[key]["health"] != "up"}
        unserved = {key for key, why in not_up.items() if key in standby_ceph and "connection refused" in why}
        not_up = {key: why for key, why in not_up.items() if key not in unserved}
        missing = set(expected) - set(health)
        if not not_up and not missing:
            break
        assert time.monotonic() < deadline, f"not up within {WAIT} s: {not_up}; not scraped at all: {missing}"
        time.sleep(2)
    assert set(health) == set(expected), "Prometheus scrapes targets the lab does not have"
    for key, target in health.items():
        assert target["labels"] == expected[key], key
        assert target["scrapeUrl"] == f"http://{key[1]}/metrics"
    if unserved:
        print(f"\nnot served by the standby mgr (this release runs no prometheus module in standby): {unserved}")
    up = {(s["metric"]["job"], s["metric"]["instance"]): s for s in query(prometheus, "up")}
    assert {key: s["value"][1] for key, s in up.items()} == {k: "0" if k in unserved else "1" for k in expected}
    assert {key: {k: v for k, v in s["metric"].items() if k != "__name__"} for key, s in up.items()} == expected


def test_ceph_metrics_and_the_exporters_series_carry_the_labs_cluster_and_host_names(lab: LabHandle) -> None:
    handle = lab.lab
    fsid, prometheus = handle.state.fsid, handle.monitoring_urls()["prometheus"]

    def present(expr: str) -> list[dict[str, Any]]:
        deadline = time.monotonic() + WAIT
        while not (result := query(prometheus, expr)):
            assert time.monotonic() < deadline, f"no series for {expr} within {WAIT} s"
            time.sleep(2)
        return result

    health = present(f'ceph_health_status{{job="ceph", cluster="{fsid}"}}')
    assert len(health) == 1, health  # the active mgr's module; the standby's answers empty
    hosts = {h.crush_name for h in handle.topo.hosts}
    nodes = present(f'node_disk_io_time_seconds_total{{job="node", cluster="{fsid}"}}')
    assert {s["metric"]["hostname"] for s in nodes} == hosts
    devices = present(f'ceph_perfwatch_osd_device_info{{job="perfwatch-host", cluster="{fsid}"}}')
    assert {s["metric"]["hostname"] for s in devices} == hosts
    assert lab.ceph("config", "get", "mgr", "mgr/perfwatch/collect_interval", as_json=False).strip() == "10"


def test_the_labs_alertmanager_answers_without_gossip_and_prometheus_sends_to_it(lab: LabHandle) -> None:
    urls = lab.lab.monitoring_urls()
    status = get(urls["alertmanager"], "/api/v2/status")
    assert status["cluster"]["status"] == "disabled"  # --cluster.listen-address= : no port on 0.0.0.0:9094
    assert "receivers" in status["config"]["original"]
    active = get(urls["prometheus"], "/api/v1/alertmanagers")["data"]["activeAlertmanagers"]
    assert [a["url"] for a in active] == [f"{urls['alertmanager'].rstrip('/')}/api/v2/alerts"]
