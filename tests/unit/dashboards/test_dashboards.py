"""The Grafana dashboards (dashboards/): the committed JSON is what the generator writes; it parses back with
the Grafana Foundation SDK's models at the schema it was built for; every panel has a unit and a description,
reads recorded series that the rules make (or plain gauges the module declares), and draws the production
profile's thresholds; uids, variables, tags and links hold together; the query lister and the list of
conditional panels that the live test reads are sound."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.cog.plugins import register_default_plugins
from grafana_foundation_sdk.models import dashboard as dm
from grafana_foundation_sdk.models import prometheus as pm

from alerts import alerting, validate
from alerts.profiles import PRODUCTION
from dashboards import common, generate, queries
from perfwatch.collection.module_families import MODULE_REGISTRY
from perfwatch.common.daemon_counters import counters
from perfwatch_host_exporter import daemon_counters
from tests import paths

REPO = paths.REPO
RECORDING = REPO / "alerts" / "generated" / "production" / "recording.yml"
UIDS = {
    "perfwatch-bottlenecks",
    "perfwatch-osd-detail",
    "perfwatch-bluestore",
    "perfwatch-rgw-bucket-index",
    "perfwatch-benchmarks",
}
# Grafana's unit ids the dashboards may use; "suffix:<text>" is Grafana's custom unit
UNITS = {"percentunit", "s", "bytes", "Bps", "iops", "ops", "reqps", "cps", "pps", "short", "none"}
RECORDED = re.compile(r"\b[a-z_]+:[a-zA-Z0-9_]+:[a-z0-9_]+\b")
METRIC = re.compile(r"(?<![:\w$])([a-zA-Z_][a-zA-Z0-9_]*)\s*\{")
# (dashboard uid, panel title) -> the profile fields whose values the panel draws as thresholds
THRESHOLDS = {
    ("perfwatch-bottlenecks", "Media: busiest device"): {"media_busy_ratio"},
    ("perfwatch-bottlenecks", "CPU: against the limit, else the host"): {"cpu_quota_ratio"},
    ("perfwatch-bottlenecks", "Network: the NICs that carry Ceph's networks"): {"network_utilisation_ratio"},
    ("perfwatch-bottlenecks", "Media: requests in flight per OSD device"): {"media_queue_depth"},
    ("perfwatch-bottlenecks", "CPU: runnable threads per core"): {"host_runnable_per_core"},
    ("perfwatch-bottlenecks", "Age of the module's data"): {"collection_stale_seconds"},
    ("perfwatch-osd-detail", "Utilisation by resource"): {
        "media_busy_ratio",
        "cpu_quota_ratio",
        "network_utilisation_ratio",
    },
    ("perfwatch-osd-detail", "Device busy"): {"media_busy_ratio"},
    ("perfwatch-osd-detail", "Device queue"): {"media_queue_depth"},
    ("perfwatch-osd-detail", "CPU against its cgroup limit"): {"cpu_quota_ratio", "cpu_throttled_periods_ratio"},
    ("perfwatch-osd-detail", "Host CPU busy"): {"host_cpu_busy_ratio"},
    ("perfwatch-osd-detail", "Host runnable threads per core"): {"host_runnable_per_core"},
    ("perfwatch-osd-detail", "NIC utilisation"): {"network_utilisation_ratio"},
    ("perfwatch-bluestore", "Onode cache misses"): {"onode_miss_ratio"},
    ("perfwatch-bluestore", "Onode lookups"): {"onode_min_lookups_per_second"},
    ("perfwatch-bluestore", "Compaction queue"): {"compaction_queue_length"},
    ("perfwatch-bluestore", "Write stalls"): {"write_stall_ratio"},
    ("perfwatch-rgw-bucket-index", "Bucket-index op latency"): {"bucket_index_latency_seconds"},
    ("perfwatch-benchmarks", "Measured IOPS per stored GB"): {"iops_per_gb_target", "iops_per_gb_high_tier"},
}
# thresholds that are not a profile's number: 1 on a 0/1 verdict or a count of saturated OSDs, and the
# spill-over alert's `> spillover_bytes` drawn as a Grafana step (>=) one byte above it
NOT_FROM_THE_PROFILE = {1.0, PRODUCTION.spillover_bytes + 1}


@pytest.fixture(scope="module")
def boards() -> list[dict[str, Any]]:
    return generate.committed()


def panels(board: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield from queries.panels(board)


def every_panel(boards: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    for board in boards:
        for panel in panels(board):
            yield board["uid"], panel


def thresholds_of(panel: dict[str, Any]) -> set[float]:
    """Every threshold value the panel draws: its defaults' and its overrides'."""
    field_config = panel.get("fieldConfig", {})
    configs = [field_config.get("defaults", {}).get("thresholds")]
    for override in field_config.get("overrides", []):
        configs += [p.get("value") for p in override.get("properties", []) if p.get("id") == "thresholds"]
    return {step["value"] for c in configs if c for step in c["steps"] if step.get("value") is not None}


def without_empty_custom(value: Any) -> Any:
    """The SDK's decoder adds `custom: {}` to a panel type without custom field options: not a difference."""
    if isinstance(value, dict):
        return {k: without_empty_custom(v) for k, v in value.items() if not (k == "custom" and v == {})}
    if isinstance(value, list):
        return [without_empty_custom(v) for v in value]
    return value


