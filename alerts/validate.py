"""Check the generated rules against the ceph-mixin conventions: `python3 -m alerts.validate`.

- alert names are CamelCase and unique; labels `severity` (warning or critical) and `type` (perfwatch);
- annotations `summary`, `description` and a `documentation` link to a heading of alerts/runbook.md;
- every alert is named in a promtool test under alerts/tests/, firing in one case and quiet in another;
- every `on (...)`, `by (...)` and `ignoring (...)` of every expression names `cluster` (several clusters
  in one Prometheus), and no expression aggregates `without` (it would keep instance and job);
- recorded names read `level:metric:operation` with a known level.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import yaml

from .alerting import ALERT_TYPE, RUNBOOK_URL

HERE = Path(__file__).resolve().parent
RUNBOOK = HERE / "runbook.md"
TESTS = HERE / "tests"
LEVELS = {"osd_device", "osd", "host", "host_device", "host_nic", "host_address", "cluster"}
CAMEL = re.compile(r"^[A-Z][a-z0-9]*(?:[A-Z][a-z0-9]*|[A-Z]+(?=[A-Z][a-z]|$))*$")
GROUPING = re.compile(r"\b(on|by|ignoring)\s*\(([^)]*)\)")
RECORD = re.compile(r"^([a-z_]+):([a-z][a-z0-9_]*):([a-z][a-z0-9_]*)$")


def load(path: Path) -> list[dict[str, Any]]:
    return [rule for group in yaml.safe_load(path.read_text())["groups"] for rule in group["rules"]]


def runbook_anchors(text: str) -> set[str]:
    """GitHub's anchors of the `## ` headings (lower case, spaces to dashes, punctuation dropped)."""
    return {
        re.sub(r"[^a-z0-9 _-]", "", line[3:].strip().lower()).replace(" ", "-")
        for line in text.splitlines()
        if line.startswith("## ")
    }


def tested_alerts(tests_dir: Path) -> tuple[set[str], set[str]]:
    """(alert names some promtool test expects firing, names some test expects quiet)."""
    firing: set[str] = set()
    quiet: set[str] = set()
    for path in sorted(tests_dir.glob("*.yml")):
        for test in yaml.safe_load(path.read_text()).get("tests", []):
            for case in test.get("alert_rule_test", []):
                (firing if case.get("exp_alerts") else quiet).add(case["alertname"])
    return firing, quiet


def expression_problems(where: str, expr: str) -> list[str]:
    problems = []
    for keyword, labels in GROUPING.findall(expr):
        names = {name.strip() for name in labels.split(",") if name.strip()}
        if "cluster" not in names:
            problems.append(f"{where}: `{keyword} ({labels})` does not name cluster")
    if re.search(r"\bwithout\s*\(", expr):
        problems.append(f"{where}: aggregates `without (...)`: name the labels kept with `by (...)`")
    return problems


def alert_problems(rule: dict[str, Any], anchors: set[str]) -> list[str]:
    name = rule["alert"]
    problems = []
    if not CAMEL.match(name):
        problems.append(f"{name}: not CamelCase")
    labels, notes = rule.get("labels", {}), rule.get("annotations", {})
    if labels.get("severity") not in ("warning", "critical"):
        problems.append(f"{name}: severity must be warning or critical, not {labels.get('severity')!r}")
    if labels.get("type") != ALERT_TYPE:
        problems.append(f"{name}: type label must be {ALERT_TYPE!r}")
    for key in ("summary", "description", "documentation"):
        if not str(notes.get(key, "")).strip():
            problems.append(f"{name}: no {key} annotation")
    doc = str(notes.get("documentation", ""))
    if not doc.startswith(RUNBOOK_URL + "#") or doc.split("#", 1)[1] not in anchors:
        problems.append(f"{name}: documentation {doc!r} is not a heading of alerts/runbook.md")
    return problems


def problems(alerts_file: Path, recording_file: Path, runbook: Path = RUNBOOK, tests_dir: Path = TESTS) -> list[str]:
    """Every convention broken by a profile's two rule files."""
    found: list[str] = []
    anchors = runbook_anchors(runbook.read_text()) if runbook.exists() else set()
    if not anchors:
        found.append(f"{runbook}: no runbook headings")
    alerts = load(alerts_file)
    names = [rule["alert"] for rule in alerts]
    found += [f"{name}: defined twice" for name in sorted({n for n in names if names.count(n) > 1})]
    firing, quiet = tested_alerts(tests_dir)
    for rule in alerts:
        found += alert_problems(rule, anchors)
        found += expression_problems(rule["alert"], rule["expr"])
        if rule["alert"] not in firing:
            found.append(f"{rule['alert']}: no promtool test shows it firing")
        if rule["alert"] not in quiet:
            found.append(f"{rule['alert']}: no promtool test shows it quiet")
    for rule in load(recording_file):
        record = rule["record"]
        match = RECORD.match(record)
        if not match or match.group(1) not in LEVELS:
            found.append(f"{record}: not level:metric:operation with a level of {sorted(LEVELS)}")
        found += expression_problems(record, rule["expr"])
    return found


def main() -> int:
    generated = HERE / "generated"
    found = []
    for profile in sorted(p.name for p in generated.iterdir() if p.is_dir()):
        found += [
            f"{profile}: {p}"
            for p in problems(generated / profile / "alerts.yml", generated / profile / "recording.yml")
        ]
    for problem in found:
        print(problem, file=sys.stderr)
    print(f"{len(found)} problem(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
