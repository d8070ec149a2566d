"""json_members: the loggers of a perf dump decoded alone are what a whole decode gives, or it gives up."""

import json

import pytest

from perfwatch import counters, json_members

from .fakes import PERF_DUMP

WANTED = counters.OSD_LAYOUT.loggers
COMPACT = json.dumps(PERF_DUMP, separators=(",", ":"))


@pytest.mark.parametrize("text", [COMPACT, json.dumps(PERF_DUMP, indent=4), "\n  " + json.dumps(PERF_DUMP)])
def test_the_wanted_loggers_are_those_of_a_whole_decode(text: str) -> None:
    got = json_members.members(text, WANTED)
    assert got == {name: PERF_DUMP[name] for name in WANTED if name in PERF_DUMP}
    assert set(got) >= {"osd", "bluestore", "rocksdb", "bluefs", "bluestore-pricache:kv_onode"}


def test_a_logger_the_daemon_lacks_is_left_out() -> None:
    lacking = {k: v for k, v in PERF_DUMP.items() if k != "rocksdb"}
    got = json_members.members(json.dumps(lacking), WANTED)
    assert got is not None and "rocksdb" not in got and "bluefs" in got


@pytest.mark.parametrize(
    "counter",
    [7, {"avgcount": 1, "sum": 0.5, "avgtime": 0.5}, {}],
    ids=["number", "average", "empty object"],
)
def test_a_counter_named_like_a_logger_before_it_makes_it_give_up(counter: object) -> None:
    dump = {"aaa": {"rocksdb": counter}, **PERF_DUMP}
    text = json.dumps(dump)
    assert json_members.members(text, WANTED) is None
    assert json_members.loads(text, WANTED) == dump, "the caller then decodes it whole"


@pytest.mark.parametrize("text", ["", "[1, 2]", '"osd"', "null", '{"osd": {"op_r": 1', '{"osd": [1]}'])
def test_what_is_not_an_object_of_loggers_is_decoded_whole(text: str) -> None:
    assert json_members.members(text, WANTED) is None
    with pytest.raises(ValueError) if text in ("", '{"osd": {"op_r": 1') else _none():
        json_members.loads(text, WANTED)


class _none:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def test_the_collector_reads_the_same_with_either_decoding() -> None:
    whole = counters.osd_row(PERF_DUMP, {"mempool": {"by_pool": {}}})
    part = counters.osd_row(json_members.loads(COMPACT, WANTED), {"mempool": {"by_pool": {}}})
    assert whole == part