def test_the_committed_json_is_what_the_generator_writes() -> None:
    assert generate.stale() == [], "run `python3 -m dashboards.generate` and commit dashboards/generated/"


def test_a_changed_threshold_makes_the_json_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(generate, "OUT", tmp_path)
    assert generate.main([]) == 0
    assert generate.stale() == []
    (tmp_path / "old-dashboard.json").write_text("{}")
    assert generate.stale() == [tmp_path / "old-dashboard.json"], "a dashboard no longer made is stale too"
    (tmp_path / "old-dashboard.json").unlink()
    monkeypatch.setattr(common, "PROFILE", dataclasses.replace(PRODUCTION, media_busy_ratio=0.8))
    assert tmp_path / "bottlenecks.json" in generate.stale()
    assert generate.main(["--check"]) == 1


def test_each_file_parses_back_with_the_sdk_models_at_its_schema_version(boards: list[dict[str, Any]]) -> None:
    register_default_plugins()
    assert dm.Dashboard().schema_version == common.SCHEMA_VERSION, "the SDK's schema moved: check the pin"
    for board in boards:
        model = dm.Dashboard.from_json(board)
        assert model.schema_version == common.SCHEMA_VERSION == board["schemaVersion"]
        assert without_empty_custom(json.loads(json.dumps(model, cls=JSONEncoder))) == board
        targets = [t for p in model.panels or [] if isinstance(p, dm.Panel) for t in p.targets or []]
        assert targets and all(isinstance(t, pm.Dataquery) for t in targets), board["uid"]


def test_uids_are_stable_unique_and_name_their_files(boards: list[dict[str, Any]]) -> None:
    assert sorted(b["uid"] for b in boards) == sorted(UIDS)
    for path in generate.OUT.glob("*.json"):
        assert json.loads(path.read_text())["uid"] == common.UID_PREFIX + path.stem


def test_every_dashboard_has_the_variables_the_tag_and_the_links(boards: list[dict[str, Any]]) -> None:
    for board in boards:
        variables = board["templating"]["list"]
        assert [(v["name"], v["type"]) for v in variables[:2]] == [("datasource", "datasource"), ("cluster", "query")]
        assert variables[0]["query"] == "prometheus"
        assert all(v["datasource"]["uid"] == "${datasource}" for v in variables[1:]), board["uid"]
        assert common.TAG in board["tags"]
        by_tag = [link for link in board["links"] if link["type"] == "dashboards"]
        assert by_tag and by_tag[0]["tags"] == [common.TAG] and by_tag[0]["includeVars"] and by_tag[0]["keepTime"]
        assert any(link.get("url") == alerting.RUNBOOK_URL for link in board["links"])


def test_every_panel_has_a_unit_a_description_and_the_datasource_variable(boards: list[dict[str, Any]]) -> None:
    count = 0
    for uid, panel in every_panel(boards):
        count += 1
        where = f"{uid}: {panel.get('title')}"
        unit = panel.get("fieldConfig", {}).get("defaults", {}).get("unit", "")
        assert unit in UNITS or unit.startswith("suffix:"), f"{where}: unit {unit!r}"
        assert len(panel.get("description", "").strip()) > 40, f"{where}: no description saying how to read it"
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, where
        assert panel.get("targets"), f"{where}: no query"
    assert count >= 50


