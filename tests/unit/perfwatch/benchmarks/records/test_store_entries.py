"""Every value the module writes to the mgr's store fits one config-key entry of the mons: above
mon_config_key_max_entry_size (64 KiB by default) the mons refuse it, and the mgr only logs the whole value
and keeps it in memory, so a failover brings back an older record (seen on the lab: 10 net runs in the
module's history, 3 after `ceph mgr fail`). The baselines, which grow with the OSD count, are written in
parts; the records of runs keep what fits one entry."""

from __future__ import annotations

import json
from typing import Any

import pytest

from perfwatch.benchmarks.measurement import Measurement
from perfwatch.benchmarks.records import common, fit
from perfwatch.benchmarks.records.parts import PARTS, PARTS_MAX
from perfwatch.benchmarks.records.store import BenchStore
from perfwatch.benchmarks.records.versioned import ASIDE_INDEX, LARGE_SAVE_INTERVAL, PREFIX
from perfwatch.benchmarks.report_text import history_plain
from perfwatch.benchmarks.run import Run
from tests.unit.perfwatch.benchmarks.records.test_store import KV, Log


class MonStore(KV):
    """The mgr's store as the mons keep it: a value longer than `limit` is refused (raises here, so a test
    that writes one fails), and every write is counted."""

    def __init__(self, limit: int, listing: bool = True) -> None:
        super().__init__()
        self.limit = limit
        self.listing = listing  # whether the store can list its keys (MgrModule.get_store_prefix)
        self.writes: list[str] = []
        self.refuse: set[str] = set()  # keys whose next write fails (a mgr that dies mid-way)

    def put(self, key: str, value: str | None) -> None:
        if key in self.refuse:
            raise RuntimeError("the mgr died before writing " + key)
        assert value is None or len(value.encode("utf-8")) <= self.limit, f"{key}: {len(value)} characters"
        self.writes.append(key)
        super().put(key, value)

    def keys_with(self, prefix: str) -> list[str] | None:
        return sorted(k for k in self if k.startswith(prefix)) if self.listing else None


class Clock:
    def __init__(self) -> None:
        self.now = 1714600000.0

    def __call__(self) -> float:
        return self.now


def store_of(kv: MonStore, clock: Clock | None = None, log: Log | None = None, history: int = 50) -> BenchStore:
    return BenchStore(
        kv.get, kv.put, history, 10, log or Log(), clock or Clock(), entry_max=kv.limit, keys=kv.keys_with
    )


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
    kv = MonStore(common.ENTRY_MAX_CHARS)
    clock = Clock()
    store = store_of(kv, clock)
    for metrics in (("write_latency", "read_latency"), ("ping_front", "ping_back")):
        store.judge(results_of("rados", metrics, 10_000), {}, 0.5, 1)
        clock.now += LARGE_SAVE_INTERVAL
    store.judge([Measurement("osd", m, osd, 300.0, "iops") for m in ("a", "b") for osd in range(10_000)], {}, 0.5, 1)
    assert len(store.baselines()) == 60_000  # was cut to 10,000 (common.MAX_KEYS) before
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
    kv = MonStore(common.ENTRY_MAX_CHARS)
    clock = Clock()
    store = store_of(kv, clock)
    for k in range(3):
        store.judge(results_of("rados", ("write_latency",), 8, value=0.001 * (k + 1)), {}, 0.5, 1)
    assert parts_of(kv, "baselines") == []
    assert [w for w in kv.writes if w == PREFIX + "baselines"] == [PREFIX + "baselines"] * 3
    assert store_of(kv).baselines() == store.baselines()


@pytest.mark.parametrize("osds", [8, 100, 10_000])
def test_a_kinds_history_keeps_its_newest_runs_that_fit_one_entry(osds: int) -> None:
    kv = MonStore(common.ENTRY_MAX_CHARS)
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
    kv = MonStore(common.ENTRY_MAX_CHARS)
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
    whole = fit.size(run)
    for budget in (400, 5000, 20000, whole - 1):
        small = fit.shrink_run(run, budget)
        assert fit.size(small) <= budget
        assert small["osds_omitted"] == 500 - len(small["osds"]) > 0
        assert small.get("results_omitted", 0) == 500 - len(small["results"])
        assert not small.get("results_omitted") or small["osds"] == [], "the OSD list goes first"
        one_more = dict(small, results=run["results"][: len(small["results"]) + 1])
        assert fit.size(one_more) > budget or len(small["results"]) == len(run["results"])
    assert fit.shrink_run(run, 10**7) is run


@pytest.mark.parametrize(
    ("limit", "chars"),
    [
        (None, 60000),
        ("nonsense", 60000),
        (65536, 60000),
        ("65536", 60000),
        (16384, 15872),
        (2048, 1536),
        (1000, 500),
        (100, 64),
        (True, 60000),
    ],
)
def test_the_entry_size_follows_the_mons_limit_as_the_mgr_sees_it(limit: Any, chars: int) -> None:
    assert common.entry_max_for(limit) == chars


