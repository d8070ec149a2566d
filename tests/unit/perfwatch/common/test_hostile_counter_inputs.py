"""Hostile or unlucky inputs against the mempool logger read from an OSD's perf dump (module and host
exporter), the BlueStore commit evidence (commit_lat / txc_commit_lat) and attribution's COMMIT_SHARE.
What the review that wrote them found: docs/decisions/adversarial-reviews.md."""

import copy
import json
import math
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from perfwatch.benchmarks.engine.commit_evidence import slow_committers, window_latency
from perfwatch.benchmarks.judging import attribution
from perfwatch.benchmarks.judging.baseline import Verdict
from perfwatch.ceph.commit_latency import COMMIT_COMMAND, commit_reading
from perfwatch.collection.collector import Collector, Settings
from perfwatch.collection.module_families import MODULE_REGISTRY
from perfwatch.common import exposition
from perfwatch.common.daemon_counters import counters as c
from perfwatch.common.daemon_counters.counter_families import MEMPOOL_BYTES, MEMPOOL_ITEMS
from perfwatch_host_exporter import daemon_counters as exporter_counters
from tests.unit.fakes import PERF_DUMP, FakeAdapter

FAST = Settings(request_timeout=0.3, max_in_flight=4)
MEMPOOL_FAMILIES = (MEMPOOL_BYTES, MEMPOOL_ITEMS)


def verdict(key: str, value: float, regressed: bool) -> Verdict:
    return Verdict(
        key, value, "s", 0.005, 0.5 if regressed else 1.0, None, None, regressed, "slow" if regressed else "ok"
    )


def mempool_samples(dump: Any) -> dict[tuple[str, str], Any]:
    got = c.osd_counters(dump, "osd.0")
    return {(s.family, dict(s.labels)["pool"]): s.value for s in got.samples if s.family in MEMPOOL_FAMILIES}


def with_mempool(logger: Any) -> dict[str, Any]:
    dump = copy.deepcopy(PERF_DUMP)
    dump["mempool"] = logger
    return dump


# --- the mempool logger: accounting -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "logger",
    [
        {},
        {"osd_bytes": 5, "osd_items": 1, "buffer_anon_bytes": 7, "buffer_anon_items": 2},
        {"bluestore_cache_data_items": 3, "bluestore_cache_onode_items": 4},
    ],
    ids=["empty", "other pools only", "items without bytes"],
)
def test_a_mempool_logger_without_any_bluestore_cache_bytes_is_accounted_missing(logger: Any) -> None:
    """A logger that is an object but holds no bluestore_cache_*_bytes (empty, other pools only, or only the
    _items) gives no mempool sample and counts MEMPOOLS_MISSING, as an absent logger does: the families are
    never silently empty."""
    got = c.osd_counters(with_mempool(logger), "osd.0")
    assert not [s for s in got.samples if s.family in MEMPOOL_FAMILIES]
    assert c.MEMPOOLS_MISSING in got.missing, "no mempool sample and counters_missing says nothing is lacking"


def test_a_pools_items_that_are_absent_are_not_exported_as_zero() -> None:
    """A pool with _bytes but no _items: its bytes exported, its items not (0 would be a value the OSD never
    gave), and the items counted missing; in the samples and in the columns the collector renders."""
    logger = copy.deepcopy(PERF_DUMP["mempool"])
    del logger["bluestore_cache_onode_items"]
    got = mempool_samples(with_mempool(logger))
    assert got[(MEMPOOL_BYTES, "onode")] == PERF_DUMP["mempool"]["bluestore_cache_onode_bytes"]
    assert (MEMPOOL_ITEMS, "onode") not in got, "items exported as 0 for a pool whose items the OSD did not give"
    row = c.osd_row(with_mempool(logger))
    assert row.missing == ("mempool.bluestore_cache_onode_items",)
    columns = {(col.family, dict(col.fixed).get("pool")): col.series for col in c.OSD_LAYOUT.columns([("osd.0", row)])}
    assert columns[(MEMPOOL_BYTES, "onode")] == [("osd.0", PERF_DUMP["mempool"]["bluestore_cache_onode_bytes"])]
    assert (MEMPOOL_ITEMS, "onode") not in columns and (MEMPOOL_ITEMS, "data") in columns