def test_panel_ids_are_unique_and_panels_fit_the_grid(boards: list[dict[str, Any]]) -> None:
    for board in boards:
        ids = [p["id"] for p in board["panels"]]
        assert len(ids) == len(set(ids)), board["uid"]
        for panel in board["panels"]:
            assert panel["gridPos"]["x"] + panel["gridPos"]["w"] <= 24, (board["uid"], panel["title"])


def test_every_recorded_name_a_dashboard_reads_is_made_by_the_rules(boards: list[dict[str, Any]]) -> None:
    recorded = {r["record"] for g in yaml.safe_load(RECORDING.read_text())["groups"] for r in g["rules"]}
    values = {"cluster": "c", "host": "h", "osd": "osd.0"}
    used = set()
    for board in boards:
        texts = [q.expr for q in queries.panel_queries(board, values)]
        texts += [v["query"] for v in board["templating"]["list"] if v["type"] == "query"]
        used |= {name for text in texts for name in RECORDED.findall(text)}
    assert len(used) > 30
    assert used - recorded == set(), f"not in {RECORDING.relative_to(REPO)}"


def test_raw_series_are_only_the_modules_plain_gauges_and_alerts(boards: list[dict[str, Any]]) -> None:
    """PromQL lives in the rules: a query that is not a recorded series reads one gauge the module declares
    (with the module's job selector, as the rules do; an OSD counter gauge with the module's or the host
    exporters' job: either may collect them), or Prometheus's ALERTS. No function, no operator."""
    gauges = {"ceph_perfwatch_" + f.name for f in MODULE_REGISTRY.families() if f.type == "gauge"}
    counters = {"ceph_perfwatch_" + name for name in daemon_counters.FAMILIES}
    for board in boards:
        for q in queries.panel_queries(board, {}):
            assert re.fullmatch(r"[a-zA-Z_:][a-zA-Z0-9_:]*\{[^{}]*\}", q.expr), f"{q.panel}: {q.expr}"
            name = q.expr.split("{", 1)[0]
            if ":" in name or name == "ALERTS":
                continue
            assert name in gauges, f"{q.panel}: {name} is not a gauge of the module"
            selector = common.COUNTERS if name in counters else common.MODULE
            assert selector in q.expr, f"{q.panel}: {q.expr} lacks {selector}"


def test_every_query_is_filtered_by_the_cluster(boards: list[dict[str, Any]]) -> None:
    for board in boards:
        for q in queries.panel_queries(board, {}):
            assert 'cluster="$cluster"' in q.expr, f"{board['uid']} {q.panel}: {q.expr}"


def test_thresholds_are_the_production_profiles(boards: list[dict[str, Any]]) -> None:
    found = {(uid, panel["title"]): thresholds_of(panel) for uid, panel in every_panel(boards)}
    for key, fields in THRESHOLDS.items():
        assert key in found, f"no panel {key}"
        assert {getattr(PRODUCTION, f) for f in fields} <= found[key], f"{key}: {found[key]}"
    numbers = {getattr(PRODUCTION, f.name) for f in dataclasses.fields(PRODUCTION)} | NOT_FROM_THE_PROFILE
    for key, values in found.items():
        assert values <= numbers, f"{key}: threshold {values - numbers} is not a profile value"


def test_the_media_panel_draws_the_media_busy_threshold(boards: list[dict[str, Any]]) -> None:
    board = next(b for b in boards if b["uid"] == "perfwatch-bottlenecks")
    media = next(p for p in panels(board) if p["title"] == "Media: busiest device")
    steps = media["fieldConfig"]["defaults"]["thresholds"]["steps"]
    assert [s["value"] for s in steps] == [None, PRODUCTION.media_busy_ratio]
    assert media["fieldConfig"]["defaults"]["custom"]["thresholdsStyle"]["mode"] == "dashed"
    assert f"{PRODUCTION.media_busy_ratio:.0%}" in media["description"]


def test_panel_links_lead_to_runbook_sections_and_to_our_dashboards(boards: list[dict[str, Any]]) -> None:
    anchors = validate.runbook_anchors(validate.RUNBOOK.read_text())
    alerts = {a.name.lower() for a in alerting.alerts(PRODUCTION)}
    runbook_links = 0
    for uid, panel in every_panel(boards):
        links = panel.get("links", []) + panel.get("fieldConfig", {}).get("defaults", {}).get("links", [])
        for link in links:
            url = link["url"]
            if url.startswith(alerting.RUNBOOK_URL):
                anchor = url.split("#", 1)[1]
                assert anchor in anchors and anchor in alerts, f"{uid} {panel['title']}: {url}"
                runbook_links += 1
            else:
                target = re.match(r"^/d/([\w-]+)/", url)
                assert target and target.group(1) in UIDS, f"{uid} {panel['title']}: {url}"
    assert runbook_links >= 20