@pytest.mark.parametrize(
    "head",
    [
        {"version": 2, "parts": 10**9, "generation": 0, "chars": 10, "crc": 0},  # would be a billion reads
        {"version": 2, "parts": 2, "generation": 7, "chars": 10, "crc": 0},
        {"version": 2, "parts": 0, "generation": 0, "chars": 0, "crc": 0},
        {"version": 2, "parts": "2", "generation": 0, "chars": 10, "crc": 0},
        {"version": 2, "parts": 1, "generation": 0, "chars": 999, "crc": 0},  # the parts are shorter
        {"version": 2, "parts": 1, "generation": 0, "chars": 26, "crc": 1},  # the right length, not the text
        {"version": 2, "parts": 1, "generation": 0, "chars": 26},  # no CRC
    ],
)
def test_a_planted_or_broken_head_is_one_problem_not_a_stall(head: dict[str, Any]) -> None:
    kv = MonStore(common.ENTRY_MAX_CHARS)
    kv[PREFIX + "baselines"] = json.dumps(head)
    kv[PREFIX + "baselines" + PARTS + "0/0"] = '{"version": 2, "data": {}}'
    log = Log()
    store = store_of(kv, log=log)
    assert store.baselines() == {}
    assert len(log.problems()) == 1 and "parts" in log.problems()[0], log.problems()
    assert parts_of(kv, "baselines") == [], "a broken record's parts go with it"
    assert len([w for w in kv.writes if w.startswith(PREFIX + "baselines" + PARTS)]) <= 1, "no delete of absent keys"


def test_a_write_after_a_start_that_could_not_read_the_head_does_not_overwrite_the_live_parts() -> None:
    kv = MonStore(2000)
    clock = Clock()
    store_of(kv, clock).judge(results_of("rados", ("write_latency",), 100), {}, 0.5, 1)
    before = store_of(kv).baselines()
    live = json.loads(kv[PREFIX + "baselines"])["generation"]
    # the next mgr could not read the record as it started (it starts it empty) and dies 2 parts into its
    # first write: the parts it wrote are the other generation's, never the live one's
    flaky = MonStore(2000)
    flaky.update(kv)
    calls = {"n": 0}

    def get(key: str) -> str | None:
        calls["n"] += 1
        if key == PREFIX + "baselines" and calls["n"] == 1:
            raise RuntimeError("the mons did not answer")
        return flaky.get(key)

    second = BenchStore(get, flaky.put, 50, 10, Log(), clock, entry_max=2000, keys=flaky.keys_with)
    assert second.baselines() == {}
    flaky.refuse.add(PREFIX + "baselines")
    second.judge(results_of("rados", ("write_latency",), 100, value=0.5), {}, 0.5, 1)
    written = {k.split("/")[-2] for k in flaky.writes if PARTS in k}
    assert written == {str(1 - live)}, written
    flaky.refuse.clear()
    assert store_of(flaky).baselines() == before


def test_parts_of_two_writes_are_told_apart_by_their_crc() -> None:
    kv = MonStore(2000)
    store_of(kv).judge(results_of("rados", ("write_latency",), 100), {}, 0.5, 1)
    part = parts_of(kv, "baselines")[0]
    digit = next(i for i, c in enumerate(kv[part]) if c in "123456789")
    swapped = "2" if kv[part][digit] == "1" else "1"
    kv[part] = kv[part][:digit] + swapped + kv[part][digit + 1 :]  # a part of another write: as long, other digits
    log = Log()
    assert store_of(kv, log=log).baselines() == {}
    assert "do not make the record" in log.problems()[0]