def test_absent_or_non_object_logger_is_missing_and_the_rest_of_the_row_stays() -> None:
    for logger in (None, 5, "x", [], True):
        dump = with_mempool(logger)
        got = c.osd_counters(dump, "osd.0")
        assert got.missing.count(c.MEMPOOLS_MISSING) == 1
        assert len(got.samples) == len(c.osd_counters(PERF_DUMP, "osd.0").samples) - 8
    assert c.MEMPOOLS_MISSING not in c.osd_counters(PERF_DUMP, "osd.0").missing


def test_extra_pools_and_odd_keys_do_not_disturb_the_known_ones() -> None:
    logger = copy.deepcopy(PERF_DUMP["mempool"])
    logger.update({"bluestore_cache__bytes": 1, "bluestore_cache_bytes": 2, "xbluestore_cache_data_bytes": 3})
    logger.update({"bluestore_cache_buffer_bytes": 11, "bluestore_cache_buffer_items": 1})  # Reef's extra pool
    got = mempool_samples(with_mempool(logger))
    assert sorted({pool for _f, pool in got}) == ["buffer", "data", "meta", "onode", "other"]
    assert got[(MEMPOOL_BYTES, "data")] == PERF_DUMP["mempool"]["bluestore_cache_data_bytes"]


def test_a_pool_name_with_quotes_backslashes_and_newlines_renders_parseable_text() -> None:
    dump = with_mempool(
        {**PERF_DUMP["mempool"], 'bluestore_cache_a"b\\c\nd_bytes': 3, 'bluestore_cache_a"b\\c\nd_items': 1}
    )
    row = c.osd_row(dump)
    for items in (c.OSD_LAYOUT.columns([("osd.0", row)]), c.osd_counters(dump, "osd.0").samples):
        text = exposition.render(MODULE_REGISTRY, items)
        pools = {
            s.labels["pool"]
            for f in text_string_to_metric_families(text)
            for s in f.samples
            if f.name == "ceph_perfwatch_bluestore_mempool_bytes"
        }
        assert 'a"b\\c\nd' in pools


@pytest.mark.parametrize(
    "value, expected",
    [(2**64 - 1, float(2**64 - 1)), (-5, -5), ("131072", 131072), (True, 1), (float("inf"), "+Inf")],
    ids=["u64 max", "negative", "numeric string", "bool", "inf"],
)
def test_odd_numbers_in_the_mempool_logger_are_read_as_the_table_reads_its_values(value: Any, expected: Any) -> None:
    row = c.osd_row(with_mempool({"bluestore_cache_data_bytes": value, "bluestore_cache_data_items": 1}))
    assert row.mempools == (("data", expected, 1),)


@pytest.mark.parametrize("value", [None, "abc", [1], {"x": 1}, 10**400], ids=["null", "text", "list", "object", "huge"])
def test_a_mempool_value_that_is_no_number_fails_the_osd_in_both_paths_without_raising(value: Any) -> None:
    dump = with_mempool({"bluestore_cache_data_bytes": value})
    with pytest.raises((TypeError, ValueError, OverflowError)):
        c.osd_row(dump)
    with pytest.raises(exporter_counters.Failure):
        exporter_counters.read(lambda command: dump, "osd.0")


# --- the module's collection cycle with such replies ---------------------------------------------------------


class TextAdapter(FakeAdapter):
    """osd.0 answers its perf dump with the text `reply`; the other OSDs the recorded dump."""

    def __init__(self, reply: str, n_osds: int = 3) -> None:
        super().__init__(n_osds)
        self.reply = reply

    def tell_osd_text(self, osd_id: int, command: dict, timeout: float) -> str:
        if osd_id == 0:
            return self.reply
        return super().tell_osd_text(osd_id, command, timeout)


