"""The rules and dashboards against a live lab. Every series selector the production rules read returns
series from the lab's Prometheus (so every name and label they use is one the module, the exporter,
node_exporter or Ceph exports); the recorded series have the labels the alerts and dashboards expect and
join with Ceph's own `ceph_osd_metadata`; every dashboard query, its variables set to the lab's values, is
valid PromQL and returns data, but for the few panels listed as conditional (dashboards/queries.py)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest

from alerts import alerting, recording
from alerts.profiles import PRODUCTION
from alerts.promql import input_selectors
from dashboards import generate as dashboards_generate
from dashboards import queries as dashboard_queries
from perfwatch.common.daemon_counters import counters
from perfwatch_host_exporter import daemon_counters

from .alert_checks import Load
from .labutil import LabHandle, finished, run_lab, s3_client, start_bench, wait_until
from .test_lab_monitoring import get, query

# Series that exist only after an event; each test below makes its event happen first. Any other
# missing series fails the test.
AFTER_A_FAILED_FETCH = "ceph_perfwatch_fetch_errors_total"  # only once a read of a daemon failed
# Only while a benchmark result is a regression (the module exports no 0): promtool feeds it
# (alerts/tests/benchmarks.test.yml); test_benchmarks.py raises a regression on the lab.
WHILE_REGRESSED = "ceph_perfwatch_bench_regression"
# Only after baseline_min_results (3) osd bench rounds, which the events below do not run (one round, one
# OSD): the ratio rule reads them; promtool feeds them (alerts/tests/benchmarks.test.yml).
AFTER_OSD_BENCH_BASELINES = ("ceph_perfwatch_bench_baseline_iops", "ceph_perfwatch_bench_baseline_throughput")
# Selectors of devices of a kind or transport the session lab's loop devices are not (they are kind
# "unknown", transport "loop"): the hardware decides whether they have series. Their family must be there
# (the unfiltered selector is an input too); test_media_layouts.py runs flash devices, promtool the rest.
HARDWARE_DEPENDENT = re.compile(r'^ceph_perfwatch_device_info\{.*(kind="(hdd|ssd|nvme)"|transport=)')
WAIT = 60
LOAD_OPTION = "mgr/perfwatch/load_attribution"


def other_source(selector: str) -> bool:
    """The host exporters' side of an OSD counter family (promql.either): the session lab's module reads the
    OSDs' counters, so its exporters do not; test_exporter_counters.py runs a lab whose exporters do."""
    family = family_of(selector).removeprefix("ceph_perfwatch_")
    return family in daemon_counters.FAMILIES and PRODUCTION.exporter_selector in selector


def inputs() -> list[str]:
    rules = [r for g in recording.groups(PRODUCTION) + alerting.groups(PRODUCTION) for r in g["rules"]]
    return sorted({s for r in rules for s in input_selectors(r["expr"])})


def prometheus(lab: LabHandle) -> str:
    return lab.lab.monitoring_urls()["prometheus"]


def family_of(selector: str) -> str:
    """The family a series selector reads: its metric name, without a summary's or histogram's suffix."""
    name = selector.split("{")[0]
    return name.rsplit("_", 1)[0] if name.endswith(("_sum", "_count", "_bucket")) else name


def families_this_release_lacks(url: str) -> set[str]:
    """The module's families (metric names) this lab's Ceph release cannot give: every counter behind them
    is one the module reports unavailable here (ceph_perfwatch_counters_unavailable)."""
    unavailable = {r["metric"]["counter"] for r in query(url, "ceph_perfwatch_counters_unavailable")}
    specs = (*counters.OSD_SPECS, *counters.RGW_SPECS)
    behind = {spec.family: [counters.name_of(x) for x in specs if x.family == spec.family] for spec in specs}
    return {"ceph_perfwatch_" + family for family, names in behind.items() if set(names) <= unavailable}


def bench_done(lab: LabHandle, *args: str) -> None:
    run = finished(lab, start_bench(lab, *args))
    assert run["state"] == "done", run