def test_two_threads_saving_one_record_in_parts_never_mix_it() -> None:
    import threading

    kv = MonStore(1000)
    store = store_of(kv)
    records_ = store._records  # the writer both share
    values = [{f"rados/write_latency/osd.{i}": [float(t)] * 3 for i in range(60)} for t in range(2)]

    def save(t: int) -> None:
        for _ in range(30):
            records_.save("baselines", values[t])

    threads = [threading.Thread(target=save, args=(t,)) for t in range(2)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert store_of(kv).baselines() in values


@pytest.mark.parametrize("listing", [True, False])
def test_parts_no_head_names_are_deleted_when_the_record_is_read(listing: bool) -> None:
    kv = MonStore(2000, listing=listing)
    store = store_of(kv)
    store.judge(results_of("rados", ("write_latency",), 100), {}, 0.5, 1)
    live = json.loads(kv[PREFIX + "baselines"])
    other = 1 - live["generation"]
    planted = [f"{PREFIX}baselines{PARTS}{other}/0", f"{PREFIX}baselines{PARTS}{other}/1"]
    if listing:  # only a listing finds these
        planted += [f"{PREFIX}baselines{PARTS}{live['generation']}/{live['parts'] + 3}", f"{PREFIX}baselines{PARTS}x/y"]
    for key in planted:
        kv[key] = "left over"
    assert store_of(kv).baselines() == store.baselines()
    assert not set(planted) & set(kv), sorted(set(planted) & set(kv))
    assert len(parts_of(kv, "baselines")) == live["parts"]


def test_a_torn_scratch_record_still_gives_its_run_ids_for_cleanup() -> None:
    kv = MonStore(1000)
    store = store_of(kv)
    run_ids = [f"rados-20240501T1200{i:02d}-abcd" for i in range(30)]
    for run_id in run_ids:
        store.add_scratch(run_id, "rados", {"pool": "perfwatch", "prefix": run_id})
    assert parts_of(kv, "scratch")
    del kv[parts_of(kv, "scratch")[-1]]
    again = store_of(kv)
    assert again.scratch() == {}
    recovered = set(again.recovered_scratch())
    assert len(recovered) >= len(run_ids) * 2 // 3 and recovered <= set(run_ids), len(recovered)


def test_the_aside_index_in_parts_is_read_back() -> None:
    kv = MonStore(512)
    for i in range(12):  # broken records set aside, each named in the index
        kv[PREFIX + "streaks"] = "not json " + str(i)
        store_of(kv)
    assert json.loads(kv[PREFIX + ASIDE_INDEX]).get("parts"), "the index took several entries"
    asides = [k for k in kv if k.startswith(PREFIX + "aside/") and PARTS not in k and k != PREFIX + ASIDE_INDEX]
    log = Log()
    store_of(kv, log=log)
    assert not [line for line in log.problems() if "unreadable" in line]
    assert len(asides) == 12


def test_baselines_beyond_the_record_budget_keep_their_newest_values() -> None:
    history = {f"rados/write_latency/osd.{i}": [float(v) for v in range(100)] for i in range(50)}
    whole = fit.size(history)
    fitted = fit.fit_values(history, whole // 3)
    assert fit.size(fitted) <= whole // 3
    assert all(v == history[k][-len(v) :] and 1 <= len(v) < 100 for k, v in fitted.items())
    assert fit.fit_values(history, whole + 100) is history
    mapping = {f"k{i:03d}": "x" * 50 for i in range(100)}
    kept = fit.fit_keys(mapping, 2000)
    assert fit.size(kept) <= 2000 and list(kept) == sorted(mapping)[: len(kept)]
    assert PARTS_MAX * common.ENTRY_MAX_CHARS >= 10**7  # the baselines of 10,000 OSDs (3.3 MB) fit whole


def test_a_regression_whose_result_was_lost_is_still_flagged() -> None:
    from perfwatch.benchmarks.result_samples import result_samples

    out = result_samples({}, {}, ["osd/write_iops_4k/osd.900"], {}, {})
    assert [(s.family, dict(s.labels), s.value) for s in out] == [
        ("bench_regression", {"ceph_daemon": "osd.900", "kind": "osd", "metric": "write_iops_4k"}, 1.0)
    ]


def test_an_osd_id_has_one_spelling_in_a_result_key() -> None:
    assert common.RESULT_KEY.match("net/ping_back/osd.30") and common.RESULT_KEY.match("rgw/x/-")
    assert not common.RESULT_KEY.match("net/ping_back/osd.03")


def test_every_osds_last_result_outlives_a_failover_when_the_history_keeps_only_part_of_the_run() -> None:
    from perfwatch.benchmarks.result_board import ResultBoard

    kv = MonStore(common.ENTRY_MAX_CHARS)
    store = store_of(kv)
    board = ResultBoard(store, kinds=["osd"])
    run = Run("osd-20240501T120000-0000", "osd", True, {}, list(range(10_000)), "schedule")
    run.measurements = [Measurement("osd", "write_iops_4k", osd, 300.0 + osd % 50, "iops") for osd in range(10_000)]
    run.state, run.progress, run.ended_at = "done", 1.0, 1714564800.0
    store.add_run(run.to_dict())
    board.on_finished(run)
    assert store.history("osd")[-1]["results_omitted"] > 9_000, "the history keeps only part of the run"
    again = ResultBoard(store_of(kv), kinds=["osd"])  # the next active mgr
    assert again.last_results() == board.last_results() and len(again.last_results()) == 10_000


def test_a_broken_record_longer_in_bytes_than_an_entry_is_not_set_aside() -> None:
    kv = MonStore(1000)
    kv[PREFIX + "streaks"] = "é" * 600  # 600 characters, 1,200 bytes: not JSON
    log = Log()
    store_of(kv, log=log)
    assert "too large to set aside" in log.problems()[0], log.problems()
    assert not [k for k in kv if k.startswith(PREFIX + "aside/")]
