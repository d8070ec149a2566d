"""The benchmark store reads every record it may meet in a mgr's store: today's unversioned ones, a newer
perfwatch's, and broken ones. It never raises, keeps every good record, sets aside the rest with one log
line, and does not lose track of scratch data that a broken scratch record names."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from perfwatch.benchmarks.judging import health
from perfwatch.benchmarks.measurement import Measurement
from perfwatch.benchmarks.records import common
from perfwatch.benchmarks.records.store import BenchStore, ScratchFull
from perfwatch.benchmarks.records.versioned import ASIDE_MAX, PREFIX
from perfwatch.benchmarks.result_board import ResultBoard

KINDS = ("osd", "rados", "rbd", "rgw", "net")
RUN_ID = "rados-20240501T120000-ab12"
RBD_RUN_ID = "rbd-20240501T120500-cd34"


class Log:
    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []

    def _add(self, level: str, msg: str, *args: Any) -> None:
        self.lines.append((level, msg % args if args else msg))

    def debug(self, msg: str, *args: Any) -> None:
        self._add("debug", msg, *args)

    def info(self, msg: str, *args: Any) -> None:
        self._add("info", msg, *args)

    def warning(self, msg: str, *args: Any) -> None:
        self._add("warning", msg, *args)

    def error(self, msg: str, *args: Any) -> None:
        self._add("error", msg, *args)

    def exception(self, msg: str, *args: Any) -> None:
        self._add("exception", msg, *args)

    def problems(self) -> list[str]:
        return [text for level, text in self.lines if level in ("warning", "error", "exception")]


class KV(dict):
    """The mgr store: get_store and set_store (None deletes)."""

    def put(self, key: str, value: str | None) -> None:
        if value is None:
            self.pop(key, None)
        else:
            self[key] = value


def run_record(kind: str, run_id: str, started: float, osd: int = 0, value: float = 1000.0) -> dict[str, Any]:
    """What Run.to_dict() writes today."""
    return {
        "run_id": run_id,
        "kind": kind,
        "heavy": kind in ("osd", "rbd"),
        "trigger": "schedule",
        "params": {"seconds": 1},
        "osds": [osd],
        "state": "done",
        "message": "",
        "progress": 1.0,
        "started_at": started,
        "ended_at": started + 5.0,
        "results": [
            {"kind": kind, "metric": "write_iops_4k", "osd": osd, "value": value, "unit": "iops"},
            {"kind": kind, "metric": "write_latency", "osd": osd, "value": 0.002, "unit": "seconds"},
        ],
    }


def old_records() -> dict[str, Any]:
    """Every record today's store writes, by name (before versioning: the bare value)."""
    values: dict[str, Any] = {
        "history/" + kind: [run_record(kind, f"{kind}-20240501T12000{i}-00a{i}", 1714564800.0 + i)]
        for i, kind in enumerate(KINDS)
    }
    values["baselines"] = {"osd/write_iops_4k/osd.0": [1000.0, 1100.0], "rgw/s3_put_latency/-": [0.01]}
    values["regressions"] = {
        "osd/write_iops_4k/osd.1": {
            "key": "osd/write_iops_4k/osd.1",
            "value": 100.0,
            "unit": "iops",
            "baseline": 1000.0,
            "ratio": 0.1,
            "peer_baseline": None,
            "peer_ratio": None,
            "regressed": True,
            "reason": "0.10x its own baseline",
            "run_id": "osd-20240501T120000-00a0",
            "at": 1714564805.0,
            "consecutive": 1,
        }
    }
    values["streaks"] = {"osd/write_iops_4k/osd.1": 1}
    values["last_run"] = {kind: 1714564805.0 + i for i, kind in enumerate(KINDS)}
    values["scratch"] = {
        RUN_ID: {"kind": "rados", "entries": [{"pool": "perfwatch", "namespace": "bench", "prefix": RUN_ID}]},
        RBD_RUN_ID: {"kind": "rbd", "entries": [{"pool": "perfwatch", "image": "perfwatch." + RBD_RUN_ID}]},
    }
    return values


