"""mixin.libsonnet, evaluated by Debian's jsonnet: its rules equal the committed rule files of the profile it
is given, and its dashboards equal the committed dashboard JSON, every one of them; its `_config.runbookURL`
is the generator's runbook address, and setting it moves every runbook link of the alerts and dashboards."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import pytest
import yaml

from alerts import alerting
from dashboards import generate as dashboards_generate
from tests import paths

pytestmark = pytest.mark.host_tools  # jsonnet (make deps)

REPO = paths.REPO
GENERATED = REPO / "alerts" / "generated"


def evaluate(expr: str) -> Any:
    jsonnet = shutil.which("jsonnet")
    assert jsonnet, "jsonnet is missing: `apt-get install jsonnet` (the Makefile's apt-deps installs it)"
    proc = subprocess.run([jsonnet, "-J", str(REPO), "-e", expr], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("profile", ["production", "lab"])
def test_the_mixins_rules_are_the_committed_rule_files(profile: str) -> None:
    mixin = f'(import "mixin.libsonnet") + {{ _config+:: {{ profile: "{profile}" }} }}'
    got = evaluate(f"{{ rules: ({mixin}).prometheusRules, alerts: ({mixin}).prometheusAlerts }}")
    assert got["rules"] == yaml.safe_load((GENERATED / profile / "recording.yml").read_text())
    assert got["alerts"] == yaml.safe_load((GENERATED / profile / "alerts.yml").read_text())


def test_production_is_the_default_profile() -> None:
    got = evaluate('(import "mixin.libsonnet").prometheusAlerts')
    assert got == yaml.safe_load((GENERATED / "production" / "alerts.yml").read_text())


def test_the_mixins_dashboards_are_the_committed_json_all_of_them() -> None:
    got = evaluate('(import "mixin.libsonnet").grafanaDashboards')
    committed = {d["uid"]: d for d in dashboards_generate.committed()}
    assert {d["uid"] for d in got.values()} == set(committed), "a dashboard is missing from mixin.libsonnet"
    for name, board in got.items():
        assert name == f"{board['uid']}.json"
        assert board == committed[board["uid"]]


def test_the_mixins_runbook_address_is_the_generators() -> None:
    assert evaluate('(import "mixin.libsonnet")._config.runbookURL') == alerting.RUNBOOK_URL


@pytest.mark.parametrize("profile", ["production", "lab"])
def test_runbook_url_moves_every_runbook_link_and_nothing_else(profile: str) -> None:
    base = "https://wiki.example/runbook.md"
    mixin = f'(import "mixin.libsonnet") + {{ _config+:: {{ profile: "{profile}", runbookURL: "{base}" }} }}'
    got = evaluate(f"{{ alerts: ({mixin}).prometheusAlerts, dashboards: ({mixin}).grafanaDashboards }}")

    def moved(committed: Any) -> Any:
        return json.loads(json.dumps(committed).replace(alerting.RUNBOOK_URL, base))

    alerts = [rule for group in got["alerts"]["groups"] for rule in group["rules"]]
    assert alerts, "no alerts"
    for rule in alerts:
        assert rule["annotations"]["documentation"] == f"{base}#{rule['alert'].lower()}"
    assert got["alerts"] == moved(yaml.safe_load((GENERATED / profile / "alerts.yml").read_text()))
    committed = {f"{d['uid']}.json": d for d in dashboards_generate.committed()}
    assert got["dashboards"] == moved(committed)
    assert base in json.dumps(got["dashboards"]) and alerting.RUNBOOK_URL not in json.dumps(got["dashboards"])
