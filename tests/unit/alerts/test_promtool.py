"""The promtool unit tests of the production rules (alerts/tests/*.test.yml): promtool passes them, they feed
only raw inputs to both production rule files, and every alert has a case where it fires and a case where it
must stay quiet. promtool comes with Debian's prometheus package (which `make deps` installs): 2.42, Debian 12's.
The same tests pass on Prometheus 3 (the 3.x LTS, dev/tooling/prometheus3.py, which `make deps` fetches), whose
range selectors leave out the sample at the window's start and whose rate() multiplies by a factor where 2.42
divides: the same figures but for the last digit (0.9249999999999999 for 0.925), so there promtool compares
values as nearly equal (`fuzzy_compare`, a field 2.42 does not know), in copies of the test files."""

from __future__ import annotations

import functools
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import paths
from tooling import prometheus3

pytestmark = pytest.mark.host_tools  # promtool 2.42 and 3.5 (make deps)

REPO = paths.REPO
TESTS = REPO / "alerts" / "tests"
PRODUCTION = REPO / "alerts" / "generated" / "production"
RULE_FILES = [PRODUCTION / "recording.yml", PRODUCTION / "alerts.yml"]
TEST_FILES = sorted(TESTS.glob("*.test.yml"))


def promtool() -> str:
    path = shutil.which("promtool")
    if path is None:
        pytest.fail(
            "promtool not found: install Debian's prometheus (`apt-get install -y prometheus`, which `make deps` does)"
        )
    return path


@functools.cache
def load(path: Path) -> dict[str, Any]:
    loaded = yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    assert isinstance(loaded, dict), path
    return loaded


def rule_groups() -> list[dict[str, Any]]:
    """The production groups, recording then alerting, in file order."""
    return [group for path in RULE_FILES for group in load(path)["groups"]]


def alert_names() -> set[str]:
    return {rule["alert"] for group in rule_groups() for rule in group["rules"] if "alert" in rule}


