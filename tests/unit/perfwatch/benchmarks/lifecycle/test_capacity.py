"""The capacity guard's arithmetic (mgr_module/perfwatch/benchmarks/lifecycle/capacity.py) with the lab incident's
figures (a 2 GiB OSD with 1.2 GiB free, nearfull 0.85), the parsing of recorded Pacific payloads, and the kinds'
checks."""

from __future__ import annotations

import json
from typing import Any

import pytest

from perfwatch.benchmarks.engine.qd_loop import run_at_queue_depth
from perfwatch.benchmarks.kinds.osd import OsdBench
from perfwatch.benchmarks.kinds.rados import RadosLatency
from perfwatch.benchmarks.kinds.rbd import RbdIO
from perfwatch.benchmarks.kinds.rgw import RgwIndex
from perfwatch.benchmarks.lifecycle import capacity
from perfwatch.benchmarks.lifecycle.capacity import GIB, MIB, CapacityError
from perfwatch.ceph import capacity_view
from perfwatch.ceph.capacity_view import CapacityView, OsdSpace, PoolSpace
from perfwatch.ceph.seam import OsdInfo
from tests import paths

FIXTURE = json.loads((paths.FIXTURES / "pacific_capacity.json").read_text())
NEARFULL = 0.85
# The lab of the incident: osd.0 2 GiB, 1.2 GiB free (0.8 GiB used).
LAB_OSD = OsdSpace(0, 2 * GIB, int(0.8 * GIB), int(1.2 * GIB))
LAB_BUDGET = int(0.05 * 1.2 * GIB)  # 64,424,509 bytes, 61.4 MiB
OPTIONS = {"scratch_pool": "perfwatch", "scratch_namespace": "perfwatch", "rgw_s3_endpoint": ""}


def lab_view(free: float = 1.2, pool_size: int = 3, max_avail: int | None = None) -> CapacityView:
    osds = {i: OsdSpace(i, 2 * GIB, int((2 - free) * GIB), int(free * GIB)) for i in range(3)}
    pools = {"perfwatch": PoolSpace("perfwatch", 4, pool_size, max_avail, (0, 1, 2))}
    return CapacityView(osds, NEARFULL, pools)


def plan(*ids: int) -> list[OsdInfo]:
    return [OsdInfo(i, "host", True, "hdd") for i in ids]


# ----- arithmetic ---------------------------------------------------------------------------------


def test_budget_is_five_percent_of_free_space() -> None:
    assert capacity.osd_budget(LAB_OSD, NEARFULL) == LAB_BUDGET
    # headroom to (0.85 - 0.05) x 2 GiB = 1.6 GiB, minus 0.8 GiB used: 0.8 GiB, far above the 5 %.
    assert capacity.headroom(LAB_OSD, NEARFULL) == int(0.8 * 2 * GIB) - int(0.8 * GIB)


def test_budget_is_the_nearfull_margin_when_that_is_smaller() -> None:
    # 1.58 GiB used of 2: 0.02 GiB (20.5 MiB) below (0.85 - 0.05) x 2 GiB; 5 % of 0.42 GiB free is 21.5 MiB.
    tight = OsdSpace(0, 2 * GIB, int(1.58 * GIB), int(0.42 * GIB))
    assert capacity.osd_budget(tight, NEARFULL) == capacity.headroom(tight, NEARFULL) < int(0.05 * tight.avail)
    past = OsdSpace(0, 2 * GIB, int(1.7 * GIB), int(0.3 * GIB))  # 85 % used: past the margin
    assert capacity.osd_budget(past, NEARFULL) == 0


def test_the_incident_request_is_refused_naming_osd_free_bytes_and_limit() -> None:
    with pytest.raises(CapacityError) as refused:
        capacity.plan_osd_bench(LAB_OSD, NEARFULL, 3000 * 4096, False, 10240 * MIB, True)
    message = str(refused.value)
    assert "osd.0" in message and str(LAB_OSD.avail) in message and str(LAB_BUDGET) in message, message
    assert "mib_4m asks 10737418240 bytes" in message and "5%" in message and "0.85" in message


def test_sizes_not_asked_for_are_cut_to_the_budget_the_4k_round_first() -> None:
    b4k, b4m = capacity.plan_osd_bench(LAB_OSD, NEARFULL, 3000 * 4096, False, 100 * MIB, False)
    assert b4k == 3000 * 4096  # 11.7 MiB fits
    assert b4m == (LAB_BUDGET - b4k) // (4 * MIB) * (4 * MIB) == 48 * MIB
    assert b4k + b4m <= LAB_BUDGET
    # An explicit size that fits is kept; the default beside it gets what is left.
    assert capacity.plan_osd_bench(LAB_OSD, NEARFULL, 3000 * 4096, False, 32 * MIB, True) == (3000 * 4096, 32 * MIB)


