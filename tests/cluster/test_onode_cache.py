"""The onode cache alert tells a cache that is too small from an ingest, evaluated by the session lab's
Prometheus on its real rules.

One OSD's cache is cut to 20 MB (autotune off: about 6,000 onodes), the others keep theirs. A 4 KiB ingest
of new objects misses on every OSD by design (about 73 % of lookups, the old alert's condition); random
reads of those objects then miss only where the cache cannot hold them. The alert's own expression (from
the generated lab rules, without its `for:`) must name nothing during the ingest and only the cut OSD under
the reads. Thresholds and the live figures behind them: alerts/profiles.py (onode_*)."""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from .alert_checks import query
from .labutil import REPO, LabHandle, run_lab

VICTIM = 0
CUT_CACHE_BYTES = 20 * 1024 * 1024
POOL = "onode-ingest"
ALERT = "PerfwatchOnodeCacheMisses"
INGEST = 24_000  # 4 KiB objects the ingest writes: four times what the cut cache holds
INGEST_SECONDS_MAX = 75  # at most: 24,000 objects took 22-40 s here (600-1,100 writes a second)


def alert_expr() -> str:
    rules = yaml.safe_load((REPO / "alerts" / "generated" / "lab" / "alerts.yml").read_text())
    return next(r["expr"] for g in rules["groups"] for r in g["rules"] if r.get("alert") == ALERT)


def per_osd(lab: LabHandle, expr: str) -> dict[str, float]:
    return {r["metric"]["ceph_daemon"]: float(r["value"][1]) for r in query(lab, expr)}


def restart_osd(lab: LabHandle, osd: int) -> None:
    for verb in ("stop", "start"):
        proc = run_lab(lab.dir, verb, f"osd.{osd}")
        assert proc.returncode == 0, proc.stderr
    lab.wait_healthy(120, f"HEALTH_OK after restarting osd.{osd}")


@pytest.fixture
def cut_cache(lab: LabHandle) -> Iterator[None]:
    settings = {"bluestore_cache_autotune": "false", "bluestore_cache_size": str(CUT_CACHE_BYTES)}
    for name, value in settings.items():
        lab.ceph("config", "set", f"osd.{VICTIM}", name, value, as_json=False)
    restart_osd(lab, VICTIM)
    lab.ceph("osd", "pool", "create", POOL, "32", "32", as_json=False)
    lab.ceph("osd", "pool", "application", "enable", POOL, "rados", as_json=False)
    try:
        yield
    finally:
        lab.ceph("osd", "pool", "rm", POOL, POOL, "--yes-i-really-really-mean-it", as_json=False)
        for name in settings:
            lab.ceph("config", "rm", f"osd.{VICTIM}", name, as_json=False)
        restart_osd(lab, VICTIM)


def rados_bench(lab: LabHandle, seconds: int, *args: str) -> subprocess.Popen[str]:
    command = ["rados", "-c", str(lab.conf), "-p", POOL, "bench", str(seconds), *args, "-t", "16"]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def finish(proc: subprocess.Popen[str], what: str) -> str:
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, f"{what}: {out}"
    return out


def test_an_ingest_stays_quiet_and_random_reads_on_a_cache_too_small_name_that_osd(
    lab: LabHandle, cut_cache: None
) -> None:
    expr = alert_expr()
    # A count, not a time: 30 s wrote 18,138 objects on a slow day here (and the cut cache must be too small)
    ingest = rados_bench(lab, INGEST_SECONDS_MAX, "write", "-b", "4096", "--no-cleanup", "--max-objects", str(INGEST))
    seen: list[dict[str, Any]] = []
    try:
        time.sleep(15)  # the lab's rate window is 30 s: from here the rates see the ingest
        while ingest.poll() is None:
            seen.append({"misses": per_osd(lab, "osd:ceph_perfwatch_onode_miss:ratio"), "alert": per_osd(lab, expr)})
            time.sleep(3)
    finally:
        out = finish(ingest, "the ingest")
    # once more as it ends (the 30 s window still holds it): a fast machine's ingest may end before 15 s
    seen.append({"misses": per_osd(lab, "osd:ceph_perfwatch_onode_miss:ratio"), "alert": per_osd(lab, expr)})
    written = int(re.search(r"Total writes made:\s+(\d+)", out).group(1))  # type: ignore[union-attr]
    print(f"\ningest: {written} objects of 4 KiB; miss ratio and alert condition every 3 s: {seen}")
    assert written > 20000, "the cut cache (about 6,000 onodes) must be too small for what was written"
    assert any(len(s["misses"]) == 3 and min(s["misses"].values()) >= 0.5 for s in seen), (
        "the ingest did not miss as new objects do: nothing was tested"
    )
    assert all(not s["alert"] for s in seen), seen

    reads = rados_bench(lab, 45, "rand")
    during: list[dict[str, Any]] = []
    try:
        time.sleep(10)
        while reads.poll() is None:
            during.append({"misses": per_osd(lab, "osd:ceph_perfwatch_onode_miss:ratio"), "alert": per_osd(lab, expr)})
            time.sleep(3)
    finally:
        finish(reads, "the random reads")
    print(f"random reads: miss ratio and alert condition every 3 s: {during}")
    victim = f"osd.{VICTIM}"
    assert all(set(s["alert"]) <= {victim} for s in during), "an OSD whose cache holds every object was named"
    # Once the rate window has left the ingest behind: the others hit, the cut one misses and is named.
    steady = [
        s for s in during if len(s["misses"]) == 3 and max(v for o, v in s["misses"].items() if o != victim) < 0.1
    ]
    assert steady, "the reads never settled: nothing was tested"
    assert all(list(s["alert"]) == [victim] for s in steady), steady