def parsed(collector: Collector) -> dict[str, list]:
    text = collector.cache.body(0.0, compressed=False).decode()
    return {f.name: f.samples for f in text_string_to_metric_families(text)}


def errors_of(fams: dict[str, list]) -> set[tuple[str, str]]:
    return {(s.labels["ceph_daemon"], s.labels["reason"]) for s in fams["ceph_perfwatch_fetch_errors"]}


def up_of(fams: dict[str, list]) -> dict[str, float]:
    return {s.labels["ceph_daemon"]: s.value for s in fams["ceph_perfwatch_daemon_up"]}


@pytest.mark.parametrize(
    "reply",
    ["Error EINVAL: unknown command", "", "{", "[1, 2]", "null", '{"mempool": {"bluestore_cache_data_bytes": 1'],
    ids=["error text", "empty", "cut", "a list", "null", "cut in the mempool logger"],
)
def test_an_osd_answering_no_json_object_is_one_failed_osd_and_the_cycle_goes_on(reply: str) -> None:
    collector = Collector(TextAdapter(reply))
    collector.collect(FAST)
    fams = parsed(collector)
    assert up_of(fams) == {"osd.0": 0, "osd.1": 1, "osd.2": 1}
    assert {d for d, _r in errors_of(fams)} == {"osd.0"}
    mempools = {s.labels["ceph_daemon"] for s in fams["ceph_perfwatch_bluestore_mempool_bytes"]}
    assert mempools == {"osd.1", "osd.2"}


def missing_of(fams: dict[str, list]) -> dict[str, float]:
    return {s.labels["ceph_daemon"]: s.value for s in fams["ceph_perfwatch_counters_missing"]}


@pytest.mark.parametrize("logger", ["5", '"x"', "[]", "null"], ids=["number", "string", "list", "null"])
def test_a_non_object_mempool_logger_through_the_collector_is_one_missing_entry(logger: str) -> None:
    dump = copy.deepcopy(PERF_DUMP)
    del dump["mempool"]
    text = json.dumps(dump)[:-1] + ', "mempool": ' + logger + "}"
    collector = Collector(TextAdapter(text))
    collector.collect(FAST)
    fams = parsed(collector)
    assert up_of(fams)["osd.0"] == 1
    assert missing_of(fams)["osd.0"] == missing_of(fams)["osd.1"] + 1
    assert {s.labels["ceph_daemon"] for s in fams["ceph_perfwatch_bluestore_mempool_bytes"]} == {"osd.1", "osd.2"}


def test_a_nested_mempool_key_before_the_logger_is_not_taken_for_it() -> None:
    """json_members looks for `"mempool":`; one nested in an earlier logger must not be read as the logger."""
    dump = copy.deepcopy(PERF_DUMP)
    dump["bluefs"]["mempool"] = {"bluestore_cache_data_bytes": 999, "bluestore_cache_data_items": 9}
    collector = Collector(TextAdapter(json.dumps(dump, sort_keys=True)))
    collector.collect(FAST)
    fams = parsed(collector)
    data = {
        s.labels["ceph_daemon"]: s.value
        for s in fams["ceph_perfwatch_bluestore_mempool_bytes"]
        if s.labels["pool"] == "data"
    }
    assert data == {d: PERF_DUMP["mempool"]["bluestore_cache_data_bytes"] for d in ("osd.0", "osd.1", "osd.2")}


def test_the_module_and_the_exporter_count_a_bad_mempool_value_under_the_same_reason() -> None:
    """The same reply (a mempool's bytes null) is fetch_errors_total{reason="decode"} from the module and from
    the host exporter: the two sources are interchangeable."""
    dump = copy.deepcopy(PERF_DUMP)
    dump["mempool"]["bluestore_cache_onode_bytes"] = None
    collector = Collector(TextAdapter(json.dumps(dump)))
    collector.collect(FAST)
    module_reason = {r for d, r in errors_of(parsed(collector)) if d == "osd.0"}
    with pytest.raises(exporter_counters.Failure) as failed:
        exporter_counters.read(lambda command: dump, "osd.0")
    assert module_reason == {failed.value.reason}


