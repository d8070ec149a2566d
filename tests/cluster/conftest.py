"""One lab for the whole cluster-test session: three simulated hosts, on ports and a subnet of its own,
running the Ceph release $PERFWATCH_TEST_RELEASE names (default pacific; `make test` sets it)."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .alert_checks import ROWS
from .labutil import RELEASE, REPO, LabHandle, leftovers, run_lab, snapshot

SESSION_LAB_DIR = Path(os.environ.get("PERFWATCH_TEST_LAB_DIR", REPO / ".lab-test")).resolve()
SESSION_LAB_ARGS = (
    "--hosts", "3", "--name", "pwtest", "--subnet-index", "1", "--osd-size", "6", "--cluster-network",
    "--mon-port", "13300", "--rgw-port", "17480", "--module-port", "19284",
    "--exporter-port", "19285", "--node-exporter-port", "19100",
    "--prometheus-port", "19090", "--alertmanager-port", "19093", "--ceph-metrics-port", "19283",
    "--release", RELEASE,
)  # fmt: skip


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that run a lab of their own go first, before the session lab starts: one lab at a time."""
    items.sort(key=lambda item: 0 if item.get_closest_marker("own_lab") else 1)


# The tests that saturate a resource and wait for its alert through Alertmanager (aimed at under 10 minutes
# together): their time, setup and teardown (their own labs) included, is summed below.
SATURATION_TESTS = ("tests/cluster/test_saturation", "tests/cluster/test_media_layouts.py")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The live saturation table (one row per knob and load: the alert, seconds to fire, its labels, other
    saturation alerts, seconds to resolve) and the saturation part's time, in every run's output."""
    spent = {"setup": 0.0, "call": 0.0, "teardown": 0.0}
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "nodeid", "").startswith(SATURATION_TESTS) and getattr(report, "when", "") in spent:
                spent[report.when] += report.duration
    seconds = sum(spent.values())
    if not ROWS and not seconds:
        return
    terminalreporter.write_sep("-", "saturation alerts, live")
    terminalreporter.write_line(
        "| knob and load | alert | s to fire | labels | other saturation alerts | s to resolve |"
    )
    terminalreporter.write_line("| --- | --- | --- | --- | --- | --- |")
    for row in ROWS:
        terminalreporter.write_line(row)
    terminalreporter.write_line(
        f"saturation tests took {seconds:.0f} s: {spent['call']:.0f} s in the tests, {spent['setup']:.0f} s of "
        f"setup and {spent['teardown']:.0f} s of teardown (their own labs' up and down among them)"
    )


@pytest.fixture(scope="session")
def lab() -> Iterator[LabHandle]:
    if (SESSION_LAB_DIR / "lab.json").exists():
        run_lab(SESSION_LAB_DIR, "down")  # left over by a run that was killed
    proc = run_lab(SESSION_LAB_DIR, "up", *SESSION_LAB_ARGS)
    if proc.returncode != 0:
        run_lab(SESSION_LAB_DIR, "down")
        pytest.fail(f"the session lab did not start:\n{proc.stdout}\n{proc.stderr}", pytrace=False)
    print(f"\nsession lab: {proc.stdout.strip()}")
    handle = LabHandle(SESSION_LAB_DIR)
    try:
        yield handle
    finally:
        keep = os.environ.get("PERFWATCH_TEST_KEEP_LOGS")  # a directory: the lab's logs are copied there
        if keep:
            for part in ("log", "crash"):
                if (SESSION_LAB_DIR / part).is_dir():
                    shutil.copytree(SESSION_LAB_DIR / part, Path(keep) / part, dirs_exist_ok=True)
        state, netns, links, name = snapshot(SESSION_LAB_DIR)
        down = run_lab(SESSION_LAB_DIR, "down")
        assert down.returncode == 0, down.stderr
        left = leftovers(SESSION_LAB_DIR, state, netns, links, name)
        assert not left, f"`down` left these behind: {left}"


# ----- no cascade: a test that leaves the session lab broken is named once; later tests skip ----------

FULLNESS_CHECKS = ("OSD_FULL", "OSD_BACKFILLFULL", "OSD_NEARFULL", "POOL_FULL", "POOL_NEARFULL")
_broken_by: list[str] = []


def lab_problems(lab: LabHandle) -> list[str]:
    """What is wrong with the session lab now: dead daemons, knobs left on, OSDs down, full OSDs."""
    found = [
        f"{name} is not running" for name, ok in lab.lab.alive().items() if not ok and not name.startswith("load.")
    ]
    found += [f"knob {key} is still on" for key in lab.lab.state.knobs]
    try:  # one CLI call after each of some 150 tests (about 0.4 s each): health and the OSD map together
        status = lab.ceph("status", timeout=20)
        health, stat = status["health"], status["osdmap"]
        stat = stat.get("osdmap", stat)  # nested once more before Octopus
    except Exception as exc:  # a cluster that does not answer is broken too
        return [*found, f"the cluster does not answer: {exc}"]
    if stat["num_up_osds"] != stat["num_osds"]:
        found.append(f"{stat['num_osds'] - stat['num_up_osds']} OSD(s) down")
    found += [
        f"{name}: {check['summary']['message']}" for name, check in health["checks"].items() if name in FULLNESS_CHECKS
    ]
    if health["status"] == "HEALTH_ERR":
        found.append("HEALTH_ERR: " + ", ".join(sorted(health["checks"])))
    return found


def dead_daemon_evidence(lab: LabHandle, lines: int = 60) -> str:
    """The last lines of each dead daemon's log and the lab's crash reports: the CI keeps only the test
    output, and a daemon that died between two tests is otherwise a mystery once the lab is gone."""
    parts = []
    for name, ok in lab.lab.alive().items():
        if ok or name.startswith("load."):
            continue
        for log in (lab.lab.log_path(name), lab.lab.catalogue.output_path(name)):
            if log.exists():
                text = log.read_text(errors="replace").splitlines()[-lines:]
                parts.append(f"--- the last {len(text)} lines of {log} ---\n" + "\n".join(text))
    crash_dir = lab.dir / "crash"
    for meta in sorted(crash_dir.glob("*/meta")) if crash_dir.is_dir() else []:
        parts.append(f"--- crash report {meta} ---\n{meta.read_text(errors='replace')[:4000]}")
    return "\n".join(parts)


def restore(lab: LabHandle) -> list[str]:
    """Undo knobs, start dead daemons, wait up to 2 minutes: the problems that remain."""
    run_lab(lab.dir, "clear")
    for name, ok in lab.lab.alive().items():
        if not ok and not name.startswith("load."):
            run_lab(lab.dir, "start", name)
    deadline = time.monotonic() + 120
    while (problems := lab_problems(lab)) and time.monotonic() < deadline:
        time.sleep(3)
    return problems


@pytest.fixture(autouse=True)
def session_lab_intact(request: pytest.FixtureRequest) -> Iterator[None]:
    """Before a test on the session lab: skip it, with the one reason, if an earlier test broke the lab.
    After it: if the lab is not as a test should leave it, restore it; if that fails, name the culprit."""
    if "lab" not in request.fixturenames:
        yield
        return
    if _broken_by:
        pytest.skip(f"the session lab is broken since {_broken_by[0]}")
    yield
    lab: LabHandle = request.getfixturevalue("lab")
    problems = lab_problems(lab)
    if not problems:
        return
    print(f"\n{request.node.nodeid} left the session lab with: {problems}; restoring it")
    print(dead_daemon_evidence(lab))
    remaining = restore(lab)
    if remaining:
        _broken_by.append(
            f"{request.node.nodeid} (left: {'; '.join(problems)}; after restoring: {'; '.join(remaining)})"
        )