@pytest.fixture(scope="module")
def events(lab: LabHandle) -> Iterator[LabHandle]:
    """What makes the event-only series appear: an osd benchmark (bench_iops), three rados probes (a
    baseline), a net probe, an rgw probe on a bucket's index (bucket-index latencies). (The tests add a CPU
    limit on one OSD for their duration.)"""
    wait_until(lambda: not lab.ceph("perfwatch", "bench", "status")["running"], 120, "no run in progress")
    wait_until(lab.lab.pgs_clean, 120, "every PG active+clean (a heavy round refuses to start otherwise)")
    bench_done(lab, "--kind", "osd", "--osd", "0")  # before the bucket: its new pools' PGs start unknown
    for _ in range(3):
        bench_done(lab, "--kind", "rados")
    bench_done(lab, "--kind", "net")  # its ping histograms
    s3 = s3_client(lab)
    s3.create_bucket(Bucket="pwtest-rule-inputs")  # RGW creates its index pool with the first bucket
    s3.put_object(Bucket="pwtest-rule-inputs", Key="obj", Body=b"x")
    wait_until(lab.lab.pgs_clean, 120, "the new pools' PGs active+clean")
    bench_done(lab, "--kind", "rgw")
    # whose load: the module's OSD perf queries on, and a client writing, for the load series (gauges of the
    # last window: there only while I/O flows)
    lab.ceph("config", "set", "mgr", LOAD_OPTION, "true", as_json=False)
    light = Load(lab, "light-random-write", 900)
    try:
        wait_until(lambda: query(prometheus(lab), "ceph_perfwatch_load_osd_ops"), WAIT, "the module's load series")
        yield lab
    finally:
        light.stop()
        lab.ceph("config", "set", "mgr", LOAD_OPTION, "false", as_json=False)
        s3.delete_object(Bucket="pwtest-rule-inputs", Key="obj")
        s3.delete_bucket(Bucket="pwtest-rule-inputs")
        lab.ceph("perfwatch", "bench", "reset-baseline", as_json=False)


@pytest.mark.every_release
def test_every_series_the_rules_read_comes_from_the_lab(events: LabHandle) -> None:
    url = prometheus(events)
    lacking = families_this_release_lacks(url)
    # only inputs whose family this release lacks may be absent (Pacific: RocksDB's compaction events)
    hardware = [s for s in inputs() if HARDWARE_DEPENDENT.match(s)]
    # each exporter-side counter selector has its module-side twin, which must have series here
    others = [s for s in inputs() if other_source(s)]
    twin = {s: s.replace(PRODUCTION.exporter_selector, PRODUCTION.module_selector) for s in others}
    assert len(others) > 10 and set(twin.values()) <= set(inputs()), twin
    wanted = [
        s
        for s in inputs()
        if not s.startswith((AFTER_A_FAILED_FETCH, WHILE_REGRESSED, *AFTER_OSD_BENCH_BASELINES))
        and family_of(s) not in lacking
        and s not in hardware
        and s not in others
    ]
    assert len(wanted) > 30, wanted
    assert 'ceph_perfwatch_device_info{job="perfwatch-host"}' in wanted and len(hardware) >= 3, hardware
    absent = [s for s in inputs() if family_of(s) in lacking]
    print(f"\nrule inputs this release cannot give: {absent}; that this lab's devices cannot give: {hardware}")
    # the cgroup CPU limit exists only on a limited OSD: limit one (to more than it uses) for this test
    limited = run_lab(events.dir, "saturate", "cpu", "--osd", "0", "--cores", "1.5")
    assert limited.returncode == 0, limited.stderr
    try:
        deadline = time.monotonic() + WAIT
        missing = wanted
        while missing and time.monotonic() < deadline:
            missing = [s for s in missing if not query(url, s)]
            if missing:
                time.sleep(5)
        counts = {s: len(query(url, s)) for s in wanted}
        quota = wait_until(
            lambda: query(url, "osd:ceph_perfwatch_cpu_quota_usage:ratio"), WAIT, "the limited OSD's quota usage"
        )
        assert [r["metric"]["ceph_daemon"] for r in quota] == ["osd.0"]  # the one OSD under a limit
    finally:
        run_lab(events.dir, "clear", "cpu")
    print("\n" + "\n".join(f"{n:4d}  {s}" for s, n in counts.items()))
    assert missing == [], f"no series in the lab for: {missing}"


