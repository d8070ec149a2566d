"""Whose load, live: with load_attribution on, the module's OSD perf queries see a second client (its own
cephx identity and pool) hammering the cluster beside the admin's light load; `ceph perfwatch top` and the
module's load series name that pool and that client first. Turned off, the module leaves only the
tombstone query on the OSDs (they ignore an empty set), and the OSDs' logs show they were told.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from lab import load

from .labutil import REPO, LabHandle, client_global_id, run_lab, wait_until
from .scrape import Scrape, scrape

# Pacific in CI only: the CPU saturation test (every release) proves the queries and the alert's naming on each
# release; this one passed on Reef 18.2.7 and Tentacle 20.2.4 when run by hand (about 45 s each).

HAMMER = "hammer"  # the second client's name (client.hammer) and pool
OPTION = "mgr/perfwatch/load_attribution"


def _metrics(lab: LabHandle) -> Scrape:
    return scrape(lab.lab.module_urls()[lab.ceph("mgr", "stat")["active_name"]] + "metrics")


def _queries(lab: LabHandle) -> dict[str, float]:
    """The module's perf queries by name: 1 registered, 0 wanted but not registered."""
    return {labels["query"]: value for labels, value in _metrics(lab).find("ceph_perfwatch_load_queries")}


def _top(lab: LabHandle, by: str) -> dict[str, Any]:
    return lab.ceph("perfwatch", "top", "--by", by)


def _first_in_top(lab: LabHandle, by: str, name: str, timeout: float) -> dict[str, Any]:
    """The `perfwatch top --by` table once `name` heads it; a failure shows the last table seen."""
    seen: list[dict[str, Any]] = []

    def first() -> dict[str, Any] | None:
        seen[:] = [_top(lab, by)]
        rows = seen[0]["rows"]
        return seen[0] if rows and rows[0]["name"] == name else None

    try:
        return wait_until(first, timeout, f"{name} first in perfwatch top --by {by}")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; the last table: {seen}") from None


def test_top_names_the_hammering_pool_and_client_and_turned_off_only_the_tombstone_stays(lab: LabHandle) -> None:
    lab.ceph("config", "set", "mgr", OPTION, "true", as_json=False)
    heavy: subprocess.Popen[str] | None = None
    light: subprocess.Popen[str] | None = None
    try:
        wait_until(lambda: _queries(lab).get("pools") == 1, 60, "the pools query registered")
        heavy = subprocess.Popen(
            [sys.executable, "-m", "lab", "--dir", str(lab.dir), "load", "--pattern", "small-random-write",
             "--seconds", "40", "--pool", HAMMER, "--client", HAMMER],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        light = subprocess.Popen(
            [sys.executable, "-m", "lab", "--dir", str(lab.dir), "load", "--pattern", "light-random-write",
             "--seconds", "40"],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        hammer_id = wait_until(lambda: client_global_id(lab, f"client.{HAMMER}"), 30, "client.hammer's mon session")
        pools = _first_in_top(lab, "pool", HAMMER, 45)
        clients = _first_in_top(lab, "client", hammer_id, 30)
        print(f"\ntop by pool: {pools['rows'][:3]}\ntop by client: {clients['rows'][:3]}")
        assert pools["rows"][0]["ops_share"] > 0.5, pools
        assert any(r["name"] == load.POOL for r in pools["rows"]), "the light load's pool is listed too"
        # Each load keeps no more writes in flight at the OSDs than its threads (Little's law on what the
        # module counted: ops/s times the mean OSD-side latency): librbd's cache, on by default, made one
        # thread about 150 and the light load as deep as the heavy one, which then came first or not by luck.
        for name, pattern in ((HAMMER, "small-random-write"), (load.POOL, "light-random-write")):
            row = next(r for r in pools["rows"] if r["name"] == name)
            in_flight = row["write_ops"] * (row["write_latency_ms"] or 0.0) / 1000
            assert in_flight <= load.PATTERNS[pattern].threads * 1.25 + 0.25, (name, in_flight, row)
        found = _metrics(lab)
        assert found.total("ceph_perfwatch_load_pool_ops", pool=HAMMER, op="write"), "the pool's series"
        assert found.find("ceph_perfwatch_load_client_ops", client=hammer_id), "the client's series"
        # Turned off while the loads run their last seconds (their 40 s outlast the checks above): the
        # module's removal of its queries overlaps them, and each load must still end well after.
        lab.ceph("config", "set", "mgr", OPTION, "false", as_json=False)
        wait_until(
            lambda: _queries(lab) == {"tombstone": 1},
            60,
            "the pools and clients queries removed, the tombstone in place",
        )
        assert heavy.wait(timeout=90) == 0, heavy.stdout.read() if heavy.stdout else ""
        assert light.wait(timeout=90) == 0, light.stdout.read() if light.stdout else ""
    finally:
        for proc in (heavy, light):  # `lab load` stops its bench on the way out
            if proc is not None and proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=30)
        lab.ceph("config", "set", "mgr", OPTION, "false", as_json=False)
    run_lab(lab.dir, "clear")
