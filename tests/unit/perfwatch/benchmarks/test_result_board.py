"""mgr_module/perfwatch/benchmarks/result_board.py: the runner feeds it finished runs, the metrics read it; it
starts from the last run of each kind in the store, so results survive a failover (histograms do not)."""

from __future__ import annotations

from perfwatch.benchmarks.measurement import Measurement
from perfwatch.benchmarks.records.store import BenchStore
from perfwatch.benchmarks.result_board import ResultBoard
from perfwatch.benchmarks.run import Run
from tests.unit.perfwatch.benchmarks.records.test_store import KV, Log, run_record


def finished(kind: str, heavy: bool, *measurements: Measurement) -> Run:
    run = Run(f"{kind}-20240501T120000-0000", kind, heavy, {}, [0], "command")
    run.measurements = list(measurements)
    return run


def test_it_starts_from_the_last_run_of_each_kind() -> None:
    kv = KV()
    store = BenchStore(kv.get, kv.put, 50, 10, Log())
    store.add_run(run_record("osd", "osd-20240501T120000-0000", 1714564800.0, value=900.0))
    store.add_run(run_record("osd", "osd-20240501T130000-0000", 1714568400.0, value=1000.0))
    board = ResultBoard(store)
    assert board.last_results() == {
        "osd/write_iops_4k/osd.0": (1000.0, "iops"),
        "osd/write_latency/osd.0": (0.002, "seconds"),
    }


def test_finished_runs_become_the_latest_and_light_latencies_histograms() -> None:
    kv = KV()
    board = ResultBoard(BenchStore(kv.get, kv.put, 50, 10, Log()))
    assert board.samples({}, 3) == []
    board.on_finished(finished("osd", True, Measurement("osd", "write_iops_4k", 1, 500.0, "iops")))
    board.on_finished(finished("rados", False, Measurement("rados", "write_latency", 1, 0.002, "seconds")))
    assert board.last_results() == {
        "osd/write_iops_4k/osd.1": (500.0, "iops"),
        "rados/write_latency/osd.1": (0.002, "seconds"),
    }
    samples = board.samples({"osd/done": 1}, 3)
    assert {500.0, 0.002, 1.0} <= {s.value for s in samples if s.suffix == ""}  # results, runs by outcome
    assert [s.value for s in samples if s.suffix == "_count"] == [1.0]  # one histogram: the light probe's
    assert [s.labels for s in samples if s.suffix == "_count"] == [
        (("kind", "rados"), ("metric", "write_latency"), ("device_class", ""))  # no device classes given
    ]


def test_light_probe_histograms_are_per_device_class_not_per_osd() -> None:
    kv = KV()
    classes = {0: "ssd", 1: "ssd", 2: "hdd"}
    board = ResultBoard(BenchStore(kv.get, kv.put, 50, 10, Log()), device_classes=lambda: classes)
    board.on_finished(
        finished(
            "rados",
            False,
            *(Measurement("rados", "write_latency", osd, 0.002 * (osd + 1), "seconds") for osd in (0, 1, 2, 7)),
        )
    )
    counts = {dict(s.labels)["device_class"]: s.value for s in board.samples({}, 3) if s.suffix == "_count"}
    assert counts == {"ssd": 2.0, "hdd": 1.0, "": 1.0}  # osd.7: not in the map any more
    assert not [
        s for s in board.samples({}, 3) if s.family.startswith("bench_probe") and "ceph_daemon" in dict(s.labels)
    ]


def test_an_unreadable_osd_map_still_counts_the_probe_in_class_none() -> None:
    def broken() -> dict[int, str]:
        raise RuntimeError("osd_map_tree unavailable")

    kv = KV()
    board = ResultBoard(BenchStore(kv.get, kv.put, 50, 10, Log()), device_classes=broken)
    board.on_finished(finished("rados", False, Measurement("rados", "read_latency", 0, 0.001, "seconds")))
    assert [dict(s.labels)["device_class"] for s in board.samples({}, 3) if s.suffix == "_count"] == [""]


def test_regressions_are_those_of_the_store() -> None:
    kv = KV()
    store = BenchStore(kv.get, kv.put, 50, 10, Log())
    assert ResultBoard(store).regressions() == store.regressions() == {}