def old_kv() -> KV:
    """The store as today's code leaves it: its _save wrote json.dumps(value, sort_keys=True)."""
    kv = KV()
    for name, value in old_records().items():
        kv[PREFIX + name] = json.dumps(value, sort_keys=True)
    return kv


def open_store(kv: KV, log: Log | None = None, clock: Any = None) -> BenchStore:
    return BenchStore(kv.get, kv.put, 10, 10, log or Log(), clock or (lambda: 1714600000.0))


def load_everything(store: BenchStore) -> dict[str, Any]:
    return {
        **{"history/" + kind: store.history(kind) for kind in KINDS},
        "baselines": store.baselines(),
        "regressions": store.regressions(),
        "streaks": store.streaks(),
        "last_run": store.last_runs(),
        "scratch": store.scratch(),
    }


def envelope(kv: KV, name: str) -> Any:
    doc = json.loads(kv[PREFIX + name])
    assert set(doc) == {"version", "data"} and doc["version"] == common.VERSION
    return doc["data"]


# ----- old records ------------------------------------------------------------------------------


def test_old_unversioned_records_are_read_as_they_are_and_rewritten_in_envelopes() -> None:
    kv, log = old_kv(), Log()
    store = open_store(kv, log)
    assert load_everything(store) == old_records()
    assert store.recovered_scratch() == {}
    assert log.problems() == []
    migrated = [text for level, text in log.lines if level == "info"]
    assert len(migrated) == len(old_records()), "one line per record"
    for name, value in old_records().items():
        assert envelope(kv, name) == value
    assert not [k for k in kv if k.startswith(PREFIX + "aside")]
    again = Log()
    assert load_everything(open_store(kv, again)) == old_records()
    assert again.lines == [], "a current record is read silently"


def test_a_store_written_now_reads_back_the_same() -> None:
    kv = KV()
    store = open_store(kv)
    for i, kind in enumerate(KINDS):
        store.add_run(run_record(kind, f"{kind}-20240501T12000{i}-00a{i}", 1714564800.0 + i))
    store.judge([Measurement("osd", "write_iops_4k", 0, 1000.0, "iops")], {}, 0.5, 1)  # baselines: saved
    store.record_verdicts(old_records()["streaks"], old_records()["regressions"])
    store.add_scratch(RUN_ID, "rados", {"pool": "perfwatch", "namespace": "bench", "prefix": RUN_ID})
    log = Log()
    again = open_store(kv, log)
    assert load_everything(again) == load_everything(store)
    assert log.lines == []
    assert envelope(kv, "last_run") == {kind: 1714564805.0 + i for i, kind in enumerate(KINDS)}


# ----- newer records ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(old_records()))
def test_a_record_of_a_newer_version_is_set_aside_and_the_others_are_kept(name: str) -> None:
    kv, log = old_kv(), Log()
    future = json.dumps({"version": 99, "data": {"shape": "unknown"}, "extra": [RUN_ID]})
    kv[PREFIX + name] = future
    store = open_store(kv, log)
    loaded = load_everything(store)
    expected = old_records()
    expected[name] = [] if name.startswith("history/") else {}
    if name == "scratch":  # the newer record named RUN_ID: still findable by its prefix
        assert store.recovered_scratch() == {RUN_ID: "rados"}
    assert loaded == expected
    assert len(log.problems()) == 1
    problem = log.problems()[0]
    assert PREFIX + name in problem and "newer" in problem and "version 99" in problem
    aside = [k for k in kv if k.startswith(PREFIX + "aside/" + name + "/")]
    assert len(aside) == 1 and kv[aside[0]] == future and aside[0] in problem
    assert envelope(kv, "aside_index") == aside
    assert envelope(kv, name) == expected[name], "replaced: the next start does not set it aside again"
    again = Log()
    open_store(kv, again).history("osd")
    assert again.problems() == []


