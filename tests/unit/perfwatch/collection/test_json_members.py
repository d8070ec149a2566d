"""json_members: the loggers of a perf dump decoded alone are what a whole decode gives, or it gives up."""

import json
import random
from typing import Any

import pytest

from perfwatch.collection import json_members
from perfwatch.common.daemon_counters import counters
from tests.unit.fakes import PERF_DUMP

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
    [7, {"avgcount": 1, "sum": 0.5, "avgtime": 0.5}, {}, {"x": 2}],
    ids=["number", "average", "empty object", "another object"],
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


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ('{"b": {"k": 1}, "a": {"c": 1}, "z": {"b": {"x": 2}}}', ("a", "b")),  # "b" before "a", and in "z"
        (json.dumps(dict(sorted({**PERF_DUMP, "osdz": {"x": {"rocksdb": {"k": 1}}}}.items()))), WANTED),
        ('{"x": {"}": 1, "osd": {"k": 1}}, "osd": {"z": 2}}', ("osd",)),  # counting braces would be fooled
        ('{"x": ["{", {"osd": {"k": 1}}], "osd": {"z": 2}}', ("osd",)),
    ],
    ids=["out of order", "deeper than a counter", "a brace in a key", "in an array"],
)
def test_a_key_in_another_member_is_not_taken_for_the_logger(text: str, names: tuple[str, ...]) -> None:
    assert json_members.members(text, names) is None
    assert json_members.loads(text, names) == json.loads(text)


@pytest.mark.parametrize("before", ['a"', 'a\\"', 'a\\\\"'], ids=["1", "3", "5"])
def test_a_key_that_ends_a_longer_key_is_not_taken_for_the_logger(before: str) -> None:
    """`"osd":` found as the end of the key `a\\"osd` (an escaped quote after any run of backslashes)."""
    dump = {before + "osd": {"k": 1}, **PERF_DUMP}
    text = json.dumps(dump)
    assert text.index('"osd":') < text.index('"osd": {"op_wip"')
    assert json_members.members(text, WANTED) is None
    assert json_members.loads(text, WANTED) == dump


def test_whatever_json_it_is_given_it_gives_what_a_whole_decode_gives_or_gives_up() -> None:
    """Loggers named like keys within others, keys holding quotes, backslashes and brackets, in any order."""
    rng = random.Random(5)
    keys = ["a", "b", "c:d", "x", "{", "]", '"b":', "\\", "a\\", 'q"a', "é"]

    def value(depth: int) -> Any:
        if depth > 4 or rng.random() < 0.3:
            return rng.choice([1, 2.5, "a", '"b":{', "}", None, [], {}])
        if rng.random() < 0.2:
            return [value(depth + 1) for _ in range(rng.randint(0, 3))]
        return {rng.choice(keys): value(depth + 1) for _ in range(rng.randint(0, 4))}

    given = 0
    for _ in range(3000):
        names = rng.sample(["a", "b", "c:d"], rng.randint(1, 3))
        dump = {key: value(1) for key in rng.sample(keys, rng.randint(1, 6))}
        dump.update({name: {rng.choice(keys): value(2)} for name in names if rng.random() < 0.9})
        items = sorted(dump.items()) if rng.random() < 0.5 else rng.sample(list(dump.items()), len(dump))
        text = "{" + ", ".join(json.dumps(k) + ": " + json.dumps(v) for k, v in items) + "}"
        got = json_members.members(text, names)
        if got is not None:
            given += 1
            assert got == {name: dump.get(name) for name in names}, text
    assert given > 300


@pytest.mark.parametrize("text", ["[1, 2]", '"osd"', "null", '{"osd": [1]}'])
def test_what_is_not_an_object_of_loggers_is_decoded_whole(text: str) -> None:
    assert json_members.members(text, WANTED) is None
    assert json_members.loads(text, WANTED) == json.loads(text)


def test_the_collector_reads_the_same_with_either_decoding() -> None:
    whole = counters.osd_row(PERF_DUMP)
    part = counters.osd_row(json_members.loads(COMPACT, counters.OSD_LOGGERS))
    assert whole == part and whole.mempools and not whole.missing