@pytest.mark.every_release
def test_the_recorded_series_name_every_osd_host_and_nic(events: LabHandle) -> None:
    url, topo = prometheus(events), events.lab.topo
    osds = {f"osd.{o.id}": topo.host_of(o.id).crush_name for o in topo.osds}

    def verdicts() -> list[dict]:
        return query(url, "osd:ceph_perfwatch_saturation:verdict")

    got = wait_until(lambda: len(verdicts()) == 3 * len(osds) and verdicts(), WAIT, "a verdict per OSD and resource")
    seen = {(r["metric"]["ceph_daemon"], r["metric"]["hostname"], r["metric"]["resource"]) for r in got}
    assert seen == {(d, h, res) for d, h in osds.items() for res in ("media", "cpu", "network")}
    assert all(r["metric"]["cluster"] == events.lab.state.fsid for r in got)
    busy = query(url, "osd_device:ceph_perfwatch_media_busy:ratio")
    assert {(r["metric"]["ceph_daemon"], r["metric"]["hostname"]) for r in busy} == set(osds.items())
    nics = query(url, "host_nic:ceph_perfwatch_network_utilisation:ratio")
    assert {(r["metric"]["hostname"], r["metric"]["direction"]) for r in nics} == {
        (h.crush_name, d) for h in topo.hosts for d in ("transmit", "receive")
    }
    # which NIC carries which of Ceph's networks (the lab runs with --cluster-network): the module's OSD
    # addresses met the host exporters' address map on every host, and eth2 carries none of them
    roles = query(url, "host_nic:ceph_perfwatch_nic_networks:info")
    assert {(r["metric"]["hostname"], r["metric"]["device"], r["metric"]["network"]) for r in roles} == {
        (h.crush_name, device, network)
        for h in topo.hosts
        for device, network in (("eth0", "public"), ("eth1", "cluster"))
    }
    assert query(url, "osd:ceph_perfwatch_network_fallback:info") == []
    # every input of every verdict is there: nothing is reported missing
    assert query(url, "osd:ceph_perfwatch_verdict_input_missing:info") == []


def test_the_verdicts_join_with_cephs_own_osd_metadata(events: LabHandle) -> None:
    joined = query(
        prometheus(events),
        "osd:ceph_perfwatch_saturation:verdict\n* on (cluster, ceph_daemon) group_left (device_class)\n"
        "max by (cluster, ceph_daemon, device_class) (ceph_osd_metadata)",
    )
    assert len(joined) == 3 * len(events.lab.topo.osds)
    assert all(r["metric"].get("device_class") for r in joined)


# Conditional panels whose condition the `events` fixture (and the CPU limit below) makes true: each must
# then have data, which shows the condition listed is the one that matters.
MADE_TRUE = {
    ("perfwatch-osd-detail", "CPU against its cgroup limit"),
    ("perfwatch-osd-detail", "osd bench against its baseline"),
    ("perfwatch-benchmarks", "osd bench: 4 KiB write IOPS per OSD"),
    ("perfwatch-benchmarks", "osd bench: 4 MiB write throughput per OSD"),
    ("perfwatch-benchmarks", "rgw probe: omap_set_latency"),
    ("perfwatch-rgw-bucket-index", "Bucket-index op latency"),
}


def valid_and_found(url: str, expr: str) -> bool:
    """True if the query returns data; an invalid query fails the test (Prometheus answers 400)."""
    body = get(url, "/api/v1/query", query=expr)
    assert body["status"] == "success", (expr, body)
    return bool(body["data"]["result"])