# ----- broken records -------------------------------------------------------------------------------

GARBLED = {
    "not JSON": "{'this is': not json",
    "truncated": '{"version": 2, "data": {"osd/write_iops_4k/osd.0": [1',
    "a number": "42",
    "a string": '"hello"',
    "null": "null",
    "broken envelope": '{"version": "two", "data": {}}',
    "envelope without data": '{"version": 2}',
    "version zero": '{"version": 0, "data": {}}',
}


@pytest.mark.parametrize("name", sorted(old_records()))
@pytest.mark.parametrize("garble", sorted(GARBLED))
def test_a_garbled_record_costs_only_itself(name: str, garble: str) -> None:
    kv, log = old_kv(), Log()
    kv[PREFIX + name] = GARBLED[garble]
    store = open_store(kv, log)
    expected = old_records()
    expected[name] = [] if name.startswith("history/") else {}
    assert load_everything(store) == expected
    assert len(log.problems()) == 1 and PREFIX + name in log.problems()[0]
    assert [k for k in kv if k.startswith(PREFIX + "aside/" + name + "/")]


@pytest.mark.parametrize("name", sorted(old_records()))
def test_a_list_where_a_dict_should_be_and_back(name: str) -> None:
    kv, log = old_kv(), Log()
    wrong: Any = {"a": 1} if name.startswith("history/") else [1, 2]
    kv[PREFIX + name] = json.dumps({"version": 2, "data": wrong})
    store = open_store(kv, log)
    expected = old_records()
    expected[name] = [] if name.startswith("history/") else {}
    assert load_everything(store) == expected
    assert len(log.problems()) == 1


def test_a_bad_run_in_a_history_is_dropped_and_the_rest_kept() -> None:
    kv, log = old_kv(), Log()
    good = [run_record("osd", f"osd-20240501T12000{i}-000{i}", 1714564800.0 + i) for i in range(3)]
    missing = dict(good[0], run_id="osd-x")
    del missing["started_at"]
    bad_results = dict(good[1], run_id="osd-y")
    bad_results["results"] = [
        {"kind": "osd", "metric": "write_iops_4k", "osd": 0, "value": "fast", "unit": "iops"},
        {"kind": "osd", "metric": "write_iops_4k", "osd": "0", "value": 1.0, "unit": "iops"},
        {"kind": "osd", "metric": "write_iops_4k", "osd": 0, "value": 1.0, "unit": "furlongs"},
        {"kind": "osd", "metric": "a/b", "osd": 0, "value": 1.0, "unit": "iops"},
        {"kind": "osd", "metric": "write_iops_4k", "osd": True, "value": 1.0, "unit": "iops"},
        {"kind": "osd", "metric": "write_iops_4k", "value": 1.0},
        ["osd", "write_iops_4k", 0, 1.0, "iops"],
        {"kind": "osd", "metric": "write_iops_4k", "osd": None, "value": 5, "unit": "iops"},
    ]
    entries = [
        good[0],
        missing,
        "a string",
        None,
        dict(good[1], results="none"),
        dict(good[1], osds="0,1"),
        dict(good[1], kind="rbd"),
        dict(good[1], progress=None),
        bad_results,
        good[2],
    ]
    kv[PREFIX + "history/osd"] = json.dumps(entries)
    store = open_store(kv, log)
    runs = store.history("osd")
    assert [r["run_id"] for r in runs] == [good[0]["run_id"], "osd-y", good[2]["run_id"]]
    assert runs[1]["results"] == [{"kind": "osd", "metric": "write_iops_4k", "osd": None, "value": 5, "unit": "iops"}]
    assert len(log.problems()) == 1 and "dropped 14" in log.problems()[0]
    assert store.history("rados") == old_records()["history/rados"]
    assert [r["run_id"] for r in envelope(kv, "history/osd")] == [r["run_id"] for r in runs]
    aside = [k for k in kv if k.startswith(PREFIX + "aside/history/osd/")]
    assert len(aside) == 1 and json.loads(kv[aside[0]]) == entries, "the original is kept for a person to read"


