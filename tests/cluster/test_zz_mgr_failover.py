"""Kill the active mgr: the standby takes over, `ceph perfwatch status` answers from it and the
module keeps logging there.

Named to run last among the session-lab tests: it disturbs the mgrs (and puts them back).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .labutil import LabHandle, run_lab, wait_until

pytestmark = pytest.mark.every_release  # what differs between Ceph releases


def test_standby_takes_over_after_the_active_mgr_is_killed(lab: LabHandle) -> None:
    before = lab.ceph("mgr", "stat")
    old_active = before["active_name"]
    assert before["num_standby"] == 1
    standby = next(m for m in lab.lab.config.mgrs if m != old_active)

    killed = run_lab(lab.dir, "stop", "--kill", f"mgr.{old_active}")
    assert killed.returncode == 0 and "stopped" in killed.stdout, killed.stderr
    try:
        status = wait_until(
            lambda: (s := lab.ceph("perfwatch", "status", timeout=10))["mgr"] == standby and s,
            90,
            f"perfwatch status answered by mgr.{standby}",
        )
        assert status["active"] is True
        assert lab.ceph("mgr", "stat")["active_name"] == standby
    finally:
        started = run_lab(lab.dir, "start", f"mgr.{old_active}")
        assert started.returncode == 0, started.stderr
    wait_until(lambda: lab.ceph("mgr", "stat")["num_standby"] == 1, 60, f"mgr.{old_active} back as standby")
    lab.wait_healthy(60, "HEALTH_OK after failover")


# perfwatch's INFO lines in a mgr's log: the logger is `root` on Pacific and Reef, `perfwatch` on Tentacle
LINE = r"\[perfwatch INFO (?:root|perfwatch)\]"


def _log_since(path: Path, offset: int) -> str:
    with path.open("rb") as f:
        f.seek(offset)
        return f.read().decode(errors="replace")


def test_the_new_active_mgr_still_logs_perfwatch_after_a_failover(lab: LabHandle) -> None:
    # Pacific's MgrStandbyModule.__del__ strips every mgr log handler off the root logger it shares with
    # the active instance; once the garbage collector frees the retired standby, the new active mgr
    # logged nothing more from perfwatch. The premise: the lab's mgrs write INFO (debug_mgr >= 2).
    debug_mgr = lab.ceph("config", "get", "mgr", "debug_mgr", as_json=False).strip()
    assert int(debug_mgr.split("/")[0]) >= 2, f"debug_mgr {debug_mgr} hides perfwatch's INFO lines"
    old_active = lab.ceph("mgr", "stat")["active_name"]
    standby = next(m for m in lab.lab.config.mgrs if m != old_active)
    log = lab.lab.log_path(f"mgr.{standby}")

    # A standby started just now, as the killed mgr of a failover comes back: its module instance is
    # still in Python's young GC generations, so it is freed (and the handlers go) within seconds of the
    # promotion, not at some full collection much later.
    restarted_at = log.stat().st_size
    assert run_lab(lab.dir, "stop", f"mgr.{standby}").returncode == 0
    assert run_lab(lab.dir, "start", f"mgr.{standby}").returncode == 0
    wait_until(lambda: lab.ceph("mgr", "stat")["num_standby"] == 1, 60, f"mgr.{standby} back as standby")
    wait_until(
        lambda: re.search(rf"{LINE} serving on", _log_since(log, restarted_at)),
        60,
        f"perfwatch's standby endpoint up on mgr.{standby}",
    )

    promoted_at = log.stat().st_size
    killed = run_lab(lab.dir, "stop", "--kill", f"mgr.{old_active}")
    assert killed.returncode == 0 and "stopped" in killed.stdout, killed.stderr
    try:
        wait_until(
            lambda: lab.ceph("perfwatch", "status", timeout=10)["mgr"] == standby,
            90,
            f"perfwatch status answered by mgr.{standby}",
        )
        run_id = wait_until(
            lambda: lab.ceph("perfwatch", "bench", "run", "--kind", "net")["run_id"], 60, "a net round started"
        )
        wait_until(
            lambda: any(r["run_id"] == run_id for r in lab.ceph("perfwatch", "bench", "status")["recent"]),
            60,
            f"{run_id} finished",
        )
        # Logged at INFO whether done or failed (no ping times yet right after the failover).
        wait_until(
            lambda: re.search(rf"{LINE} benchmark {run_id} ", _log_since(log, promoted_at)),
            10,
            f"mgr.{standby}'s log to show perfwatch's line for {run_id}",
        )
    finally:
        started = run_lab(lab.dir, "start", f"mgr.{old_active}")
        assert started.returncode == 0, started.stderr
    wait_until(lambda: lab.ceph("mgr", "stat")["num_standby"] == 1, 60, f"mgr.{old_active} back as standby")
    lab.wait_healthy(60, "HEALTH_OK after failover")
