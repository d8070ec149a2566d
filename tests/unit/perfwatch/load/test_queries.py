"""The module's OSD perf queries (load attribution): what they ask, checked before sending; and the owner's lifecycle
against a stand-in for the mgr's three calls (which answer as the mgr's C++ does: an id or None)."""

from __future__ import annotations

from typing import Any

import pytest

from perfwatch.load import queries
from perfwatch.load.attribution import LoadAttribution
from perfwatch.load.owner import REASON_INVALID, REASON_LOST, REASON_REFUSED, QueryOwner


class Log:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def __getattr__(self, level: str) -> Any:
        return lambda msg, *a: self.lines.append(f"{level}: " + (msg % a if a else msg))


class Mgr:
    """add/remove/get as ceph-mgr answers them: ids from a counter, None for a refused query or an unknown id."""

    def __init__(self) -> None:
        self.queries: dict[int, dict] = {}
        self.next_id = 0
        self.refuse = False
        self.answers: dict[int, dict] = {}
        self.store: dict[str, str] = {}

    def get_store(self, key: str) -> str | None:
        return self.store.get(key)

    def set_store(self, key: str, value: str) -> None:
        self.store[key] = value

    def kinds(self) -> list[str]:
        """What the OSDs were last sent, as query names (the mgr sends its whole set at each change)."""
        return sorted(
            "tombstone" if q == queries.tombstone_query() else "clients" if "limit" in q else "pools"
            for q in self.queries.values()
        )

    def add_osd_perf_query(self, query: dict) -> int | None:
        if self.refuse:
            return None
        self.next_id += 1
        self.queries[self.next_id] = query
        return self.next_id

    def remove_osd_perf_query(self, query_id: int) -> None:
        self.queries.pop(query_id, None)

    def get_osd_perf_counters(self, query_id: int) -> dict | None:
        if query_id not in self.queries:
            return None
        return self.answers.pop(query_id, {"counters": []})


def test_the_queries_are_fit_to_send_anchored_with_a_group_and_a_limit_of_at_least_one() -> None:
    assert queries.problems(queries.pool_query()) == []
    assert queries.problems(queries.client_query(16)) == []
    assert queries.client_query(16)["limit"] == {"order_by": "ops", "max_count": 16}
    assert [k["type"] for k in queries.client_query(1)["key_descriptor"]] == ["client_id", "pool_id", "osd_id"]
    assert set(queries.wanted(True, 16)) == {queries.POOLS, queries.CLIENTS}
    assert set(queries.wanted(True, 0)) == {queries.POOLS}, "load_client_sample 0: no client query"
    assert queries.wanted(False, 16) == {}


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda q: q["key_descriptor"][0].update(regex="^[0-9]+$"), "no capture group"),
        (lambda q: q["key_descriptor"][0].update(regex="([0-9]+)"), "not anchored"),
        (lambda q: q["key_descriptor"][0].update(regex="^(?P<id>[0-9]+)$"), "ECMAScript lacks"),
        (lambda q: q["key_descriptor"][0].update(regex="^(?i)(a)$"), "ECMAScript lacks"),
        (lambda q: q["key_descriptor"][0].update(regex="^(([0-9]+)$"), "does not compile"),
        (lambda q: q["key_descriptor"][0].update(type="client_name"), "not one of"),
        (lambda q: q["key_descriptor"].clear(), "no key_descriptor"),
        (lambda q: q["performance_counter_descriptors"].append("iops"), "counter 'iops'"),
        (lambda q: q["limit"].update(max_count=0), "max_count 0"),
        (lambda q: q["limit"].update(max_count=True), "max_count True"),
        (lambda q: q["limit"].update(max_count=5000), "max_count 5000"),
        (lambda q: q["limit"].update(order_by="bytes"), "not one of the query's counters"),
        (lambda q: q.update(extra=1), "unknown fields"),
    ],
)
def test_a_query_the_mgr_or_an_osd_would_refuse_or_suffer_is_caught_before_sending(change: Any, said: str) -> None:
    query = queries.client_query(16)
    change(query)
    assert any(said in p for p in queries.problems(query)), queries.problems(query)


