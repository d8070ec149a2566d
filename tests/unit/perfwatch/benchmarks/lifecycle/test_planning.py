import pytest

from perfwatch.benchmarks.lifecycle import due, guard, planning
from perfwatch.benchmarks.lifecycle.planning import BenchLimits
from perfwatch.ceph.seam import OsdInfo
from perfwatch.options import window

PACIFIC = BenchLimits(
    small_size_max_iops=100, large_size_max_throughput=100 << 20, duration=30, max_block_size=64 << 20
)


def osds() -> list[OsdInfo]:
    return [
        OsdInfo(0, "a", True, "ssd"),
        OsdInfo(1, "b", True, "ssd"),
        OsdInfo(2, "a", True, "ssd"),
        OsdInfo(3, "c", True, "ssd"),
        OsdInfo(4, "a", True, "ssd"),
    ]


def test_one_osd_per_host_at_a_time() -> None:
    assert planning.batches(osds(), None, per_host=1) == [[0, 1, 3], [2], [4]]
    assert planning.batches(osds(), None, per_host=2) == [[0, 1, 2, 3], [4]]
    assert planning.batches(osds(), [2, 4], per_host=1) == [[2], [4]]
    with pytest.raises(ValueError):
        planning.batches(osds(), None, per_host=0)


def test_clamping_follows_the_osds_own_rule() -> None:
    # 4 KiB: block x duration x small_size_max_iops = 12,288,000 bytes, the figure the OSD enforces.
    assert planning.max_bench_bytes(4096, PACIFIC) == 12_288_000
    assert planning.clamp_osd_bench(1 << 30, 4096, PACIFIC) == (12_288_000, 4096)
    # 4 MiB: large_size_max_throughput x duration.
    assert planning.clamp_osd_bench(10 << 30, 4 << 20, PACIFIC) == (3000 << 20, 4 << 20)
    assert planning.clamp_osd_bench(100 << 20, 4 << 20, PACIFIC) == (100 << 20, 4 << 20)


def test_a_block_beyond_the_osds_maximum_is_refused_naming_the_limit() -> None:
    with pytest.raises(ValueError, match="osd_bench_max_block_size"):
        planning.clamp_osd_bench(1 << 30, 128 << 20, PACIFIC)


def test_guard_refuses_with_reasons() -> None:
    ok = guard.refusal_reasons("HEALTH_WARN", {"active+clean": 33}, {0: True, 1: True}, [0, 1])
    assert ok == []
    reasons = guard.refusal_reasons(
        "HEALTH_ERR", {"active+clean": 30, "active+recovering": 3}, {0: True, 1: False}, [0, 1, 9]
    )
    assert reasons[0] == "the cluster is HEALTH_ERR"
    assert "3 of 33 PGs are not active+clean (3 active+recovering)" in reasons
    assert "recovery or backfill is running" in reasons
    assert "no such OSD: osd.9" in reasons
    assert "down: osd.1" in reasons


def test_client_latency_abort_decision() -> None:
    before = {"sum": 1.0, "avgcount": 100}
    assert not guard.client_latency_too_high(before, {"sum": 1.0, "avgcount": 100}, 0.05)  # no client ops
    assert not guard.client_latency_too_high(before, {"sum": 1.4, "avgcount": 110}, 0.05)  # 40 ms average
    assert guard.client_latency_too_high(before, {"sum": 1.6, "avgcount": 110}, 0.05)  # 60 ms average


def test_time_windows_and_due() -> None:
    assert window.parse_window("") is None
    assert window.parse_window("22:00-06:30") == (1320, 390)
    with pytest.raises(ValueError, match="HH:MM"):
        window.parse_window("late evening")
    night = window.parse_window("22:00-06:00")
    assert due.in_window(23 * 60, night) and due.in_window(60, night)
    assert not due.in_window(12 * 60, night)
    assert due.in_window(10 * 60, window.parse_window("09:00-17:00"))
    assert not due.is_due(1000, None, 0, 600)  # interval 0: on command only
    assert due.is_due(1000, None, 60, 600)
    assert not due.is_due(1000, 990, 60, 600)
    assert due.is_due(1000, 900, 60, 600)
    assert not due.is_due(1000, None, 60, 12 * 60, "22:00-06:00")


@pytest.mark.parametrize("text", ["10:00-10:00", "0:00-00:00", " 23:59 - 23:59 "])
def test_a_window_that_starts_where_it_ends_is_refused(text: str) -> None:
    with pytest.raises(window.EmptyWindowError, match="starts where it ends"):
        window.parse_window(text)
