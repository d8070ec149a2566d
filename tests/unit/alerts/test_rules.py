"""The rules generated from alerts/profiles.py: fresh, valid for promtool, following the ceph-mixin
conventions, reading only series that something exports, and the two profiles differing only in numbers."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from alerts import alerting, generate, recording, validate
from alerts.profiles import LAB, PRODUCTION, PROFILES, Profile, differing_fields
from alerts.promql import input_selectors
from perfwatch.collection.module_families import MODULE_REGISTRY
from perfwatch_host_exporter.families import EXPORTER_REGISTRY

GENERATED = generate.OUT
DURATION = re.compile(r"^\d+[smhd]$")
SUMMARY_SUFFIXES = ("_sum", "_count", "_bucket")
# Series of node_exporter 1.5 and of Ceph's prometheus module the rules read (not ours to declare).
NODE_EXPORTER = {
    "node_cpu_seconds_total",
    "node_disk_io_time_seconds_total",
    "node_disk_io_time_weighted_seconds_total",
    "node_disk_read_time_seconds_total",
    "node_disk_write_time_seconds_total",
    "node_disk_reads_completed_total",
    "node_disk_writes_completed_total",
    "node_procs_running",
    "node_network_receive_bytes_total",
    "node_network_transmit_bytes_total",
    "node_network_receive_drop_total",
    "node_network_transmit_drop_total",
}
CEPH_MODULE = {
    "ceph_pool_stored",
    "ceph_pool_stored_raw",
    # client I/O per OSD (the dashboards' recording rules)
    "ceph_osd_op_r",
    "ceph_osd_op_w",
    "ceph_osd_op_r_out_bytes",
    "ceph_osd_op_w_in_bytes",
    "ceph_osd_op_r_latency_sum",
    "ceph_osd_op_r_latency_count",
    "ceph_osd_op_w_latency_sum",
    "ceph_osd_op_w_latency_count",
}
PROMETHEUS = {"up"}


def all_rules(profile: Profile) -> list[dict]:
    return [r for g in recording.groups(profile) + alerting.groups(profile) for r in g["rules"]]


def test_the_generated_files_are_what_the_config_makes() -> None:
    assert generate.stale() == [], "run `python3 -m alerts.generate` and commit alerts/generated/"


def test_a_changed_threshold_makes_the_files_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(generate, "OUT", tmp_path)
    monkeypatch.setattr(generate, "ROOK_RULE", tmp_path / "rook" / "prometheusrule.yaml")  # not the checkout's
    assert generate.main([]) == 0
    assert generate.stale() == []
    changed = dataclasses.replace(PRODUCTION, media_busy_ratio=0.8)
    monkeypatch.setattr(generate, "PROFILES", {**PROFILES, "production": changed})
    assert tmp_path / "production" / "recording.yml" in generate.stale()
    assert generate.main(["--check"]) == 1


def test_the_profiles_differ_only_in_numbers_and_durations() -> None:
    differ = differing_fields(PRODUCTION, LAB)
    assert differ.pop("name") == ("production", "lab")
    assert differ, "the lab profile must shorten something"
    for field, (prod, lab) in differ.items():
        both_numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (prod, lab))
        both_durations = all(isinstance(v, str) and DURATION.match(v) for v in (prod, lab))
        assert both_numbers or both_durations, f"{field}: {prod!r} vs {lab!r} is not a number or a duration"


def test_the_profiles_make_the_same_rules_but_for_the_numbers() -> None:
    def shape(text: str) -> str:
        return re.sub(r"\b\d+(\.\d+)?(e[+-]?\d+)?[smhd]?\b", "N", text)

    for prod, lab in zip(all_rules(PRODUCTION), all_rules(LAB), strict=True):
        assert shape(json.dumps(prod)) == shape(json.dumps(lab))


@pytest.mark.host_tools
@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_promtool_checks_the_rules(profile: str) -> None:
    # all.yml too: promtool finds duplicate rules within one file, and that file holds every group;
    # --lint-fatal, or a duplicate is only a warning and the check still passes
    files = [str(GENERATED / profile / name) for name in ("recording.yml", "alerts.yml", "all.yml")]
    proc = subprocess.run(["promtool", "check", "rules", "--lint-fatal", *files], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SUCCESS" in proc.stdout


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_the_rules_follow_the_conventions(profile: str) -> None:
    assert validate.problems(GENERATED / profile / "alerts.yml", GENERATED / profile / "recording.yml") == []


def test_the_validator_finds_what_breaks_the_conventions(tmp_path: Path) -> None:
    bad_alerts = {
        "groups": [
            {
                "name": "g",
                "rules": [
                    {
                        "alert": "osd_media_saturated",
                        "expr": "sum by (hostname) (x) > 1",
                        "labels": {"severity": "page"},
                        "annotations": {"summary": "s", "documentation": alerting.RUNBOOK_URL + "#nowhere"},
                    },
                    {
                        "alert": "PerfwatchFine",
                        "expr": "sum without (instance) (x) > 1",
                        "labels": {"severity": "warning", "type": alerting.ALERT_TYPE},
                        "annotations": {
                            "summary": "s",
                            "description": "d",
                            "documentation": alerting.RUNBOOK_URL + "#perfwatchfine",
                        },
                    },
                ],
            }
        ]
    }
    bad_recording = {"groups": [{"name": "g", "rules": [{"record": "media_busy", "expr": "x * on (device) y"}]}]}
    (tmp_path / "alerts.yml").write_text(yaml.safe_dump(bad_alerts))
    (tmp_path / "recording.yml").write_text(yaml.safe_dump(bad_recording))
    (tmp_path / "runbook.md").write_text("# Runbook\n\n## PerfwatchFine\n")
    (tmp_path / "tests").mkdir()
    found = "\n".join(
        validate.problems(
            tmp_path / "alerts.yml", tmp_path / "recording.yml", tmp_path / "runbook.md", tmp_path / "tests"
        )
    )
    for expected in (
        "osd_media_saturated: not CamelCase",
        "severity must be warning or critical",
        "osd_media_saturated: type label",
        "osd_media_saturated: no description",
        "is not a heading of alerts/runbook.md",
        "`by (hostname)` does not name cluster",
        "aggregates `without (...)`",
        "PerfwatchFine: no promtool test shows it firing",
        "PerfwatchFine: no promtool test shows it quiet",
        "media_busy: not level:metric:operation",
        "`on (device)` does not name cluster",
    ):
        assert expected in found, f"{expected!r} not in:\n{found}"
    assert "PerfwatchFine: type label" not in found


def declared() -> set[str]:
    names = set()
    for registry in (MODULE_REGISTRY, EXPORTER_REGISTRY):
        for family in registry.families():
            full = "ceph_perfwatch_" + family.name
            names.add(full)
            if family.type in ("summary", "histogram"):
                names.update(full + suffix for suffix in SUMMARY_SUFFIXES)
    return names


def test_every_series_the_rules_read_is_exported_by_something() -> None:
    known = declared() | NODE_EXPORTER | CEPH_MODULE | PROMETHEUS
    read = {sel.split("{", 1)[0] for rule in all_rules(PRODUCTION) for sel in input_selectors(rule["expr"])}
    assert read, "no input found: the selector scan is broken"
    assert read - known == set()
    # and the rules use every node_exporter / Ceph name listed above (the list is not stale)
    assert (NODE_EXPORTER | CEPH_MODULE | PROMETHEUS) - read == set()


def test_every_label_a_rule_matches_on_is_one_its_series_carry() -> None:
    families = {"ceph_perfwatch_" + f.name: f for r in (MODULE_REGISTRY, EXPORTER_REGISTRY) for f in r.families()}
    for rule in all_rules(PRODUCTION):
        for selector in input_selectors(rule["expr"]):
            name, matchers = selector.split("{", 1)
            family = families.get(name) or families.get(re.sub(r"_(sum|count|bucket)$", "", name))
            if family is None:
                continue  # node_exporter's and Ceph's: checked against a live lab (tests/cluster)
            labels = set(re.findall(r"([a-z_]+)\s*[=!~]+", matchers)) - {"job"}
            assert labels <= set(family.labels), f"{selector}: {labels - set(family.labels)} not on {name}"
