import pytest

from perfwatch.benchmarks.judging.baseline import Baselines, judge, performance_ratio
from perfwatch.benchmarks.measurement import Measurement, split_key

CLASSES = {0: "ssd", 1: "ssd", 2: "ssd", 3: "hdd"}


def iops(osd: int, value: float) -> Measurement:
    return Measurement("osd", "write_iops_4k", osd, value, "iops")


def lat(osd: int, value: float) -> Measurement:
    return Measurement("rados", "write_latency", osd, value, "seconds")


def test_baseline_is_the_median_of_the_last_window_results() -> None:
    b = Baselines(window=3)
    for v in (100, 1, 200, 300, 250):
        b.add("k", v)
    assert b.history["k"] == [200, 300, 250]
    assert b.baseline("k") == 250
    assert b.baseline("k", min_results=4) is None
    with pytest.raises(ValueError):
        Baselines(window=0)


def test_ratio_inverts_for_latencies() -> None:
    assert performance_ratio(50, 100, True) == 0.5
    assert performance_ratio(0.002, 0.001, False) == 0.5
    assert performance_ratio(0, 0.001, False) is None


def test_a_result_below_half_its_own_baseline_is_a_regression() -> None:
    b = Baselines(window=10)
    for _ in range(3):
        judge([iops(0, 1000)], b, CLASSES, fraction=0.5, min_results=3)
    (ok,) = judge([iops(0, 600)], b, CLASSES, fraction=0.5, min_results=3)
    assert not ok.regressed and ok.ratio == pytest.approx(0.6)
    (bad,) = judge([iops(0, 400)], b, CLASSES, fraction=0.5, min_results=3)
    assert bad.regressed and "own baseline" in bad.reason
    assert bad.baseline == 1000  # the median, not dragged down by one slow result


def test_no_verdict_before_enough_history() -> None:
    b = Baselines(window=10)
    (first,) = judge([iops(0, 5)], b, CLASSES, fraction=0.5, min_results=3)
    assert first.baseline is None and not first.regressed


def test_a_result_below_half_its_peers_of_the_same_class_is_a_regression() -> None:
    b = Baselines(window=10)
    for _ in range(3):
        judge([iops(0, 1000), iops(1, 1100), iops(2, 900), iops(3, 100)], b, CLASSES, 0.5, 3)
    b.history.pop("osd/write_iops_4k/osd.2")  # a new OSD: no own baseline yet
    (v,) = judge([iops(2, 300)], b, CLASSES, 0.5, 3)
    assert v.baseline is None and v.peer_baseline == 1050  # osd.0 and osd.1; the hdd osd.3 is no peer
    assert v.regressed and "peers" in v.reason


def test_latency_twice_the_baseline_is_a_regression() -> None:
    b = Baselines(window=10)
    for _ in range(3):
        judge([lat(0, 0.001)], b, CLASSES, 0.5, 3)
    (v,) = judge([lat(0, 0.0025)], b, CLASSES, 0.5, 3)
    assert v.regressed and v.ratio == pytest.approx(0.4)


def test_keys_round_trip() -> None:
    m = iops(7, 1)
    assert m.key == "osd/write_iops_4k/osd.7"
    assert split_key(m.key) == ("osd", "write_iops_4k", 7)
    assert split_key(Measurement("rbd", "read_iops_4k", None, 1, "iops").key) == ("rbd", "read_iops_4k", None)
    assert Measurement.from_dict(m.to_dict()) == m
