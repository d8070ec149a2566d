"""Whose load, the pure part: a perf query answer as rates per pool, per client and per OSD, its
busiest pools and clients within the series bound, and `perfwatch top`."""

from __future__ import annotations

import pytest

from perfwatch.collection.module_families import MODULE_REGISTRY
from perfwatch.common.exposition import render
from perfwatch.load import tally, top_rows
from perfwatch.load.load_samples import Limits, samples, state_samples
from perfwatch.load.queries import COUNTERS

NAMES = {1: "rbd", 2: "rbd-db", 3: "cephfs.data"}


def pairs(
    w_ops: float,
    r_ops: float,
    w_bytes: float = 0,
    r_bytes: float = 0,
    w_ns: float = 0,
    r_ns: float = 0,
    ops: float | None = None,
) -> list:
    """The "c" of one key, in COUNTERS order: [value, 0] and [latency sum in ns, ops]. ops: all ops, each
    once (fewer than w_ops + r_ops when some both read and write)."""
    value = {"ops": w_ops + r_ops if ops is None else ops, "write_ops": w_ops, "read_ops": r_ops}
    value.update(write_bytes=w_bytes, read_bytes=r_bytes)
    latency = {"write_latency": [w_ns, w_ops], "read_latency": [r_ns, r_ops]}
    return [latency[c] if c in latency else [value[c], 0] for c in COUNTERS]


def answer(*entries: tuple) -> dict:
    return {"counters": [{"k": [[part] for part in key], "c": c} for key, c in entries]}


def window(seconds: float = 10.0, limit: int = 16) -> tally.Window:
    pools = answer(
        (("2", "7"), pairs(820, 0, 820 * 4096, 0, 820 * 2e6)),  # osd.7: rbd-db writes, 2 ms each
        (("1", "7"), pairs(100, 80, 100 * 4096, 80 * 4096)),
        (("3", "7"), pairs(0, 0)),
        (("1", "3"), pairs(10, 10)),
        (("9", "3"), pairs(5, 0)),  # a pool deleted since: no name
        (("x", "3"), pairs(5, 0)),  # not a pool id
    )
    clients = answer(
        (("client.4121", "2", "7"), pairs(800, 0, 800 * 4096)),
        (("client.4122", "1", "7"), pairs(100, 80)),
        (("client.4121", "2", "3"), pairs(1, 0)),
    )
    return tally.window(seconds, tally.parse(pools), seconds, tally.parse(clients), limit)


def by_name(found: list, family: str) -> dict:
    return {tuple(v for _, v in s.labels): s.value for s in found if s.family == family}


def test_an_answer_becomes_rates_per_pool_client_and_osd_and_the_busiest_first() -> None:
    found, left_out = samples(window(), NAMES, Limits(top_clients=10, top_per_osd=1, osd_series_max=1000))
    assert left_out == 0
    assert by_name(found, "load_pool_ops")[("rbd-db", "write")] == pytest.approx(82.0)
    assert by_name(found, "load_pool_bytes")[("rbd", "read")] == pytest.approx(80 * 4096 / 10)
    assert by_name(found, "load_pool_latency_seconds")[("rbd-db", "write")] == pytest.approx(0.002)
    assert ("rbd-db", "read") not in by_name(found, "load_pool_latency_seconds"), "no ops, no latency"
    assert {k[0] for k in by_name(found, "load_pool_ops")} == {"rbd", "rbd-db", "cephfs.data"}, "no unnamed pool"
    assert by_name(found, "load_client_ops")[("client.4121", "write")] == pytest.approx(80.1)
    assert by_name(found, "load_osd_ops")[("osd.7", "write")] == pytest.approx(92.0)
    assert by_name(found, "load_osd_pool_ops") == {
        ("osd.7", "rbd-db", "write"): 82.0,
        ("osd.7", "rbd-db", "read"): 0.0,
        ("osd.3", "rbd", "write"): 1.0,
        ("osd.3", "rbd", "read"): 1.0,
    }
    assert {k[:2] for k in by_name(found, "load_osd_client_ops")} == {
        ("osd.7", "client.4121"),
        ("osd.3", "client.4121"),
    }
    assert by_name(found, "load_window_seconds") == {(): 10.0}
    assert by_name(found, "load_osds_without_series") == {(): 0.0}
    assert by_name(found, "load_clients_sampled_osds") == {(): 0.0}
    text = render(
        MODULE_REGISTRY, found + state_samples({"pools": 1}, ["clients", "pools"], {("clients", "refused"): 2})
    )
    assert 'ceph_perfwatch_load_queries{query="clients"} 0' in text
    assert 'ceph_perfwatch_load_query_errors_total{query="clients",reason="refused"} 2' in text