def groups_of(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """(a name for it, test group) for every test group of a test file."""
    for index, group in enumerate(load(path)["tests"]):
        yield f"{path.name} #{index + 1} {group.get('name', '')}".rstrip(), group


def alert_cases() -> Iterator[tuple[str, dict[str, Any]]]:
    """(the test group's name, alert_rule_test entry) for every alert case of every test file."""
    for path in TEST_FILES:
        for where, group in groups_of(path):
            for case in group.get("alert_rule_test", []):
                yield where, case


def side_by_side(binary: str | Path, paths: list[Path]) -> dict[Path, subprocess.CompletedProcess[str]]:
    """`promtool test rules` of each test file (in its own folder), run side by side (each takes seconds)."""
    running = {
        path: subprocess.Popen(
            [str(binary), "test", "rules", path.name],
            cwd=path.parent,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for path in paths
    }
    results = {}
    for path, proc in running.items():
        try:
            out, _ = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
        results[path] = subprocess.CompletedProcess(proc.args, proc.returncode, out)
    return results


@pytest.fixture(scope="module")
def promtool_results() -> dict[Path, subprocess.CompletedProcess[str]]:
    return side_by_side(promtool(), TEST_FILES)


def promtool3() -> Path:
    found = prometheus3.cached()
    if found is None:
        pytest.fail(
            f"no Prometheus 3 in {prometheus3.cache_dir()}: run `python3 -m tooling.prometheus3` (`make deps` does)"
        )
    return found / "promtool"


def fuzzy_copy(path: Path, folder: Path) -> Path:
    """The test file `path` in `folder`, with `fuzzy_compare: true` and its rule files' absolute paths."""
    suite = load(path)
    copy = {
        **suite,
        "fuzzy_compare": True,
        "rule_files": [str((path.parent / f).resolve()) for f in suite["rule_files"]],
    }
    out = folder / path.name
    out.write_text(yaml.safe_dump(copy, sort_keys=False))
    return out


@pytest.fixture(scope="module")
def promtool3_results(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, subprocess.CompletedProcess[str]]:
    folder = tmp_path_factory.mktemp("prometheus3-tests")
    copies = {fuzzy_copy(path, folder): path for path in TEST_FILES}
    return {copies[copy]: done for copy, done in side_by_side(promtool3(), list(copies)).items()}


def test_there_are_test_files() -> None:
    assert TEST_FILES, f"no *.test.yml in {TESTS.relative_to(REPO)}"


@pytest.mark.parametrize("path", TEST_FILES, ids=lambda p: p.name)
def test_promtool_passes(path: Path, promtool_results: dict[Path, subprocess.CompletedProcess[str]]) -> None:
    done = promtool_results[path]
    assert done.returncode == 0, f"promtool test rules {path.relative_to(REPO)}:\n{done.stdout}"
    assert "SUCCESS" in done.stdout, done.stdout


@pytest.mark.parametrize("path", TEST_FILES, ids=lambda p: p.name)
def test_promtool_of_prometheus_3_passes_them_too(
    path: Path, promtool3_results: dict[Path, subprocess.CompletedProcess[str]]
) -> None:
    done = promtool3_results[path]
    assert done.returncode == 0, f"Prometheus 3's promtool test rules {path.relative_to(REPO)}:\n{done.stdout}"
    assert "SUCCESS" in done.stdout, done.stdout


def test_nearly_equal_on_prometheus_3_is_not_so_loose_that_a_wrong_figure_passes(tmp_path: Path) -> None:
    """media.test.yml's 0.925 (busy) as 0.9251 in a copy: Prometheus 3's promtool must fail it."""
    copy = fuzzy_copy(TESTS / "media.test.yml", tmp_path)
    text = copy.read_text()
    assert "value: 0.925\n" in text
    copy.write_text(text.replace("value: 0.925\n", "value: 0.9251\n", 1))
    done = side_by_side(promtool3(), [copy])[copy]
    assert done.returncode != 0 and "9.251E-01" in done.stdout, done.stdout


@pytest.mark.parametrize("profile", ["production", "lab"])
def test_promtool_of_prometheus_3_accepts_the_rule_files(profile: str) -> None:
    files = sorted((REPO / "alerts" / "generated" / profile).glob("*.yml"))
    assert files, f"no rule file generated for {profile}"
    done = subprocess.run([str(promtool3()), "check", "rules", *map(str, files)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("SUCCESS") == len(files), done.stdout


@pytest.mark.parametrize("path", TEST_FILES, ids=lambda p: p.name)
def test_loads_both_production_rule_files_in_their_evaluation_order(path: Path) -> None:
    suite = load(path)
    assert [(path.parent / f).resolve() for f in suite["rule_files"]] == RULE_FILES
    assert suite["evaluation_interval"] == "1m"
    # without group_eval_order promtool evaluates the groups in a random order, and a group may read the
    # results of the groups it depends on one evaluation late: the order must be the rule files' own
    assert suite.get("group_eval_order") == [group["name"] for group in rule_groups()]


@pytest.mark.parametrize("path", TEST_FILES, ids=lambda p: p.name)
def test_feeds_only_raw_inputs(path: Path) -> None:
    """No input series is a recorded one: the tests go through every join of the recording rules."""
    recorded = {rule["record"] for group in rule_groups() for rule in group["rules"] if "record" in rule}
    for where, group in groups_of(path):
        for series in group.get("input_series", []):
            name = series["series"].split("{", 1)[0].strip()
            assert ":" not in name and name not in recorded, f"{where}: feeds {name}"
            assert name != "ALERTS", f"{where}: feeds ALERTS"


def test_cases_name_only_existing_alerts() -> None:
    """An alert case for a misspelt alert would pass as `exp_alerts: []` without testing anything."""
    names = alert_names()
    unknown = {(where, case["alertname"]) for where, case in alert_cases() if case["alertname"] not in names}
    assert not unknown, f"not in {RULE_FILES[1].relative_to(REPO)}: {sorted(unknown)}"


def test_every_alert_fires_in_a_case_and_stays_quiet_in_a_group_of_near_misses() -> None:
    """A firing case, and an `exp_alerts: []` case in a test group where the alert never fires (an
    `exp_alerts: []` before the `for:` has run out, in a group where it then fires, is not a near miss)."""
    firing: dict[str, set[str]] = {}
    quiet: dict[str, set[str]] = {}
    for where, case in alert_cases():
        if case.get("exp_alerts"):
            firing.setdefault(case["alertname"], set()).add(where)
        elif "exp_alerts" in case and case["exp_alerts"] == []:
            quiet.setdefault(case["alertname"], set()).add(where)
    names = alert_names()
    assert names, f"no alert in {RULE_FILES[1].relative_to(REPO)}"
    no_fire = sorted(name for name in names if not firing.get(name))
    no_near_miss = sorted(name for name in names if not quiet.get(name, set()) - firing.get(name, set()))
    assert not no_fire, f"alerts without a firing case: {no_fire}"
    assert not no_near_miss, f"alerts without an `exp_alerts: []` case in a group where they never fire: {no_near_miss}"
