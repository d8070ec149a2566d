"""json_members: the loggers of a perf dump decoded alone are what a whole decode gives, or it gives up."""

import json

import pytest

from perfwatch import json_members
from perfwatch.daemon_counters import counters

from .fakes import PERF_DUMP

WANTED = counters.OSD_LAYOUT.loggers
COMPACT = json.dumps(PERF_DUMP, separators=(",", ":"))


@pytest.mark.parametrize("text", [COMPACT, json.dumps(PERF_DUMP, indent=4), "\n  " + json.dumps(PERF_DUMP)])
def test_the_wanted_loggers_are_those_of_a_whole_decode(text: str) -> None:
    got = json_members.members(text, WANTED)
    assert got == {name: PERF_DUMP[name] for name in WANTED if name in PERF_DUMP}
    assert set(got) >= {"osd", "bluestore", "rocksdb", "bluefs", "bluestore-pricache:kv_onode"}


def test_a_logger_the_daemon_lacks_is_for_the_whole_decode_to_judge() -> None:
    lacking = {k: v for k, v in PERF_DUMP.items() if k != "rocksdb"}
    text = json.dumps(lacking)
    assert json_members.members(text, WANTED) is None
    assert json_members.loads(text, WANTED) == lacking


@pytest.mark.parametrize(
    "change",
    [('"osd":', '"osd" :'), ('"rocksdb":', '"\\u0072ocksdb":')],
    ids=["a space before the colon", "a key spelled with an escape"],
)
def test_a_key_written_otherwise_than_ceph_writes_it_is_decoded_whole(change: tuple[str, str]) -> None:
    text = COMPACT.replace(*change)
    assert json_members.members(text, WANTED) is None
    assert json_members.loads(text, WANTED) == PERF_DUMP


@pytest.mark.parametrize(
    "text",
    [COMPACT[: COMPACT.index('"osd":')], "{", "{}garbage", "{ not json", COMPACT + "x"],
    ids=["cut before a logger", "an open brace", "garbage after", "not json", "text after"],
)
def test_a_text_cut_short_or_not_json_is_a_decode_error(text: str) -> None:
    assert json_members.members(text, WANTED) is None
    with pytest.raises(ValueError):
        json_members.loads(text, WANTED)


def test_what_it_does_not_check_a_text_that_lacks_only_its_last_brace_gives_whole_loggers() -> None:
    """The rest of the text is not read: the loggers it gives are whole (a whole decode would refuse it)."""
    got = json_members.members(COMPACT[:-1], WANTED)
    assert got == {name: PERF_DUMP[name] for name in WANTED}


COUNTERS = pytest.mark.parametrize(
    "counter",
    [7, {"avgcount": 1, "sum": 0.5, "avgtime": 0.5}, {}],
    ids=["number", "average", "empty object"],
)


@COUNTERS
def test_a_counter_named_like_a_logger_where_it_is_looked_for_makes_it_give_up(counter: object) -> None:
    """Loggers are looked for in Ceph's order (by name), each after the one before: a counter "rocksdb" in
    a logger written between "osd" and "rocksdb" is found first, and is no logger."""
    dump = dict(sorted({**PERF_DUMP, "osdz": {"rocksdb": counter}}.items()))
    text = json.dumps(dump)
    assert text.index('"osd":') < text.index('"osdz":') < text.index('"rocksdb":')
    assert json_members.members(text, WANTED) is None
    assert json_members.loads(text, WANTED) == dump, "the caller then decodes it whole"


@COUNTERS
def test_a_counter_named_like_a_logger_before_the_logger_found_last_is_passed_over(counter: object) -> None:
    """Before where the next logger is looked for, a counter of its name is not read: what it gives is what
    a whole decode gives (the logger of that name)."""
    dump = {"aaa": {"rocksdb": counter}, **PERF_DUMP}
    text = json.dumps(dump)
    assert json_members.members(text, WANTED) == {name: dump[name] for name in WANTED}


@COUNTERS
def test_loggers_out_of_cephs_order_are_found_and_a_counter_named_like_one_still_gives_up(counter: object) -> None:
    backwards = dict(reversed(list(PERF_DUMP.items())))
    text = json.dumps(backwards)
    assert json_members.members(text, WANTED) == {name: PERF_DUMP[name] for name in WANTED}
    with_counter = json.dumps({**backwards, "zzz": {"rocksdb": counter}})  # after every logger: found first
    assert json_members.members(with_counter, WANTED) is None


@pytest.mark.parametrize("text", ["[1, 2]", '"osd"', "null", '{"osd": [1]}'])
def test_what_is_not_an_object_of_loggers_is_decoded_whole(text: str) -> None:
    assert json_members.members(text, WANTED) is None
    assert json_members.loads(text, WANTED) == json.loads(text)


def test_the_collector_reads_the_same_with_either_decoding() -> None:
    whole = counters.osd_row(PERF_DUMP, {"mempool": {"by_pool": {}}})
    part = counters.osd_row(json_members.loads(COMPACT, WANTED), {"mempool": {"by_pool": {}}})
    assert whole == part
