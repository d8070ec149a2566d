"""The lab's readiness probes against recorded-shape answers of a fake `ceph`, and wait_for's deadline."""

from __future__ import annotations

from typing import Any

import pytest

from lab import probes
from lab.cephcli import CephCommandError
from lab.config import LabError


class FakeCeph:
    """Answers `ceph <words>` from a table; a missing entry fails as the command would."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.asked: list[tuple[str, float]] = []

    def __call__(self, *args: str, timeout: float = 30.0, as_json: bool = True) -> Any:
        key = " ".join(args)
        self.asked.append((key, timeout))
        if key not in self.answers:
            raise CephCommandError(["ceph", *args], 2, "no such answer")
        return self.answers[key]


def test_active_mgr_only_once_available() -> None:
    assert probes.active_mgr(FakeCeph({"mgr stat": {"active_name": "x", "available": False}})) is None
    assert probes.active_mgr(FakeCeph({"mgr stat": {"active_name": "x", "available": True}})) == "x"


def test_a_module_runs_once_the_active_mgr_has_it_and_the_map_enables_it_and_an_error_when_it_cannot() -> None:
    def dump(available: bool, modules: list[str], *have: dict) -> FakeCeph:
        return FakeCeph({"mgr dump": {"available": available, "modules": modules, "available_modules": list(have)}})

    runnable = {"name": "perfwatch", "can_run": True}
    assert probes.module_runs(dump(True, ["iostat", "perfwatch"], runnable), "perfwatch")
    assert not probes.module_runs(dump(False, ["perfwatch"], runnable), "perfwatch")  # no active mgr yet
    assert not probes.module_runs(dump(True, ["iostat"], runnable), "perfwatch")  # not enabled
    # enabled with --force, but no mgr has it (a module missing from the image or the module path)
    assert not probes.module_runs(dump(True, ["perfwatch"], {"name": "iostat", "can_run": True}), "perfwatch")
    broken = {"name": "perfwatch", "can_run": False, "error_string": "No module named x"}
    with pytest.raises(LabError, match="the mgr cannot run perfwatch: No module named x"):
        probes.module_runs(dump(True, ["perfwatch"], broken), "perfwatch")


def test_osds_up_and_in() -> None:
    assert probes.osds_up_in(FakeCeph({"osd stat": {"num_up_osds": 3, "num_in_osds": 3}}), 3)
    assert not probes.osds_up_in(FakeCeph({"osd stat": {"num_up_osds": 3, "num_in_osds": 2}}), 3)


def test_pgs_clean_needs_pgs_and_all_of_them_active_clean() -> None:
    def pg_stat(num_pgs: int, states: list[tuple[str, int]]) -> FakeCeph:
        by_state = [{"name": name, "num": num} for name, num in states]
        return FakeCeph({"pg stat": {"pg_summary": {"num_pgs": num_pgs, "num_pg_by_state": by_state}}})

    assert probes.pgs_clean(pg_stat(8, [("active+clean", 8)]))
    assert not probes.pgs_clean(pg_stat(8, [("active+clean", 7), ("peering", 1)]))
    assert not probes.pgs_clean(pg_stat(0, []))


def test_health_ok_and_mon_answers() -> None:
    assert probes.health_ok(FakeCeph({"health": {"status": "HEALTH_OK"}}))
    assert not probes.health_ok(FakeCeph({"health": {"status": "HEALTH_WARN"}}))
    assert probes.mon_answers(FakeCeph({"mon stat": {"epoch": 1}}))


def test_a_closed_port_does_not_answer() -> None:
    assert not probes.http_answers("http://127.0.0.1:9/metrics")
    assert not probes.rgw_answers("http://127.0.0.1:9/")


def test_wait_for_retries_past_failed_commands_and_returns_the_first_truthy_answer() -> None:
    answers = iter([CephCommandError(["ceph"], 1, "not yet"), None, "ready"])

    def check() -> Any:
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    assert probes.wait_for(check, 5, "the thing", interval=0) == "ready"


def test_wait_for_names_what_it_waited_for_and_the_last_error() -> None:
    def check() -> bool:
        raise CephCommandError(["ceph", "health"], 1, "connection refused")

    with pytest.raises(LabError, match=r"timed out after 0 s waiting for HEALTH_OK \(last error: .*refused\)"):
        probes.wait_for(check, 0, "HEALTH_OK", interval=0)