def test_the_owner_registers_what_is_wanted_polls_and_removes_the_rest() -> None:
    mgr, log, now = Mgr(), Log(), [100.0]
    owner = QueryOwner(mgr, log, clock=lambda: now[0])
    owner.sync(queries.wanted(True, 16))
    assert set(owner.registered) == {"clients", "pools"} and len(mgr.queries) == 2
    owner.sync(queries.wanted(True, 16))
    assert len(mgr.queries) == 2 and mgr.next_id == 2, "the same wish registers nothing again"
    mgr.answers[owner.registered["pools"]] = {"counters": [{"k": [["1"], ["0"]], "c": [[1, 0]] * 7}]}
    now[0] = 160.0
    polled = owner.poll()
    assert polled["pools"] == (60, {"counters": [{"k": [["1"], ["0"]], "c": [[1, 0]] * 7}]})
    assert polled["clients"] == (60, {"counters": []})
    now[0] = 190.0
    assert owner.poll()["pools"][0] == 30, "each window starts at the last ask"
    owner.sync(queries.wanted(True, 32))  # the limit changed: the client query is replaced
    assert mgr.queries[owner.registered["clients"]]["limit"]["max_count"] == 32 and len(mgr.queries) == 2
    owner.sync(queries.wanted(False, 32))
    assert mgr.kinds() == ["tombstone"] and set(owner.registered) == {"tombstone"}


def test_a_refused_or_lost_query_is_counted_and_tried_again_and_none_after_close() -> None:
    mgr, log = Mgr(), Log()
    owner = QueryOwner(mgr, log)
    mgr.refuse = True
    owner.sync(queries.wanted(True, 16))
    assert owner.registered == {} and owner.errors == {("clients", REASON_REFUSED): 1, ("pools", REASON_REFUSED): 1}
    mgr.refuse = False
    owner.sync(queries.wanted(True, 16))
    assert set(owner.registered) == {"clients", "pools"}
    mgr.queries.clear()  # a mgr that forgot them
    assert owner.poll() == {} and owner.registered == {}
    assert owner.errors[("pools", REASON_LOST)] == 1
    owner.sync(queries.wanted(True, 16))
    assert len(mgr.queries) == 2
    owner.close()
    assert mgr.kinds() == ["tombstone"]
    owner.sync(queries.wanted(True, 16))
    assert mgr.kinds() == ["tombstone"], "after shutdown no query is registered again"


def test_an_invalid_query_is_never_sent_and_an_exception_from_the_mgr_is_a_refusal() -> None:
    mgr, log = Mgr(), Log()
    owner = QueryOwner(mgr, log)
    bad = queries.pool_query()
    bad["key_descriptor"][0]["regex"] = "^[0-9]+$"
    owner.sync({"pools": bad})
    assert mgr.next_id == 0 and owner.errors == {("pools", REASON_INVALID): 1}
    assert any("no capture group" in line for line in log.lines)

    def boom(query: dict) -> int:
        raise SystemError("error return without exception set")

    mgr.add_osd_perf_query = boom  # type: ignore[method-assign]
    owner.sync({"pools": queries.pool_query()})
    assert owner.errors[("pools", REASON_REFUSED)] == 1 and owner.registered == {}


def test_the_tombstone_takes_the_place_of_our_last_query_on_the_osds_and_only_then() -> None:
    """An OSD ignores an empty query set (seen on Pacific 16.2.15: after the last query was removed, the OSD
    logged no new `setting N queries`), so removing our last query would leave it in every OSD's I/O path."""
    mgr, log = Mgr(), Log()
    assert queries.problems(queries.tombstone_query()) == []
    owner = QueryOwner(mgr, log)
    owner.sync({})
    assert mgr.kinds() == [], "a cluster that never had our queries gets no tombstone either"
    owner.sync(queries.wanted(True, 16))
    assert mgr.kinds() == ["clients", "pools"] and mgr.store["load/queries_on_osds"] == "1"
    owner.sync({})
    assert mgr.kinds() == ["tombstone"] and mgr.store["load/queries_on_osds"] == "0"
    assert "tombstone" not in owner.poll(), "it counts nothing: never asked"
    owner.sync(queries.wanted(True, 0))
    assert mgr.kinds() == ["pools"], "one of ours back: the tombstone goes"


def test_a_later_mgr_that_wants_no_query_puts_the_tombstone_where_an_earlier_one_left_ours() -> None:
    """A disable or a failover respawns the mgr without shutdown: the next active mgr reads the store."""
    mgr = Mgr()
    QueryOwner(mgr, Log()).sync(queries.wanted(True, 16))
    after_respawn = Mgr()
    after_respawn.store = dict(mgr.store)
    QueryOwner(after_respawn, Log()).sync({})
    assert after_respawn.kinds() == ["tombstone"] and after_respawn.store["load/queries_on_osds"] == "0"
    refused = Mgr()
    refused.store, refused.refuse = dict(mgr.store), True
    owner = QueryOwner(refused, Log())
    owner.sync({})
    assert refused.store["load/queries_on_osds"] == "1", "not placed: tried again at the next sync"
    refused.refuse = False
    owner.sync({})
    assert refused.kinds() == ["tombstone"]