def test_below_the_minimum_useful_size_is_refused_not_written() -> None:
    nearly_full = OsdSpace(0, 2 * GIB, int(1.595 * GIB), int(0.405 * GIB))  # 10 MiB of headroom
    with pytest.raises(CapacityError, match="needs at least"):
        capacity.plan_osd_bench(nearly_full, NEARFULL, 3000 * 4096, False, 100 * MIB, False)


def test_the_osd_kinds_parameters_start_at_the_smallest_round_a_run_can_make() -> None:
    kind = OsdBench()
    lows = {spec.name: spec.low for spec in kind.params}
    assert lows["writes_4k"] * 4096 == capacity.MIN_OSD_BENCH_4K_BYTES
    assert lows["mib_4m"] * MIB == capacity.MIN_OSD_BENCH_4M_BYTES == 16 * MIB
    with pytest.raises(ValueError) as low:
        kind.validate({"mib_4m": 8})
    assert str(low.value) == "mib_4m 8 is out of range: mib_4m must be between 16 and 10240"
    with pytest.raises(ValueError, match="writes_4k 99 is out of range: writes_4k must be between 100 and"):
        kind.validate({"writes_4k": 99})
    # The smallest sizes the parameters take are runs the capacity guard lets through, asked for or not.
    smallest = kind.validate({"writes_4k": lows["writes_4k"], "mib_4m": lows["mib_4m"]})
    asked: dict[str, int | None] = {"writes_4k": lows["writes_4k"], "mib_4m": lows["mib_4m"]}
    kind.check_capacity(plan(0, 1, 2), asked, smallest, OPTIONS, lab_view())
    assert capacity.plan_osd_bench(LAB_OSD, NEARFULL, 100 * 4096, True, 16 * MIB, True) == (100 * 4096, 16 * MIB)


def test_ratios_in_capacity_messages_keep_their_digits() -> None:
    text = capacity.limit_text(LAB_OSD, 0.855)
    assert "nearfull_ratio 0.855 - 0.05" in text, text
    past = CapacityView({1: OsdSpace(1, 2 * GIB, int(1.9 * GIB), int(0.1 * GIB))}, 0.875, {})
    why = capacity.crossed_margin(past, [1])
    assert why is not None and "limit (0.875 - 0.05) of it" in why, why
    assert "nearfull_ratio 0.85 - 0.05" in capacity.limit_text(LAB_OSD, 0.85)


def test_rados_round_objects_follow_the_tightest_osd_and_the_pool() -> None:
    view = lab_view()
    assert capacity.rados_max_objects(view, "perfwatch") == LAB_BUDGET // capacity.RADOS_OBJECT_COST == 7864
    # max_avail (client bytes, already divided by the pool's size) can be tighter still.
    assert capacity.rados_max_objects(lab_view(max_avail=200 * MIB), "perfwatch") == int(0.05 * 200 * MIB) // 8192
    with pytest.raises(CapacityError, match="rados round refused"):
        capacity.rados_max_objects(lab_view(free=0.3), "perfwatch")


def test_rbd_image_fits_is_cut_or_is_refused() -> None:
    view = lab_view()
    assert capacity.rbd_image_mib(view, "perfwatch", 32, True, 16) == 32
    assert capacity.rbd_image_mib(view, "perfwatch", 64, False, 16) == LAB_BUDGET // MIB == 61
    with pytest.raises(CapacityError) as refused:
        capacity.rbd_image_mib(view, "perfwatch", 1024, True, 16)
    assert "image_mib 1024" in str(refused.value) and "x 3 replicas" in str(refused.value)
    assert "osd.0" in str(refused.value) and str(int(1.2 * GIB)) in str(refused.value)


def test_nearfull_checks_before_and_during_a_run() -> None:
    capacity.check_nearfull(lab_view(), [0, 1, 2], 4096, "rgw probe")
    past = lab_view(free=0.29)  # 1.71 GiB used of 2: past (0.85 - 0.05)
    with pytest.raises(CapacityError, match="rgw probe"):
        capacity.check_nearfull(past, [1], 4096, "rgw probe")
    assert capacity.crossed_margin(lab_view(), [0, 1, 2]) is None
    why = capacity.crossed_margin(past, [2, 1])
    assert why is not None and why.startswith("osd.1 is past the nearfull margin")
    with pytest.raises(CapacityError, match=r"no free-space figures for osd\.7"):
        capacity.check_nearfull(lab_view(), [7], 4096, "rados probe")


# ----- the recorded Pacific payloads --------------------------------------------------------------