def test_baselines_with_non_numbers_keep_their_numbers() -> None:
    kv, log = old_kv(), Log()
    kv[PREFIX + "baselines"] = json.dumps(
        {
            "osd/write_iops_4k/osd.0": [1000.0, "1100", None, True, 900],
            "osd/write_iops_4k/osd.1": "1000",
            "osd/write_iops_4k/osd.2": ["x"],
            "osd/write_iops_4k/osd.x": [1.0],
            "no-slashes": [1.0],
            "osd/write_iops_4k/osd.3": [1.0],
        }
    ).replace("1.0]", "NaN]", 1)  # json.loads reads NaN; it is no baseline
    store = open_store(kv, log)
    assert store.baselines() == {"osd/write_iops_4k/osd.0": [1000.0, 900.0], "osd/write_iops_4k/osd.3": [1.0]}
    assert len(log.problems()) == 1
    store.judge([Measurement("osd", "write_iops_4k", 0, 950.0, "iops")], {0: "ssd", 3: "ssd"}, 0.5, 1)


def test_bad_regressions_streaks_and_last_runs_are_dropped_one_by_one() -> None:
    kv, log = old_kv(), Log()
    good = old_records()["regressions"]["osd/write_iops_4k/osd.1"]
    kv[PREFIX + "regressions"] = json.dumps(
        {
            "osd/write_iops_4k/osd.1": good,
            "osd/write_iops_4k/osd.2": dict(good, value="slow"),
            "osd/write_iops_4k/osd.3": dict(good, unit=None),
            "osd/write_iops_4k/osd.4": dict(good, consecutive="3"),
            "osd/write_iops_4k/osd.5": [good],
            "nonsense": good,
        }
    )
    kv[PREFIX + "streaks"] = json.dumps({"osd/write_iops_4k/osd.1": 2, "osd/write_iops_4k/osd.2": "2", "x": 1})
    kv[PREFIX + "last_run"] = json.dumps({"osd": 1.0, "rados": "yesterday", "rbd": None})
    store = open_store(kv, log)
    assert store.regressions() == {"osd/write_iops_4k/osd.1": good}
    assert store.streaks() == {"osd/write_iops_4k/osd.1": 2}
    assert store.last_runs() == {"osd": 1.0}
    assert len(log.problems()) == 3


# ----- scratch ----------------------------------------------------------------------------------------