def test_the_query_lister_substitutes_every_variable(boards: list[dict[str, Any]]) -> None:
    values = {"cluster": "fsid-1", "host": "host1", "osd": "osd.0"}
    listed = [q for board in boards for q in queries.panel_queries(board, values)]
    assert len(listed) == sum(len(p["targets"]) for _, p in every_panel(boards))
    assert all("$" not in q.expr and "fsid-1" in q.expr for q in listed)
    assert all(q.ref_id and q.panel for q in listed)
    assert queries.substitute('x{a="$osd", b=~"${host:regex}", c="[[cluster]]", d="$other"}', values) == (
        'x{a="osd.0", b=~"host1", c="fsid-1", d="$other"}'
    )
    detail = next(b for b in boards if b["uid"] == "perfwatch-osd-detail")
    assert queries.variable_selectors(detail, values) == {
        "cluster": "cluster:ceph_perfwatch_module_targets:count",
        "host": 'osd:ceph_perfwatch_osd:info{cluster="fsid-1"}',
        "osd": 'osd:ceph_perfwatch_osd:info{cluster="fsid-1", hostname="host1"}',
    }


def test_the_conditional_panels_are_few_and_exist(boards: list[dict[str, Any]]) -> None:
    titles = {(uid, panel["title"]) for uid, panel in every_panel(boards)}
    keys = [(c.dashboard, c.panel) for c in queries.CONDITIONAL_PANELS]
    assert len(keys) == len(set(keys))
    assert set(keys) <= titles, set(keys) - titles
    assert len(keys) <= len(titles) // 5, "keep CONDITIONAL_PANELS short: a panel without data is a smell"
    assert all(c.condition.startswith("only ") for c in queries.CONDITIONAL_PANELS)
    assert queries.conditional("perfwatch-bottlenecks", "Alerts firing") is not None
    assert queries.conditional("perfwatch-bottlenecks", "Client IOPS") is None


def test_every_panel_title_is_unique_within_its_dashboard(boards: list[dict[str, Any]]) -> None:
    """The live test and CONDITIONAL_PANELS name panels by (uid, title)."""
    for board in boards:
        titles = [p["title"] for p in panels(board)]
        assert len(titles) == len(set(titles)), board["uid"]


def test_release_dependent_panels_read_only_families_some_releases_lack(boards: list[dict[str, Any]]) -> None:
    """Each names a panel; each family it lists comes only from counters a release may lack (counters.py
    `releases`), and its queries read those families (raw, or a rule recorded from them) and nothing else."""
    recording = {r["record"]: r["expr"] for g in yaml.safe_load(RECORDING.read_text())["groups"] for r in g["rules"]}
    titles = {(uid, panel["title"]) for uid, panel in every_panel(boards)}
    entries = queries.RELEASE_DEPENDENT_PANELS
    assert entries and len({(r.dashboard, r.panel) for r in entries}) == len(entries)
    assert not {(r.dashboard, r.panel) for r in entries} & {(c.dashboard, c.panel) for c in queries.CONDITIONAL_PANELS}
    for entry in entries:
        assert (entry.dashboard, entry.panel) in titles, entry
        assert queries.release_dependent(entry.dashboard, entry.panel) == entry
        for family in entry.families:
            name = family.removeprefix("ceph_perfwatch_")
            specs = [s for s in (*counters.OSD_SPECS, *counters.RGW_SPECS) if s.family == name]
            assert specs and all(s.releases for s in specs), f"{family}: every release has it, not release-dependent"
        board = next(b for b in boards if b["uid"] == entry.dashboard)
        exprs = [q.expr for q in queries.panel_queries(board, {}) if q.panel == entry.panel]
        read = {n for e in exprs for n in re.findall(r"ceph_perfwatch_\w+", recording.get(e.split("{")[0], e))}
        assert read == set(entry.families), (entry.panel, read)
    assert queries.release_dependent("perfwatch-bottlenecks", "Alerts firing") is None