def test_view_from_recorded_pacific_payloads() -> None:
    view = capacity_view.view_from_payloads(
        FIXTURE["osd_stats"], FIXTURE["osd_map"], FIXTURE["df"], FIXTURE["pg_stats"]
    )
    assert sorted(view.osds) == [0, 1, 2]
    assert view.osds[2] == OsdSpace(2, 2097152 * 1024, 297400 * 1024, 1799752 * 1024)
    assert view.nearfull_ratio == pytest.approx(0.85)
    scratch = view.pools["perfwatch"]
    assert (scratch.id, scratch.size, scratch.max_avail, scratch.osds) == (4, 3, 1735571840, (0, 1, 2))
    # 5 % of 1.72 GiB free on each OSD is 92 MB; 5 % of the pool's max_avail (1.62 GiB, x 3 replicas)
    # is 86.8 MB, the tighter: 10,593 objects of 8 KiB. A 64 MiB image fits.
    assert capacity.rados_max_objects(view, "perfwatch") == int(0.05 * 1735571840) // 8192 == 10593
    assert capacity.rbd_image_mib(view, "perfwatch", 64, False, 16) == 64


def test_an_osd_that_has_not_reported_has_no_figures() -> None:
    stats = {"osd_stats": [{"osd": 0, "kb": 0, "kb_used": 0, "kb_avail": 0}]}
    assert capacity_view.view_from_payloads(stats, {}, {}, {}).osds == {}


# ----- the kinds' checks (what the runner calls at start) ---------------------------------------


def test_osd_bench_check_refuses_an_explicit_request_and_cuts_a_default() -> None:
    kind = OsdBench()
    params = kind.validate({"mib_4m": 10240})
    with pytest.raises(ValueError, match=r"osd\.0 has 1288490188 bytes"):
        kind.check_capacity(plan(0), {"mib_4m": 10240, "writes_4k": None}, params, OPTIONS, lab_view())
    defaults = kind.validate({})
    kind.check_capacity(plan(0, 1, 2), {}, defaults, OPTIONS, lab_view())  # cut, not refused
    # Without the user's raw parameters, a value other than the default counts as asked for.
    with pytest.raises(ValueError, match="mib_4m asks"):
        kind.check_capacity(plan(0), None, params, OPTIONS, lab_view())
    assert not kind.explicit("mib_4m", defaults, None) and kind.explicit("mib_4m", defaults, {"mib_4m": 100})


def test_rbd_rados_and_rgw_checks() -> None:
    RbdIO().check_capacity(plan(0, 1, 2), {}, RbdIO().validate({}), OPTIONS, lab_view())
    with pytest.raises(ValueError, match="rbd round refused"):
        RbdIO().check_capacity(plan(0), {"image_mib": 1024}, RbdIO().validate({"image_mib": 1024}), OPTIONS, lab_view())
    RadosLatency().check_capacity(plan(0, 1, 2), {}, RadosLatency().validate({"seconds": 2}), OPTIONS, lab_view())
    with pytest.raises(ValueError, match="rados probe"):
        RadosLatency().check_capacity(plan(0, 1, 2), {}, RadosLatency().validate({}), OPTIONS, lab_view(free=0.29))
    index = CapacityView(lab_view().osds, NEARFULL, {"default.rgw.buckets.index": PoolSpace("x", 9, 3, None, (1,))})
    RgwIndex().check_capacity(plan(0), {}, RgwIndex().validate({}), OPTIONS, index)
    full = CapacityView(lab_view(free=0.29).osds, NEARFULL, index.pools)
    with pytest.raises(ValueError, match=r"osd\.1"):
        RgwIndex().check_capacity(plan(0), {}, RgwIndex().validate({}), OPTIONS, full)


# ----- the timed loop stops at the budget -------------------------------------------------------


class _Completion:
    def get_return_value(self) -> int:
        return 0


class _Ctx:
    unsettled = False

    def check(self) -> None:
        pass

    def step_timeout(self, wanted: float) -> float:
        return wanted

    def progress(self, *_: Any) -> None:
        pass

    class log:
        @staticmethod
        def warning(*_: Any) -> None:
            pass


def test_the_write_phase_ends_at_max_ops_and_a_recheck_aborts() -> None:
    def submit(_i: int, done: Any) -> Any:
        completion = _Completion()
        done(completion)
        return completion

    result = run_at_queue_depth(_Ctx(), 30, 4, submit, "writes", 0.0, max_ops=100)  # type: ignore[arg-type]
    assert (result.completed, result.submitted, result.limited) == (100, 100, True)
    assert result.elapsed < 5

    def recheck() -> None:
        raise capacity.CapacityError("osd.1 is past the nearfull margin")

    with pytest.raises(CapacityError):
        run_at_queue_depth(_Ctx(), 30, 4, submit, "writes", 0.0, recheck=recheck)  # type: ignore[arg-type]
