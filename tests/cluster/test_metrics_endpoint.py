"""The module's /metrics against the session lab: families, agreement with the OSDs, format, failures."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from lab import cephcli
from lab.cephcli import CephCommandError
from perfwatch.common.daemon_counters import counter_families as families
from perfwatch.common.daemon_counters import counters
from perfwatch.options import declared as options

from .labutil import LabHandle, run_lab, wait_until
from .promutil import Prometheus

pytestmark = pytest.mark.every_release  # what differs between Ceph releases

INTERVAL = 5
DEFAULT_BUDGET = options.defaults()["collect_cpu_budget_percent"]
OSD_FAMILIES = sorted({spec.family for spec in counters.OSD_SPECS} | {families.MEMPOOL_BYTES, families.MEMPOOL_ITEMS})


def fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as resp:
        assert resp.status == 200
        return resp.read().decode()


def families(text: str) -> dict[str, list]:
    return {f.name: f.samples for f in text_string_to_metric_families(text)}


def value(fams: dict[str, list], family: str, daemon: str, suffix: str = "", **labels: str) -> float:
    name = "ceph_perfwatch_" + family
    base = name[: -len("_total")] if name.endswith("_total") else name
    matches = [
        s.value
        for s in fams[base]
        if s.name == name + suffix
        and s.labels.get("ceph_daemon") == daemon
        and all(s.labels.get(k) == v for k, v in labels.items())
    ]
    errors = [
        (s.labels, s.value) for s in fams.get("ceph_perfwatch_fetch_errors", []) if s.labels["ceph_daemon"] == daemon
    ]
    assert len(matches) == 1, (family, daemon, labels, matches, "fetch errors:", errors)
    return matches[0]


class Endpoint:
    def __init__(self, lab: LabHandle) -> None:
        self.lab = lab

    @property
    def url(self) -> str:
        active = self.lab.ceph("mgr", "stat")["active_name"]
        return self.lab.lab.module_urls()[active] + "metrics"

    def collected_at(self) -> float:
        fams = families(fetch(self.url))
        samples = fams.get("ceph_perfwatch_last_collection_timestamp_seconds", [])
        return samples[0].value if samples else 0.0

    def wait_next_collection(self, after: float) -> None:
        wait_until(lambda: self.collected_at() > after, INTERVAL * 4, f"a collection after {after}", 0.5)


@pytest.fixture(scope="module")
def endpoint(lab: LabHandle) -> Iterator[Endpoint]:
    key = "mgr/perfwatch/collect_interval"
    saved = lab.ceph("config", "get", "mgr", key, as_json=False).strip()  # the lab's own setting
    lab.ceph("config", "set", "mgr", key, str(INTERVAL), as_json=False)
    ep = Endpoint(lab)
    ep.wait_next_collection(time.time())
    # Writes, so the counters have moved (rados bench removes its objects afterwards).
    pool = "pwtest-metrics-load"
    lab.ceph("osd", "pool", "create", pool, "8", as_json=False)
    lab.ceph("osd", "pool", "application", "enable", pool, "lab-test", as_json=False)
    try:
        cephcli.run_tool(
            "rados", lab.conf, "-p", pool, "bench", "3", "write", "-b", "4096", "-t", "4", timeout=60, as_json=False
        )
    finally:
        lab.ceph("osd", "pool", "delete", pool, pool, "--yes-i-really-really-mean-it", as_json=False)
    yield ep
    lab.ceph("config", "set", "mgr", key, saved, as_json=False)


def test_every_osd_family_has_a_sample_for_every_osd(lab: LabHandle, endpoint: Endpoint) -> None:
    endpoint.wait_next_collection(time.time())
    fams = families(fetch(endpoint.url))
    osds = {f"osd.{o.id}" for o in lab.lab.topo.osds}
    # A counter only some releases have (compact_range on Pacific; compact_completed from Reef on) is
    # reported unavailable on the others, and only such a counter may be.
    unavailable = {
        (s.labels["ceph_daemon"], s.labels["counter"]) for s in fams.get("ceph_perfwatch_counters_unavailable", [])
    }
    release_dependent = {counters.name_of(x) for x in (*counters.OSD_SPECS, *counters.RGW_SPECS) if x.releases}
    assert {counter for _, counter in unavailable} <= release_dependent, unavailable
    for family in OSD_FAMILIES:
        full = "ceph_perfwatch_" + family
        base = full[: -len("_total")] if full.endswith("_total") else full
        specs = [spec for spec in counters.OSD_SPECS if spec.family == family]
        expected = {d for d in osds if not specs or any((d, counters.name_of(x)) not in unavailable for x in specs)}
        got = {s.labels["ceph_daemon"] for s in fams.get(base, [])}
        assert got == expected, f"{full}: samples for {sorted(got)}, expected {sorted(expected)}"
    assert OSD_FAMILIES and any(fams.get("ceph_perfwatch_" + f.removesuffix("_total")) for f in OSD_FAMILIES)
    assert all(s.value == 0 for s in fams["ceph_perfwatch_counters_missing"]), "table entries missing"
    assert {s.labels["pool"] for s in fams["ceph_perfwatch_bluestore_mempool_bytes"]} >= {"onode", "meta", "data"}


def spelling(logger: dict, family: str) -> str:
    """The name the daemon's release gives the counter behind `family` (the module's table has every
    spelling: Tentacle, for one, writes `buffer_hit_bytes` where Pacific wrote `bluestore_buffer_hit_bytes`)."""
    names = next(spec.names for spec in counters.OSD_SPECS if spec.family == family)
    return next(n for n in names if n in logger)


def test_values_agree_with_the_osds_own_perf_dump(lab: LabHandle, endpoint: Endpoint) -> None:
    before = {o.id: lab.ceph("tell", f"osd.{o.id}", "perf", "dump") for o in lab.lab.topo.osds}
    endpoint.wait_next_collection(time.time())
    fams = families(fetch(endpoint.url))
    after = {o.id: lab.ceph("tell", f"osd.{o.id}", "perf", "dump") for o in lab.lab.topo.osds}
    monotonic = [
        (counters.ONODE_HITS, "bluestore", ""),
        (counters.ONODE_MISSES, "bluestore", ""),
        (counters.BUF_HIT, "bluestore", ""),
        (counters.SUBMIT_LAT, "rocksdb", "_count"),
        (counters.SUBMIT_SYNC_LAT, "rocksdb", "_count"),
        (counters.GET_LAT, "rocksdb", "_count"),
    ]
    for osd_id in before:
        daemon = f"osd.{osd_id}"
        for family, logger, suffix in monotonic:
            name = spelling(after[osd_id][logger], family)
            low, high = before[osd_id][logger][name], after[osd_id][logger][name]
            if suffix == "_count":
                low, high = low["avgcount"], high["avgcount"]
            got = value(fams, family, daemon, suffix)
            assert low <= got <= high, f"{daemon} {family}{suffix}: {low} <= {got} <= {high}"
        for family, logger in ((counters.DB_TOTAL, "bluefs"), (counters.MEM_TARGET, "bluestore-pricache")):
            name = spelling(after[osd_id][logger], family)
            assert value(fams, family, daemon) == after[osd_id][logger][name], (daemon, family)


def test_exposition_parses_and_passes_promtool(endpoint: Endpoint) -> None:
    text = fetch(endpoint.url)
    assert len(families(text)) > 20
    proc = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_gzip_scrape_decodes_to_the_same_families(endpoint: Endpoint) -> None:
    import gzip

    req = urllib.request.Request(endpoint.url, headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        assert resp.headers["Content-Encoding"] == "gzip"
        text = gzip.decompress(resp.read()).decode()
    assert "ceph_perfwatch_bluestore_onode_hits_total" in text


def test_the_standby_answers_an_empty_200(lab: LabHandle, endpoint: Endpoint) -> None:
    active = lab.ceph("mgr", "stat")["active_name"]
    standby = next(m for m in lab.lab.config.mgrs if m != active)
    with urllib.request.urlopen(lab.lab.module_urls()[standby] + "metrics", timeout=10) as resp:
        assert (resp.status, resp.read()) == (200, b"")


def test_metrics_table_command(lab: LabHandle, endpoint: Endpoint) -> None:
    rows = lab.ceph("perfwatch", "metrics")
    assert [r["daemon"] for r in rows] == [f"osd.{o.id}" for o in lab.lab.topo.osds]
    for row in rows:
        assert row["onode_hit_ratio"] is not None, (
            row,
            families(fetch(endpoint.url)).get("ceph_perfwatch_fetch_errors"),
        )
        assert 0 <= row["onode_hit_ratio"] <= 1
        assert row["db_used_bytes"] > 0
        assert row["age_seconds"] < INTERVAL * 3
    text = lab.ceph("perfwatch", "metrics", as_json=False)
    assert text.splitlines()[0].startswith("OSD")


def test_a_cpu_budget_a_cycle_exceeds_puts_collections_off_and_the_status_and_page_say_so(
    lab: LabHandle, endpoint: Endpoint
) -> None:
    """At the smallest budget (0.01 % of a core) even a 3-OSD cycle's CPU (milliseconds, far above the 0.5 ms
    a 5 s pass allows) puts off the collections after it; set back, the next pass collects and its page
    counts the passes put off and the CPU the cycles took, as the mgr's own thread clock measured it."""
    key = "mgr/perfwatch/collect_cpu_budget_percent"
    for bad, why in (("0", "below minimum"), ("-1", "below minimum"), ("101", "exceeds maximum")):
        with pytest.raises(CephCommandError) as refused:  # a budget of 0 would never collect again
            lab.ceph("config", "set", "mgr", key, bad, as_json=False)
        assert "EINVAL" in refused.value.stderr and why in refused.value.stderr, refused.value.stderr
    lab.ceph("config", "set", "mgr", key, "0.01", as_json=False)
    try:
        report = wait_until(
            lambda: (c := lab.ceph("perfwatch", "status")["collection"])["deferred_passes"] >= 2 and c,
            INTERVAL * 6,
            "two passes put off at 0.01 %",
        )
        assert report["cpu_budget_percent"] == 0.01
        assert report["last_cycle_cpu_seconds"] > 0
        # the last collection began at most one pass before; the next is its CPU / 0.01 % after it began
        wait = report["last_cycle_cpu_seconds"] * 10_000
        assert wait - INTERVAL * 4 <= report["next_allowed_in_seconds"] <= wait, report
    finally:
        # `config rm` alone is not told to modules: the default set first
        lab.ceph("config", "set", "mgr", key, str(DEFAULT_BUDGET), as_json=False)
        lab.ceph("config", "rm", "mgr", key, as_json=False)
    wait_until(
        lambda: lab.ceph("perfwatch", "status")["collection"]["cpu_budget_percent"] == DEFAULT_BUDGET,
        INTERVAL * 6,
        "the default budget back in status",
    )
    endpoint.wait_next_collection(time.time())
    fams = families(fetch(endpoint.url))
    assert fams["ceph_perfwatch_collections_deferred"][0].value >= 2
    assert fams["ceph_perfwatch_collection_cpu_seconds"][0].value > 0