def test_shutdown_leaves_the_marker_so_the_next_mgr_places_the_tombstone() -> None:
    """At the mgr's shutdown its messenger may already be down: the OSDs may never hear of the removals."""
    mgr = Mgr()
    owner = QueryOwner(mgr, Log())
    owner.sync(queries.wanted(True, 16))
    owner.close()
    assert mgr.store["load/queries_on_osds"] == "1"


def test_a_refusal_is_logged_as_an_error_once_then_at_debug_level() -> None:
    mgr, log = Mgr(), Log()
    mgr.refuse = True
    owner = QueryOwner(mgr, log)
    for _ in range(3):
        owner.sync(queries.wanted(True, 0))
    assert [line.split(":")[0] for line in log.lines if "refused" in line] == ["error", "debug", "debug"]


def answer_for(pool: str, osd: str, writes: int) -> dict:
    return {"counters": [{"k": [[pool], [osd]], "c": [[writes, 0], [writes, 0]] + [[0, 0]] * 5}]}


def test_a_window_shorter_than_three_reports_is_not_asked_and_a_failed_tick_exports_nothing_stale() -> None:
    mgr, now = Mgr(), [0.0]
    load = LoadAttribution(QueryOwner(mgr, Log(), clock=lambda: now[0]), lambda: {1: "rbd"}, Log())
    opts = {"load_attribution": True, "load_client_sample": 0, "load_top_clients": 10, "load_top_per_osd": 2,
            "load_osd_series_max": 1000}  # fmt: skip
    load.tick(opts)  # registers
    mgr.answers[load.owner.registered["pools"]] = answer_for("1", "0", 300)
    now[0] = 30.0
    load.tick(opts)
    assert load.last.seconds == 30.0 and ("load_pool_ops", 10.0) in [(s.family, s.value) for s in load.samples()]
    now[0] = 31.0  # a `config set` woke the loop a second later: 1 s would swing with the reports caught
    load.tick(opts)
    assert load.last.seconds == 30.0, "the last full window is kept, the queries count on"
    now[0] = 60.0

    def broken() -> dict:
        raise RuntimeError("osd_map unreadable")

    load._pool_names = broken  # type: ignore[method-assign]
    with pytest.raises(RuntimeError):
        load.tick(opts)
    assert load.samples() == [] and load.last.pools == {}


class CountingMgr(Mgr):
    """Every query counted 100 ops of pool 1 on osd.0 (client.42's, for the client query) since last asked."""

    def __init__(self) -> None:
        super().__init__()
        self.fail_next = False

    def get_osd_perf_counters(self, query_id: int) -> dict | None:
        if self.fail_next:
            self.fail_next = False
            raise RuntimeError("transient")
        if query_id not in self.queries:
            return None
        key = [["client.42"], ["1"], ["0"]] if "limit" in self.queries[query_id] else [["1"], ["0"]]
        return {"counters": [{"k": key, "c": [[100, 0]] * len(queries.COUNTERS)}]}


def test_a_query_added_later_is_asked_with_the_others_and_the_clients_keep_coming() -> None:
    """Every registered query is asked on the same pass: with a 10 s pass, a client query added again later
    (its limit changed) stays in step with the pool query, and client series keep coming."""
    mgr, log, now = CountingMgr(), Log(), [0.0]
    load = LoadAttribution(QueryOwner(mgr, log, clock=lambda: now[0]), lambda: {1: "rbd"}, log)
    opts = {"load_attribution": True, "load_client_sample": 16, "load_top_clients": 10, "load_top_per_osd": 2,
            "load_osd_series_max": 20000}  # fmt: skip
    with_clients = []
    for t in (0, 10, 20, 30, 33, 43, 53, 63, 73, 83, 93):
        now[0] = float(t)
        opts["load_client_sample"] = 32 if t >= 33 else 16
        load.tick(opts)
        if t >= 43:
            with_clients.append(bool(load.last.clients) and load.last.client_limit == 32)
    assert all(with_clients), with_clients
    assert any(s.family == "load_client_ops" for s in load.samples())


def test_a_query_whose_counts_could_not_be_asked_keeps_its_id_and_nothing_leaks() -> None:
    """A raising get_osd_perf_counters leaves the query's id kept and counted unanswered: the query is not
    registered again beside it, and turning attribution off leaves only the tombstone on the mgr."""
    mgr, log = CountingMgr(), Log()
    owner = QueryOwner(mgr, log)
    owner.sync(queries.wanted(True, 16))
    ids = dict(owner.registered)
    mgr.fail_next = True
    owner.poll()
    owner.sync(queries.wanted(True, 16))
    assert owner.registered == ids and len(mgr.queries) == 2, "kept, not registered again"
    assert owner.errors == {("clients", "unanswered"): 1}
    owner.sync(queries.wanted(False, 16))
    assert mgr.kinds() == ["tombstone"]