def test_the_per_osd_series_stay_within_their_bound_the_busiest_osds_keep_theirs() -> None:
    # osd.7: totals + 1 pool + 1 client = 12 series; osd.3 would need 12 more
    found, left_out = samples(window(), NAMES, Limits(top_clients=10, top_per_osd=1, osd_series_max=20))
    assert left_out == 1 and {k[0] for k in by_name(found, "load_osd_ops")} == {"osd.7"}
    assert by_name(found, "load_osds_without_series") == {(): 1.0}
    per_osd = [s for s in found if s.labels and s.labels[0][0] == "ceph_daemon"]
    assert len(per_osd) == 12
    none, left_out = samples(window(), NAMES, Limits(top_clients=0, top_per_osd=0, osd_series_max=0))
    assert left_out == 2 and not [s for s in none if s.labels and s.labels[0][0] in ("ceph_daemon", "client")]


def test_an_osd_that_counted_more_keys_than_the_limit_makes_client_figures_approximate() -> None:
    found, _ = samples(window(limit=2), NAMES, Limits(10, 2, 1000))
    assert by_name(found, "load_clients_sampled_osds") == {(): 0.0}, "osd.7 counted 2 keys: the OSD samples above 2"
    found, _ = samples(window(limit=1), NAMES, Limits(10, 2, 1000))
    assert by_name(found, "load_clients_sampled_osds") == {(): 1.0}
    assert top_rows.rows(window(limit=1), NAMES, "client")["sampled"] is True
    assert top_rows.rows(window(limit=2), NAMES, "client")["sampled"] is False


def test_ops_that_both_read_and_write_count_once_in_shares_and_rankings() -> None:
    """An RGW index class call or an RBD object-map update is a read and a write: Ceph's `ops` counts it
    once. Pool 1 has 100 such ops, pool 2 100 plain writes: each is half the load, not two thirds and one."""
    pools = answer((("1", "0"), pairs(100, 100, ops=100)), (("2", "0"), pairs(100, 0)))
    win = tally.window(10.0, tally.parse(pools), 10.0, {}, 0)
    assert [r["ops_share"] for r in top_rows.rows(win, NAMES, "pool")["rows"]] == [0.5, 0.5]
    found, _ = samples(win, NAMES, Limits(0, 2, 1000))
    assert by_name(found, "load_osd_ops")[("osd.0", "write")] == 20.0, "writes per second, as counted"


def test_malformed_answers_are_skipped_not_raised() -> None:
    assert tally.parse(None) == {} and tally.parse({}) == {} and tally.parse({"counters": None}) == {}
    bad = {"counters": [{"k": [["1"]], "c": [[1]]}, {"k": "x"}, {"c": []}, {"k": [["1"], ["2"]], "c": pairs(1, 2)}]}
    assert tally.parse(bad) == {("1", "2"): tally.Counts(1.0, 2.0, 0.0, 0.0, 0.0, 0.0, 3.0)}
    twice = answer((("1", "2"), pairs(1, 0)), (("1", "2"), pairs(2, 0)))
    assert tally.parse(twice)[("1", "2")].write_ops == 3.0


def test_top_shows_the_busiest_first_for_the_cluster_an_osd_or_a_pool() -> None:
    report = top_rows.rows(window(), NAMES, "pool")
    assert [r["name"] for r in report["rows"]] == ["rbd-db", "rbd", "pool 9"] and report["window_seconds"] == 10.0
    assert report["rows"][0]["write_ops"] == 82.0 and report["rows"][0]["write_latency_ms"] == 2.0
    assert [r["name"] for r in top_rows.rows(window(), NAMES, "pool", osd=3)["rows"]] == ["rbd", "pool 9"]
    clients = top_rows.rows(window(), NAMES, "client", pool="rbd-db")
    assert [r["name"] for r in clients["rows"]] == ["client.4121"] and clients["rows"][0]["ops_share"] == 1.0
    text = top_rows.render_plain(top_rows.rows(window(), NAMES, "client", osd=7))
    assert "client.4121" in text.splitlines()[2] and "over the last 10 s" in text
    assert "no client I/O counted" in top_rows.render_plain(top_rows.rows(window(), NAMES, "pool", osd=99))