def test_run_ids_named_by_an_unreadable_scratch_record_stay_findable() -> None:
    kv, log = old_kv(), Log()
    text = kv[PREFIX + "scratch"]
    kv[PREFIX + "scratch"] = text[: len(text) // 2 + 40]  # cut: no longer JSON
    assert RUN_ID in kv[PREFIX + "scratch"]
    store = open_store(kv, log)
    assert store.scratch() == {}
    assert RUN_ID in store.recovered_scratch() and store.recovered_scratch()[RUN_ID] == "rados"
    assert "kept for cleanup by prefix" in log.problems()[0]
    assert envelope(kv, "recovered_scratch") == store.recovered_scratch()
    again = open_store(kv)
    assert again.recovered_scratch() == store.recovered_scratch(), "persisted: a failover does not lose them"
    entry = {"pool": "perfwatch", "namespace": "bench", "prefix": RUN_ID}
    again.adopt_recovered(RUN_ID, "rados", [entry])
    assert again.scratch() == {RUN_ID: {"kind": "rados", "entries": [entry]}}
    assert RUN_ID not in again.recovered_scratch()
    third = open_store(kv)
    assert RUN_ID in third.scratch() and RUN_ID not in third.recovered_scratch()
    for run_id in list(third.recovered_scratch()):
        third.forget_recovered(run_id)
    assert open_store(kv).recovered_scratch() == {}


def test_a_scratch_record_with_broken_items_keeps_the_good_ones() -> None:
    kv, log = old_kv(), Log()
    scratch = old_records()["scratch"]
    scratch["osd-20240501T130000-ffff"] = {"kind": "osd", "entries": "gone"}
    scratch["rgw-20240501T130000-eeee"] = [1, 2]
    scratch["fake-old-1"] = {"entries": [{"prefix": "fake-old-1"}]}  # no kind, no run-id shape
    scratch[RUN_ID]["entries"].append(["perfwatch", "bench", "rados-20240501T125959-0001"])
    scratch[RUN_ID]["entries"].append({"pool": 7, "prefix": RUN_ID})
    kv[PREFIX + "scratch"] = json.dumps(scratch)
    store = open_store(kv, log)
    assert store.scratch() == old_records()["scratch"]
    assert store.recovered_scratch() == {
        "osd-20240501T130000-ffff": "osd",
        "rgw-20240501T130000-eeee": "rgw",
        "fake-old-1": "",
        RUN_ID: "rados",
        "rados-20240501T125959-0001": "rados",
    }
    assert len(log.problems()) == 1


def test_the_run_id_pattern_finds_what_new_run_id_makes() -> None:
    from perfwatch.benchmarks.run import new_run_id

    run_id = new_run_id("rados", 1714564800.0)
    assert common.run_ids_in(f'xx"perfwatch.{run_id}"yy {run_id}.0001') == {run_id: "rados"}
    assert common.kind_of_run_id(run_id) == "rados" and common.kind_of_run_id("fake-old-1") == ""


# ----- every method, on a store full of broken records ----------------------------------------------


def garbled_kv() -> KV:
    kv = KV()
    for i, name in enumerate(sorted(old_records())):
        kv[PREFIX + name] = list(GARBLED.values())[i % len(GARBLED)]
    kv[PREFIX + "recovered_scratch"] = "[[["
    kv[PREFIX + "aside_index"] = '{"version": 2, "data": "x"}'
    return kv


def test_every_method_works_on_a_garbled_store() -> None:
    kv, log = garbled_kv(), Log()
    store = open_store(kv, log)
    for kind in KINDS:
        assert store.history(kind) == []
    store.add_run(run_record("osd", "osd-20240601T000000-0000", 1717200000.0))
    store.judge([Measurement("osd", "write_iops_4k", 0, 1.0, "iops")], {}, 0.5, 1)  # baselines: saved
    regression = old_records()["regressions"]["osd/write_iops_4k/osd.1"]
    store.record_verdicts({"osd/write_iops_4k/osd.0": 1}, {"osd/write_iops_4k/osd.0": regression})
    store.add_scratch(RUN_ID, "rados", {"prefix": RUN_ID})
    store.drop_scratch(RUN_ID)
    store.drop_scratch("never-registered")
    store.adopt_recovered(RBD_RUN_ID, "rbd", [{"pool": "p", "image": "perfwatch." + RBD_RUN_ID}])
    store.forget_recovered("never-recovered")
    again = open_store(kv)
    assert [r["run_id"] for r in again.history("osd")] == ["osd-20240601T000000-0000"]
    assert again.last_runs() == {"osd": 1717200005.0}
    assert again.baselines() == {"osd/write_iops_4k/osd.0": [1.0]}
    assert set(again.regressions()) == {"osd/write_iops_4k/osd.0"} and again.streaks() == {"osd/write_iops_4k/osd.0": 1}
    assert set(again.scratch()) == {RBD_RUN_ID}


class Broken(Exception):
    pass


def test_a_store_that_fails_to_read_or_write_never_raises() -> None:
    def get(key: str) -> str | None:
        raise Broken("mon unreachable")

    def put(key: str, value: str | None) -> None:
        raise Broken("mon unreachable")

    log = Log()
    store = BenchStore(get, put, 10, 10, log)
    assert store.history("osd") == []
    store.add_run(run_record("osd", "osd-20240601T000000-0000", 1717200000.0))
    store.save_baselines()
    store.save_regressions()
    store.add_scratch(RUN_ID, "rados", {"prefix": RUN_ID})
    assert RUN_ID in store.scratch(), "kept in memory; the next save tries again"
    store.drop_scratch(RUN_ID)
    assert log.problems()

    kv = old_kv()
    kv[PREFIX + "baselines"] = "garbage"
    writes_fail = BenchStore(kv.get, put, 10, 10, Log())  # setting aside fails too: still no exception
    assert writes_fail.baselines() == {} and writes_fail.history("osd") == old_records()["history/osd"]


def test_a_record_that_is_not_text_is_set_aside() -> None:
    kv = old_kv()
    kv[PREFIX + "streaks"] = b"\x00\xff"  # type: ignore[assignment]
    store = open_store(kv)
    assert store.streaks() == {} and store.regressions() == old_records()["regressions"]


def test_add_run_refuses_a_record_it_could_not_read_back() -> None:
    kv, log = KV(), Log()
    store = open_store(kv, log)
    store.add_run({"kind": "osd"})
    assert store.history("osd") == [] and len(log.problems()) == 1
    record = run_record("osd", "osd-20240601T000000-0000", 1717200000.0)
    record["results"].append({"kind": "osd", "metric": "x", "osd": 0, "value": float("inf"), "unit": "iops"})
    store.add_run(record)
    assert len(store.history("osd")[0]["results"]) == 2


# ----- bounds ----------------------------------------------------------------------------------------


def test_set_aside_copies_are_bounded_in_count_and_size() -> None:
    kv = old_kv()
    now = [1714600000.0]
    for _ in range(ASIDE_MAX + 5):
        kv[PREFIX + "streaks"] = "garbage"
        open_store(kv, clock=lambda: now[0])
        now[0] += 0.25  # several in the same second get distinct keys
    aside = [k for k in kv if k.startswith(PREFIX + "aside/")]
    assert len(aside) == ASIDE_MAX
    assert sorted(aside) == sorted(envelope(kv, "aside_index"))
    kv[PREFIX + "streaks"] = "x" * (common.ENTRY_MAX_CHARS + 1)
    log = Log()
    open_store(kv, log)
    assert "too large to set aside" in log.problems()[0]
    assert len([k for k in kv if k.startswith(PREFIX + "aside/")]) == ASIDE_MAX


def test_stored_maps_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(common, "MAX_KEYS", 5)
    monkeypatch.setattr(common, "MAX_RESULT_KEYS", 5)
    kv, log = KV(), Log()
    store = open_store(kv, log)
    store.judge([Measurement("osd", "write_iops_4k", osd, 1.0, "iops") for osd in range(8)], {}, 0.5, 1)
    store.record_verdicts({f"osd/write_iops_4k/osd.{osd}": 1 for osd in range(8)}, {})
    store.save_baselines()
    store.save_regressions()
    assert len(envelope(kv, "baselines")) == 5 and len(envelope(kv, "streaks")) == 5
    assert any("baselines beyond 5 keys: dropped 3" in line for line in log.problems())
    for i in range(5):
        store.add_scratch(f"rados-20240501T12000{i}-0000", "rados", {"prefix": str(i)})
    with pytest.raises(ScratchFull):
        store.add_scratch("rados-20240501T120009-0000", "rados", {"prefix": "9"})
    store.add_scratch("rados-20240501T120000-0000", "rados", {"prefix": "0"})  # already there: fine
    kv[PREFIX + "baselines"] = json.dumps({f"osd/write_iops_4k/osd.{osd}": [1.0] for osd in range(9)})
    assert len(open_store(kv).baselines()) == 5


def test_history_stays_within_its_limit() -> None:
    kv = KV()
    store = BenchStore(kv.get, kv.put, 3, 10, Log())
    for i in range(5):
        store.add_run(run_record("net", f"net-20240501T12000{i}-0000", 1714564800.0 + i))
    assert [r["started_at"] for r in envelope(kv, "history/net")] == [1714564802.0, 1714564803.0, 1714564804.0]


def test_the_store_logs_to_the_standard_logger_without_a_log(caplog: pytest.LogCaptureFixture) -> None:
    kv = old_kv()
    kv[PREFIX + "streaks"] = "garbage"
    with caplog.at_level(logging.WARNING):
        store = BenchStore(kv.get, kv.put, 10, 10)
    assert store.streaks() == {} and "bench/streaks is not JSON" in caplog.text


# ----- the module's start-up -----------------------------------------------------------------------


def start_up(kv: KV, log: Log) -> dict[str, tuple[float, str]]:
    """What Module.serve() does with the store before its loop: BenchStore(...), the ResultBoard that loads
    the last results, the regression health check; then a reset of baselines and a judgement."""
    store = BenchStore(kv.get, kv.put, 50, 10, log)
    board = ResultBoard(store)
    health.regression_checks(store.regressions(), 0.5)
    for key in set(store.baselines()) | set(store.regressions()) | set(store.streaks()):  # reset_baselines
        key.split("/")[2]
    store.judge([Measurement("osd", "write_iops_4k", 0, 1.0, "iops")], {}, 0.5, 1)
    return board.last_results()


def test_the_module_starts_on_an_old_store() -> None:
    last = start_up(old_kv(), Log())
    assert last["osd/write_iops_4k/osd.0"] == (1000.0, "iops") and len(last) == 2 * len(KINDS)


def test_the_module_starts_on_a_garbled_store() -> None:
    kv = old_kv()
    osd_runs = old_records()["history/osd"]
    osd_runs.append(dict(osd_runs[0], results=[{"kind": "osd", "metric": "write_iops_4k", "value": "x"}, 7]))
    kv[PREFIX + "history/osd"] = json.dumps(osd_runs)
    kv[PREFIX + "history/rados"] = "{]"
    kv[PREFIX + "regressions"] = json.dumps({"osd/write_iops_4k/osd.1": {"value": None}, "a/b": {}})
    kv[PREFIX + "baselines"] = json.dumps({"osd/write_iops_4k/osd.zero": [1.0]})
    log = Log()
    last = start_up(kv, log)
    assert "rbd/write_iops_4k/osd.0" in last and not any(k.startswith("rados/") for k in last)
    assert len(log.problems()) == 4


def test_the_module_starts_on_a_store_of_garbage() -> None:
    start_up(garbled_kv(), Log())


# ----- runs in progress (what an interrupted run leaves) -----------------------------------------------


@pytest.mark.parametrize("garble", sorted(GARBLED))
def test_a_garbled_record_of_runs_in_progress_costs_only_itself(garble: str) -> None:
    kv, log = old_kv(), Log()
    kv[PREFIX + "running"] = GARBLED[garble]
    store = open_store(kv, log)
    assert store.take_interrupted() == []
    assert load_everything(store) == old_records()
    assert len(log.problems()) == 1 and PREFIX + "running" in log.problems()[0]


def test_a_bad_run_in_progress_is_dropped_and_the_good_one_kept() -> None:
    kv, log = KV(), Log()
    good = run_record("rados", RUN_ID, 1714564800.0)
    kv[PREFIX + "running"] = json.dumps(
        {"version": common.VERSION, "data": {RUN_ID: good, "osd-20240501T120000-0000": {"run_id": 7}}}
    )
    store = open_store(kv, log)
    assert store.take_interrupted() == [good]
    assert store.take_interrupted() == [], "taken once"
    assert envelope(kv, "running") == {}


def test_runs_in_progress_are_saved_and_dropped() -> None:
    kv = KV()
    store = open_store(kv)
    record = run_record("rados", RUN_ID, 1714564800.0)
    store.save_running(record)
    assert envelope(kv, "running") == {RUN_ID: record}
    store.drop_running(RUN_ID)
    assert envelope(kv, "running") == {}
