"""Kill the active mgr: the standby takes over and `ceph perfwatch status` answers from it.

Named to run last among the session-lab tests: it disturbs the mgrs (and puts them back).
"""

from __future__ import annotations

from .labutil import LabHandle, run_lab, wait_until


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