def test_every_dashboard_query_is_valid_and_returns_data(events: LabHandle) -> None:
    url, topo = prometheus(events), events.lab.topo
    lacking = families_this_release_lacks(url)
    values = {"cluster": events.lab.state.fsid, "host": topo.host_of(0).crush_name, "osd": "osd.0"}
    assert len(dashboard_queries.CONDITIONAL_PANELS) <= 12, "the list of conditional panels must stay short"
    boards = dashboards_generate.committed()
    titles = {(b["uid"], p["title"]) for b in boards for p in dashboard_queries.panels(b)}
    for entry in dashboard_queries.CONDITIONAL_PANELS:
        assert (entry.dashboard, entry.panel) in titles, f"{entry} names no panel"
    assert {(c.dashboard, c.panel) for c in dashboard_queries.CONDITIONAL_PANELS} >= MADE_TRUE
    limited = run_lab(events.dir, "saturate", "cpu", "--osd", "0", "--cores", "1.5")
    assert limited.returncode == 0, limited.stderr
    try:
        wait_until(lambda: query(url, "osd:ceph_perfwatch_cpu_quota_usage:ratio"), WAIT, "the CPU limit's series")
        checked, empty, made_true = 0, [], {}
        made_true_exprs: dict[tuple[str, str], list[str]] = {}
        for board in boards:
            for name, selector in dashboard_queries.variable_selectors(board, values).items():
                assert valid_and_found(url, selector), f"{board['uid']}: variable {name} finds nothing: {selector}"
            for q in dashboard_queries.panel_queries(board, values):
                checked += 1
                found = valid_and_found(url, q.expr)
                key = (q.dashboard, q.panel)
                dependent = dashboard_queries.release_dependent(*key)
                if dependent and set(dependent.families) <= lacking:
                    assert not found, f"{key} has data on a release without {dependent.families}: {q.expr}"
                    continue
                if key in MADE_TRUE:
                    made_true[key] = made_true.get(key, False) or found
                    made_true_exprs.setdefault(key, []).append(q.expr)
                elif not found and dashboard_queries.conditional(*key) is None:
                    empty.append(f"{q.dashboard} / {q.panel} [{q.ref_id}]: {q.expr}")
        # a lagging recording group (evaluated every 5 s) gets one more chance
        empty = [e for e in empty if not valid_and_found(url, e.split("]: ", 1)[1])]
        # a rate of a series just made needs two scrapes and an evaluation: give those panels a while
        deadline = time.monotonic() + WAIT
        while not all(made_true.values()) and time.monotonic() < deadline:
            time.sleep(5)
            for key, exprs in made_true_exprs.items():
                made_true[key] = made_true[key] or any(valid_and_found(url, e) for e in exprs)
    finally:
        run_lab(events.dir, "clear", "cpu")
    per_board = {b["uid"]: len(dashboard_queries.panel_queries(b, values)) for b in boards}
    print(f"\n{checked} dashboard queries checked live: {per_board}")
    assert empty == [], "queries without data:\n" + "\n".join(empty)
    assert set(made_true) == MADE_TRUE, made_true
    assert all(made_true.values()), (
        [k for k, v in made_true.items() if not v],
        query(url, "count by (kind, metric) (ceph_perfwatch_bench_probe_latency_seconds_bucket)"),
        query(url, "count by (kind, metric) (cluster:ceph_perfwatch_probe_latency_bucket:rate)"),
        events.ceph("perfwatch", "bench", "status")["recent"],
    )


@pytest.mark.every_release
def test_panels_of_release_dependent_counters_have_data_exactly_where_the_release_gives_them(
    events: LabHandle,
) -> None:
    url = prometheus(events)
    lacking = families_this_release_lacks(url)
    values = {"cluster": events.lab.state.fsid, "host": events.lab.topo.host_of(0).crush_name, "osd": "osd.0"}
    boards = {b["uid"]: b for b in dashboards_generate.committed()}
    seen = {}
    for entry in dashboard_queries.RELEASE_DEPENDENT_PANELS:
        given = not set(entry.families) & lacking
        assert given or set(entry.families) <= lacking, f"{entry.panel}: only some of {entry.families} lacking"
        board = boards[entry.dashboard]
        exprs = [q.expr for q in dashboard_queries.panel_queries(board, values) if q.panel == entry.panel]
        assert exprs, entry
        if given:  # a rate needs two scrapes and an evaluation after the lab started: wait a while
            for expr in exprs:
                wait_until(lambda e=expr: valid_and_found(url, e), WAIT, f"{entry.panel}: data for {expr}")
        else:
            assert not any(valid_and_found(url, e) for e in exprs), entry.panel
        seen[entry.panel] = "data" if given else f"empty: this release lacks {sorted(entry.families)}"
    print("\n" + "\n".join(f"{panel}: {what}" for panel, what in seen.items()))