def test_a_stopped_osd_shows_fetch_errors_while_the_others_keep_updating(lab: LabHandle, endpoint: Endpoint) -> None:
    victim = "osd.2"
    stopped = run_lab(lab.dir, "stop", victim)
    assert stopped.returncode == 0, stopped.stderr
    try:
        first = families(fetch(endpoint.url))
        start = endpoint.collected_at()
        endpoint.wait_next_collection(start)
        endpoint.wait_next_collection(endpoint.collected_at())
        fams = families(fetch(endpoint.url))
        errors = [s for s in fams["ceph_perfwatch_fetch_errors"] if s.labels["ceph_daemon"] == victim]
        assert errors and sum(s.value for s in errors) >= 1, "the stopped OSD shows fetch errors"
        up = {s.labels["ceph_daemon"]: s.value for s in fams["ceph_perfwatch_daemon_up"]}
        assert up[victim] == 0 and up["osd.0"] == 1 and up["osd.1"] == 1
        for other in ("osd.0", "osd.1"):
            was = value(first, "daemon_last_success_timestamp_seconds", other)
            assert value(fams, "daemon_last_success_timestamp_seconds", other) > was, f"{other} kept updating"
        assert victim not in {s.labels["ceph_daemon"] for s in fams["ceph_perfwatch_bluestore_onode_hits"]}
    finally:
        started = run_lab(lab.dir, "start", victim)
        assert started.returncode == 0, started.stderr
    lab.wait_healthy(120, "HEALTH_OK again after restarting the OSD")