def test_the_exporter_asks_one_command_and_counts_a_missing_logger() -> None:
    asked = []
    dump = copy.deepcopy(PERF_DUMP)
    del dump["mempool"]

    def ask(command: dict) -> Any:
        asked.append(command)
        return dump

    got = exporter_counters.read(ask, "osd.0")
    assert asked == [c.PERF_DUMP]
    assert c.MEMPOOLS_MISSING in got.missing
    with pytest.raises(exporter_counters.Failure) as failed:
        exporter_counters.read(lambda command: ["not", "an", "object"], "osd.0")
    assert failed.value.reason == "decode"


# --- commit evidence -----------------------------------------------------------------------------------------

LAT = {"avgcount": 10, "sum": 0.5, "avgtime": 0.05}


@pytest.mark.parametrize(
    "answer, expected",
    [
        ({"bluestore": {"commit_lat": LAT}}, (0.5, 10.0)),
        ({"bluestore": {"txc_commit_lat": LAT}}, (0.5, 10.0)),
        ({"bluestore": {"commit_lat": LAT, "txc_commit_lat": {"avgcount": 1, "sum": 9.0}}}, (0.5, 10.0)),
        ({"bluestore": {"kv_commit_lat": LAT}}, None),
        ({"bluestore": {"txc_commit_lat": 5}}, None),
        ({"bluestore": {"txc_commit_lat": {"avgcount": 3}}}, None),
        ({"bluestore": {"txc_commit_lat": {"sum": "x", "avgcount": 3}}}, None),
        ({"bluestore": {"txc_commit_lat": {"sum": None, "avgcount": 3}}}, None),
        ({"bluestore": "xxcommit_latxx"}, None),
        ({"bluestore": ["commit_lat"]}, None),
        ({"bluestore": None}, None),
        ({}, None),
        ([], None),
        ("Error EINVAL", None),
        (None, None),
        ({"bluestore": {"txc_commit_lat": {"sum": 0.0, "avgcount": 0}}}, (0.0, 0.0)),
    ],
)
def test_commit_reading_of_odd_answers(answer: Any, expected: Any) -> None:
    assert commit_reading(answer) == expected


def test_the_commit_command_is_the_whole_bluestore_logger_and_not_mutated() -> None:
    before = dict(COMMIT_COMMAND)
    commit_reading({"bluestore": {"commit_lat": LAT}})
    assert COMMIT_COMMAND == before == {"prefix": "perf dump", "logger": "bluestore"}


def test_counters_that_went_back_or_did_not_move_give_no_figure() -> None:
    before = {0: (10.0, 100.0), 1: (10.0, 100.0), 2: (10.0, 100.0), 3: (10.0, 100.0)}
    after = {0: (0.2, 3.0), 1: (10.0, 100.0), 2: (12.0, 99.0), 3: (9.0, 101.0)}  # restart, idle, ...
    assert window_latency(before, after) == {}


@pytest.mark.parametrize(
    "before, after",
    [
        ((float("inf"), 1.0), (float("inf"), 2.0)),  # `1e400` in both dumps: inf - inf
        ((float("-inf"), 1.0), (1.0, 2.0)),
        ((1.0, 1.0), (float("inf"), 2.0)),
        ((float("nan"), 1.0), (1.0, 2.0)),
        ((1.0, float("nan")), (2.0, 3.0)),
    ],
    ids=["inf both", "-inf before", "inf after", "nan sum", "nan count"],
)
def test_window_latency_gives_only_finite_figures(before: tuple, after: tuple) -> None:
    """A sum the JSON spells 1e400 decodes as inf: no figure for that OSD (not NaN, inf - inf, or inf, which
    commit_evidence and attribution would take as a figure)."""
    got = window_latency({0: before}, {0: after})
    assert all(math.isfinite(v) for v in got.values()), got


