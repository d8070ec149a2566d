"""One lab for the whole cluster-test session: three simulated hosts, on ports and a subnet of its own."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from .labutil import REPO, LabHandle, leftovers, run_lab, snapshot

SESSION_LAB_DIR = Path(os.environ.get("PERFWATCH_TEST_LAB_DIR", REPO / ".lab-test")).resolve()
SESSION_LAB_ARGS = (
    "--hosts", "3", "--name", "pwtest", "--subnet-index", "1",
    "--mon-port", "13300", "--rgw-port", "17480", "--module-port", "19284",
    "--exporter-port", "19285", "--node-exporter-port", "19100",
)  # fmt: skip


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that run a lab of their own go first, before the session lab starts: one lab at a time."""
    items.sort(key=lambda item: 0 if item.get_closest_marker("own_lab") else 1)


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
        state, netns, links, name = snapshot(SESSION_LAB_DIR)
        down = run_lab(SESSION_LAB_DIR, "down")
        assert down.returncode == 0, down.stderr
        left = leftovers(SESSION_LAB_DIR, state, netns, links, name)
        assert not left, f"`down` left these behind: {left}"