def test_a_real_prometheus_scrapes_both_mgrs_and_the_series_are_queryable(
    lab: LabHandle, endpoint: Endpoint, tmp_path: Path
) -> None:
    targets = [url.split("//", 1)[1].rstrip("/") for url in lab.lab.module_urls().values()]
    prom = Prometheus(tmp_path / "prometheus", targets)
    try:
        prom.wait_ready()
        up = wait_until(
            lambda: (
                (r := prom.query('up{job="perfwatch"}')) and len(r) == 2 and all(x["value"][1] == "1" for x in r) and r
            ),
            60,
            "both mgr endpoints up in Prometheus",
        )
        assert {x["metric"]["instance"] for x in up} == set(targets)
        series = wait_until(
            lambda: prom.query("ceph_perfwatch_bluestore_onode_hits_total"), 60, "onode hits in Prometheus"
        )
        assert {s["metric"]["ceph_daemon"] for s in series} == {f"osd.{o.id}" for o in lab.lab.topo.osds}
        rate = prom.query("sum by (ceph_daemon) (ceph_perfwatch_rocksdb_submit_latency_seconds_count)")
        assert len(rate) == 3 and all(float(r["value"][1]) > 0 for r in rate)
        meta = json.dumps(prom.query("ceph_perfwatch_collections_total"))
        assert "ceph_perfwatch_collections_total" in meta
    finally:
        prom.stop()