def test_a_nan_commit_figure_makes_no_healthy_peer_a_slow_committer() -> None:
    """A NaN figure given anyway is no figure: sorted first it became the reference, max(floor, 4 * NaN) the
    floor, and every peer at or above the floor was 'slow'."""
    healthy = {1: 0.010, 2: 0.011}
    assert slow_committers(healthy, healthy, floor=0.009) == []
    assert slow_committers({0: float("nan"), **healthy}, [0, 1, 2], floor=0.009) == []


def test_a_nan_commit_figure_raises_no_fast_write() -> None:
    """End to end: osd.1's write is slow (30 ms), osd.2's fast; their commits 10 and 11 ms, osd.0's NaN. A NaN
    taken as the fastest figure would make both slow committers, and osd.2's fast write would be raised ("the
    writes of osd.1 waited for it"); without a figure for osd.0 the two are alike and nobody is blamed."""
    acting = {1: [1, 2, 0], 2: [2, 0, 1]}
    verdicts = [
        verdict("rados/write_latency/osd.1", 0.030, True),
        verdict("rados/write_latency/osd.2", 0.006, False),
    ]
    hostile = attribution.attribute(verdicts, "rados", acting, {0: float("nan"), 1: 0.010, 2: 0.011})
    assert [v.regressed for v in hostile] == [True, False], [v.reason for v in hostile]
    # the same with osd.0's real 2.5 ms: 10 and 11 ms are then four times it, and osd.2 is raised (by design)
    real = attribution.attribute(verdicts, "rados", acting, {0: 0.0025, 1: 0.010, 2: 0.011})
    assert [v.regressed for v in real] == [True, True]


# --- attribution around COMMIT_SHARE ---------------------------------------------------------------------------


def judged(write: float, commits: dict[int, float]) -> list[Verdict]:
    """osd.1's write slow at `write` s, acting set [1, 0, 2]; osd.0 a peer with a fast write of its own."""
    acting = {1: [1, 0, 2], 0: [0, 2, 1]}
    verdicts = [
        verdict("rados/write_latency/osd.1", write, True),
        verdict("rados/write_latency/osd.0", 0.006, False),
    ]
    return attribution.attribute(verdicts, "rados", acting, commits)


@pytest.mark.parametrize(
    "write, commit, blamed",
    [
        (0.050, 0.012, False),  # the documented non-cause: 0.24
        (0.050, 0.0149, False),  # just under 0.3
        (0.050, 0.015, True),  # exactly 0.3 (0.3 * 0.05 == 0.015 in floats)
        (0.114, 0.0413, True),  # the Tentacle run: 0.36
    ],
)
def test_a_peers_commits_explain_a_slow_write_from_commit_share_on(write: float, commit: float, blamed: bool) -> None:
    out = judged(write, {0: commit, 1: 0.0015, 2: 0.0015})
    slow, peer = out
    assert slow.regressed is not blamed
    assert peer.regressed is blamed
    assert attribution.COMMIT_SHARE == 0.3


@pytest.mark.parametrize("write", [0.0, -0.01, float("nan"), float("inf")])
def test_odd_write_latencies_do_not_raise(write: float) -> None:
    out = judged(write, {0: 0.020, 1: 0.0015, 2: 0.0015})
    assert len(out) == 2


def test_one_osd_with_a_figure_or_none_blames_nobody() -> None:
    assert [v.regressed for v in judged(0.050, {0: 0.040})] == [True, False]
    assert [v.regressed for v in judged(0.050, {})] == [True, False]
    assert slow_committers({0: 0.2}, [0], floor=0.0) == []


def test_all_zero_commits_do_not_blame_anyone() -> None:
    assert slow_committers({0: 0.0, 1: 0.0, 2: 0.0}, [0, 1, 2], floor=0.0) == []
