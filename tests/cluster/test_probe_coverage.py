"""Every OSD measured, live: perfwatch grows its scratch pool and pins pg_num_min, so the PG autoscaler, on
for that pool, leaves it be (and shrinks it once the pin is taken away: the control); the light probe has a
fresh result of every up OSD, and the coverage series say so. On a lab of its own: the pool grows only on a
quiet, clean cluster, which the session lab after its other tests need not be (docs/decisions/lab-margins.md)."""

from __future__ import annotations

import time
import urllib.request
from collections.abc import Iterator

import pytest

from .labutil import LabHandle, finished, side_lab, start_bench, wait_until

pytestmark = [pytest.mark.own_lab]

POOL, PGS = "perfwatch", 128
AUTOSCALER_PASSES = 3  # of 5 s each: the autoscaler looked at the pool and left it


def pool_entry(lab: LabHandle, name: str) -> dict | None:
    return next((p for p in lab.ceph("osd", "pool", "ls", "detail") if p["pool_name"] == name), None)


def coverage(lab: LabHandle) -> dict[str, float]:
    active = lab.ceph("mgr", "stat")["active_name"]
    with urllib.request.urlopen(lab.lab.module_urls()[active] + "metrics", timeout=10) as resp:
        text = resp.read().decode()
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith('ceph_perfwatch_bench_probe_coverage_osds{kind="rados",state="'):
            out[line.split('state="', 1)[1].split('"', 1)[0]] = float(line.rsplit(" ", 1)[1])
    return out


def set_option(lab: LabHandle, who: str, key: str, value: str) -> None:
    lab.ceph("config", "set", who, key, value, as_json=False)


@pytest.fixture(scope="module")
def cover_lab() -> Iterator[LabHandle]:
    with side_lab("pwcover", "--hosts", "2", "--osds", "2", timeout=300) as (directory, _):
        yield LabHandle(directory)


@pytest.fixture
def autoscaled(cover_lab: LabHandle) -> Iterator[None]:
    lab = cover_lab
    set_option(lab, "mgr", "mgr/pg_autoscaler/sleep_interval", "5")
    set_option(lab, "mgr", "mgr/perfwatch/scratch_pool_pg_num", str(PGS))
    set_option(lab, "mgr", "mgr/perfwatch/rados_probe_interval", "0")  # the test's probes only
    wait_until(lambda: lab.ceph("perfwatch", "status")["options"]["rados_probe_interval"] == 0, 30, "options seen")
    try:
        yield
    finally:
        # `config rm` alone is not told to modules: set the default first
        set_option(lab, "mgr", "mgr/perfwatch/scratch_pool_pg_num", "32")
        set_option(lab, "mgr", "mgr/perfwatch/rados_probe_interval", "60")
        for key in ("perfwatch/scratch_pool_pg_num", "perfwatch/rados_probe_interval", "pg_autoscaler/sleep_interval"):
            lab.ceph("config", "rm", "mgr", "mgr/" + key, as_json=False)
        if pool_entry(lab, POOL) is not None:  # perfwatch creates it again, with 32 PGs, when a run needs it
            lab.ceph("osd", "pool", "rm", POOL, POOL, "--yes-i-really-really-mean-it", as_json=False)
        lab.wait_healthy(120, "HEALTH_OK with the grown scratch pool removed")


@pytest.mark.every_release
def test_the_autoscaler_leaves_the_grown_scratch_pool_and_every_up_osd_has_a_fresh_result(
    cover_lab: LabHandle, autoscaled: None
) -> None:
    lab = cover_lab
    finished(lab, start_bench(lab, "--kind", "rados"))  # creates the pool
    lab.ceph("osd", "pool", "set", POOL, "pg_autoscale_mode", "on", as_json=False)

    def grown(field: str = "pg_num") -> bool:
        entry = pool_entry(lab, POOL) or {}
        return entry.get(field) == PGS and (entry.get("options") or {}).get("pg_num_min") == PGS

    def probe_until_grown() -> bool:  # a probe grows the pool after it, once health is OK and PGs clean
        if grown("pg_num_target"):
            return True
        finished(lab, start_bench(lab, "--kind", "rados"))
        return False

    wait_until(probe_until_grown, 90, "a probe to grow the scratch pool", interval=3)
    wait_until(grown, 60, f"the scratch pool at {PGS} PGs with pg_num_min {PGS}")
    grown_at = time.monotonic()

    up = lab.ceph("osd", "stat")["num_up_osds"]
    lab.wait_healthy(120, "HEALTH_OK after the split")
    assert finished(lab, start_bench(lab, "--kind", "rados"))["state"] == "done"
    wait_until(
        lambda: (c := coverage(lab)) == {"fresh": up, "waiting": 0, "unreachable": 0} or print(c),
        30,
        "every up OSD with a fresh result",
    )
    # the autoscaler's passes since the pool grew (sleep_interval 5 s) overlap the wait, the probe and its
    # coverage above: only what is left of them is slept
    time.sleep(max(0.0, 5 * AUTOSCALER_PASSES - (time.monotonic() - grown_at)))
    entry = pool_entry(lab, POOL) or {}
    assert entry["pg_autoscale_mode"] == "on" and entry["pg_num_target"] == PGS, "the autoscaler left it as it was"

    # the control: without the pin, the autoscaler shrinks the empty pool (so it was at work above)
    lab.ceph("osd", "pool", "set", POOL, "pg_num_min", "0", as_json=False)
    shrunk = wait_until(lambda: (e := pool_entry(lab, POOL)) and e["pg_num_target"] < PGS and e, 60, "a shrink")
    print(f"\nunpinned, the autoscaler took {POOL} from {PGS} to {shrunk['pg_num_target']} PGs")