@pytest.mark.parametrize(
    ("by", "osd", "pool", "said"),
    [
        ("host", None, None, "accepted: pool or client"),
        ("pool", -1, None, "0 or more"),
        ("pool", None, "nosuch", "no such pool in the last window \\(pools: 'cephfs.data', 'rbd', 'rbd-db'\\)"),
    ],
)
def test_top_refuses_what_selects_nothing_and_says_what_is_accepted(by: str, osd: int | None, pool: str | None,
                                                                    said: str) -> None:  # fmt: skip
    with pytest.raises(top_rows.TopError, match=said):
        top_rows.rows(window(), NAMES, by, osd, pool)


def test_top_by_client_without_a_client_query_says_why() -> None:
    with pytest.raises(top_rows.TopError, match="load_client_sample is 0"):
        top_rows.rows(window(limit=0), NAMES, "client")


def test_thousands_of_clients_export_only_the_busiest_within_the_bounds() -> None:
    """5,000 clients on 3 OSDs: load_top_clients cluster-wide and load_top_per_osd per OSD, the busiest."""
    entries = [((f"client.{n}", "1", str(n % 3)), pairs(n, 0)) for n in range(1, 5001)]
    pools = answer((("1", "0"), pairs(1, 0)), (("1", "1"), pairs(1, 0)), (("1", "2"), pairs(1, 0)))
    win = tally.window(10.0, tally.parse(pools), 10.0, tally.parse(answer(*entries)), 16)
    found, _ = samples(win, NAMES, Limits(top_clients=10, top_per_osd=2, osd_series_max=20000))
    cluster = {k[0] for k in by_name(found, "load_client_ops")}
    assert cluster == {f"client.{n}" for n in range(4991, 5001)}
    per_osd = {k[:2] for k in by_name(found, "load_osd_client_ops")}
    assert per_osd == {
        ("osd.0", "client.4998"), ("osd.0", "client.4995"),
        ("osd.1", "client.4999"), ("osd.1", "client.4996"),
        ("osd.2", "client.5000"), ("osd.2", "client.4997"),
    }  # fmt: skip
    assert len(found) < 200


@pytest.mark.parametrize(
    ("what", "entry"),
    [
        ("a pool id of a digit Python's isdigit takes but int refuses", {"k": [["²"], ["0"]], "c": pairs(10, 0)}),
        ("sub-keys as strings, not lists of groups", {"k": ["17", "03"], "c": pairs(10, 0)}),
        ("a negative counter", {"k": [["1"], ["0"]], "c": [[-50, 0]] * len(COUNTERS)}),
        ("a NaN counter", {"k": [["1"], ["0"]], "c": [["nan", 0]] * len(COUNTERS)}),
        ("an id with a leading zero", {"k": [["01"], ["0"]], "c": pairs(10, 0)}),
    ],
)
def test_a_hostile_entry_is_skipped_and_the_others_still_count(what: str, entry: dict) -> None:
    good = {"k": [["2"], ["1"]], "c": pairs(5, 0)}
    win = tally.window(10.0, tally.parse({"counters": [entry, good]}), 10.0, {}, 0)
    assert win.pools == {(2, 1): tally.parse({"counters": [good]})[("2", "1")]}, what


def test_top_shows_a_pool_name_with_control_characters_escaped() -> None:
    names = {**NAMES, 2: "evil\n\x1b[31mred"}
    text = top_rows.render_plain(top_rows.rows(window(), names, "pool"))
    assert "\x1b" not in text and "evil\\n\\x1b[31mred"[:24] in text
    assert len(text.splitlines()) == 2 + 3, "one line per row"


def test_top_before_any_window_checks_its_arguments_but_judges_no_pool_or_client_yet() -> None:
    quiet = top_rows.rows(tally.EMPTY, {}, "client", None, None, need_clients=False)
    assert quiet["rows"] == []
    with pytest.raises(top_rows.TopError, match="0 or more"):
        top_rows.rows(tally.EMPTY, {}, "pool", -1, None, need_clients=False)
