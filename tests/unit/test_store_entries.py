"""Every value the module writes to the mgr's store fits one config-key entry of the mons: above
mon_config_key_max_entry_size (64 KiB by default) the mons refuse it, and the mgr only logs the whole value
and keeps it in memory, so a failover brings back an older record (seen on the lab: 10 net runs in the
module's history, 3 after `ceph mgr fail`). The baselines, which grow with the OSD count, are written in
parts; the records of runs keep what fits one entry."""

from __future__ import annotations

import json
from typing import Any

import pytest

from perfwatch.benchmarks import records, records_fit
from perfwatch.benchmarks.report import history_plain
from perfwatch.benchmarks.results import Measurement
from perfwatch.benchmarks.run import Run
from perfwatch.benchmarks.store import BenchStore
from perfwatch.benchmarks.versioned import LARGE_SAVE_INTERVAL, PARTS, PREFIX

from .test_bench_store import KV, Log


class MonStore(KV):
    """The mgr's store as the mons keep it: a value longer than `limit` is refused (raises here, so a test
    that writes one fails), and every write is counted."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit
        self.writes: list[str] = []
        self.refuse: set[str] = set()  # keys whose next write fails (a mgr that dies mid-way)

    def put(self, key: str, value: str | None) -> None:
        if key in self.refuse:
            raise RuntimeError("the mgr died before writing " + key)
        assert value is None or len(value) <= self.limit, f"{key}: {len(value)} characters"
        self.writes.append(key)
        super().put(key, value)


class Clock:
    def __init__(self) -> None:
        self.now = 1714600000.0

    def __call__(self) -> float:
        return self.now


def store_of(kv: MonStore, clock: Clock | None = None, log: Log | None = None, history: int = 50) -> BenchStore:
    return BenchStore(kv.get, kv.put, history, 10, log or Log(), clock or Clock(), entry_max=kv.limit)


def results_of(kind: str, metrics: tuple[str, ...], osds: int, value: float = 0.002) -> list[Measurement]:
    return [
        Measurement(kind, metric, osd, value * (1 + osd % 7), "seconds") for metric in metrics for osd in range(osds)
    ]


def finished_run(kind: str, results: list[Measurement], k: int) -> dict[str, Any]:
    osds = sorted({m.osd for m in results if m.osd is not None})
    run = Run(f"{kind}-20240501T12{k // 60:02d}{k % 60:02d}-0000", kind, False, {}, osds, "schedule")
    run.measurements = results
    run.state, run.progress, run.ended_at = "done", 1.0, 1714564800.0 + k
    return run.to_dict()


def parts_of(kv: MonStore, name: str) -> list[str]:
    return sorted(k for k in kv if k.startswith(PREFIX + name + PARTS))


def test_baselines_of_10000_osds_are_written_in_parts_and_read_back_whole() -> None:
    kv = MonStore(records.ENTRY_MAX_CHARS)
    clock = Clock()
    store = store_of(kv, clock)
    for metrics in (("write_latency", "read_latency"), ("ping_front", "ping_back")):
        store.judge(results_of("rados", metrics, 10_000), {}, 0.5, 1)
        clock.now += LARGE_SAVE_INTERVAL
    store.judge([Measurement("osd", m, osd, 300.0, "iops") for m in ("a", "b") for osd in range(10_000)], {}, 0.5, 1)
    assert len(store.baselines()) == 60_000  # was cut to 10,000 (records.MAX_KEYS) before
    head = json.loads(kv[PREFIX + "baselines"])
    assert head["parts"] == len(parts_of(kv, "baselines")) > 10, head
    again = store_of(kv)
    assert again.baselines() == store.baselines()


def test_a_record_back_in_one_entry_leaves_no_parts_behind() -> None:
    kv = MonStore(2000)
    store = store_of(kv)
    store.judge(results_of("rados", ("write_latency",), 200), {}, 0.5, 1)
    assert len(parts_of(kv, "baselines")) > 2
    store.forget([f"rados/write_latency/osd.{osd}" for osd in range(200)])
    assert parts_of(kv, "baselines") == [] and json.loads(kv[PREFIX + "baselines"])["data"] == {}


def test_a_mgr_that_dies_while_writing_parts_leaves_the_record_before_whole() -> None:
    kv = MonStore(2000)
    clock = Clock()
    store = store_of(kv, clock)
    store.judge(results_of("rados", ("write_latency",), 100), {}, 0.5, 1)
    before = store.baselines()
    generation = json.loads(kv[PREFIX + "baselines"])["generation"]
    clock.now += LARGE_SAVE_INTERVAL
    kv.refuse.add(PREFIX + "baselines")  # the new generation's parts are written, the head is not
    store.judge(results_of("rados", ("write_latency",), 100, value=0.004), {}, 0.5, 1)
    assert parts_of(kv, "baselines") and {p.split("/")[-2] for p in parts_of(kv, "baselines")} == {"0", "1"}
    kv.refuse.clear()
    again = store_of(kv)  # the next mgr: the old generation whole, the other one's parts deleted
    assert again.baselines() == before
    assert {p.split("/")[-2] for p in parts_of(kv, "baselines")} == {str(generation)}


def test_a_missing_part_is_a_problem_said_once_and_the_record_starts_empty() -> None:
    kv = MonStore(2000)
    store_of(kv).judge(results_of("rados", ("write_latency",), 100), {}, 0.5, 1)
    lost = parts_of(kv, "baselines")[1]
    del kv[lost]
    log = Log()
    again = store_of(kv, log=log)
    assert again.baselines() == {}
    assert len(log.problems()) == 1 and "part 1 of" in log.problems()[0], log.problems()
    assert parts_of(kv, "baselines") == [], "the broken record's parts go with it"


def test_baselines_in_parts_are_written_at_most_every_large_save_interval() -> None:
    kv = MonStore(2000)
    clock = Clock()
    store = store_of(kv, clock)
    rounds = [results_of("rados", ("write_latency",), 100, value=0.001 * (k + 1)) for k in range(4)]
    store.judge(rounds[0], {}, 0.5, 1)
    written = len(kv.writes)
    clock.now += LARGE_SAVE_INTERVAL - 1
    store.judge(rounds[1], {}, 0.5, 1)
    assert len(kv.writes) == written, "a round within the interval writes no part"
    clock.now += 1
    store.judge(rounds[2], {}, 0.5, 1)
    assert len(kv.writes) > written
    assert store_of(kv).baselines() == store.baselines()
    # an operator's reset is written at once
    store.forget(["rados/write_latency/osd.3"])
    assert "rados/write_latency/osd.3" not in store_of(kv).baselines()


def test_small_records_stay_one_entry_written_every_time() -> None:
    kv = MonStore(records.ENTRY_MAX_CHARS)
    clock = Clock()
    store = store_of(kv, clock)
    for k in range(3):
        store.judge(results_of("rados", ("write_latency",), 8, value=0.001 * (k + 1)), {}, 0.5, 1)
    assert parts_of(kv, "baselines") == []
    assert [w for w in kv.writes if w == PREFIX + "baselines"] == [PREFIX + "baselines"] * 3
    assert store_of(kv).baselines() == store.baselines()


@pytest.mark.parametrize("osds", [8, 100, 10_000])
def test_a_kinds_history_keeps_its_newest_runs_that_fit_one_entry(osds: int) -> None:
    kv = MonStore(records.ENTRY_MAX_CHARS)
    store = store_of(kv)
    runs = 50 if osds < 10_000 else 2
    for k in range(runs):
        store.add_run(finished_run("net", results_of("net", ("ping_front", "ping_back"), osds), k))
    kept = store.history("net")
    assert kept == store_of(kv).history("net"), "what a failover finds is what the module showed"
    assert kept[-1]["run_id"] == finished_run("net", [], runs - 1)["run_id"], "the newest run is kept"
    if osds == 8:  # 1.6 KB per run: the newest 36 or so of the 50
        assert 30 <= len(kept) < 50 and not any(r.get("results_omitted") for r in kept), len(kept)
    if osds == 10_000:  # 1.8 MB per run: the newest alone, with the results that fit
        assert len(kept) == 1 and 0 < len(kept[0]["results"]) < 20_000 and kept[0]["osds"] == []
        assert kept[0]["results_omitted"] == 20_000 - len(kept[0]["results"])
        assert "more results not kept" in history_plain(kept)


def test_runs_in_progress_of_10000_osds_fit_one_entry() -> None:
    kv = MonStore(records.ENTRY_MAX_CHARS)
    store = store_of(kv)
    for k in range(2):
        record = finished_run("osd", results_of("osd", ("write_iops_4k",), 10_000), k)
        store.save_running(dict(record, state="running", progress=0.5))
    found = store_of(kv).take_interrupted()
    assert len(found) == 2
    for run in found:  # what it had measured, as much as fits, and how much more
        assert run["results"] and run["results_omitted"] + len(run["results"]) == 10_000
        assert run["osds_omitted"] + len(run["osds"]) == 10_000


def test_shrinking_a_run_keeps_the_most_results_that_fit() -> None:
    run = finished_run("net", results_of("net", ("ping_front",), 500), 0)
    whole = records_fit.size(run)
    for budget in (400, 5000, 20000, whole - 1):
        small = records_fit.shrink_run(run, budget)
        assert records_fit.size(small) <= budget
        assert small["osds_omitted"] == 500 - len(small["osds"]) > 0
        assert small.get("results_omitted", 0) == 500 - len(small["results"])
        assert not small.get("results_omitted") or small["osds"] == [], "the OSD list goes first"
        one_more = dict(small, results=run["results"][: len(small["results"]) + 1])
        assert records_fit.size(one_more) > budget or len(small["results"]) == len(run["results"])
    assert records_fit.shrink_run(run, 10**7) is run


@pytest.mark.parametrize(
    ("limit", "chars"),
    [(None, 60000), ("nonsense", 60000), (65536, 60000), ("65536", 60000), (16384, 15872), (100, 1024), (True, 60000)],
)
def test_the_entry_size_follows_the_mons_limit_as_the_mgr_sees_it(limit: Any, chars: int) -> None:
    assert records.entry_max_for(limit) == chars


@pytest.mark.parametrize(
    "head",
    [
        {"version": 2, "parts": 10**9, "generation": 0, "chars": 10},  # would be a billion reads
        {"version": 2, "parts": 2, "generation": 7, "chars": 10},
        {"version": 2, "parts": 0, "generation": 0, "chars": 0},
        {"version": 2, "parts": "2", "generation": 0, "chars": 10},
        {"version": 2, "parts": 1, "generation": 0, "chars": 999},  # the parts are shorter
    ],
)
def test_a_planted_or_broken_head_is_one_problem_not_a_stall(head: dict[str, Any]) -> None:
    kv = MonStore(records.ENTRY_MAX_CHARS)
    kv[PREFIX + "baselines"] = json.dumps(head)
    kv[PREFIX + "baselines" + PARTS + "0/0"] = '{"version": 2, "data": {}}'
    log = Log()
    store = store_of(kv, log=log)
    assert store.baselines() == {}
    assert len(log.problems()) == 1 and "parts" in log.problems()[0], log.problems()
