import gzip
import threading
import time

from prometheus_client.parser import text_string_to_metric_families

from perfwatch.benchmarks.measurement import Measurement
from perfwatch.benchmarks.records.store import BenchStore
from perfwatch.benchmarks.result_board import ResultBoard
from perfwatch.benchmarks.run import Run
from perfwatch.collection.collector import Collector, Settings
from perfwatch.commands.status_report import unavailable_report
from perfwatch.common.daemon_counters.fetch_reasons import REASONS
from tests.unit.fakes import FakeAdapter
from tests.unit.perfwatch.benchmarks.records.test_store import KV, Log

FAST = Settings(request_timeout=0.3, max_in_flight=4)


def parsed(collector: Collector) -> dict[str, list]:
    text = collector.cache.body(time.time(), compressed=False).decode()
    return {f.name: f.samples for f in text_string_to_metric_families(text)}


def by_daemon(samples: list, **labels: str) -> dict[str, float]:
    return {s.labels["ceph_daemon"]: s.value for s in samples if all(s.labels.get(k) == v for k, v in labels.items())}


def test_every_osd_gets_every_family_and_the_collector_reports_itself() -> None:
    collector = Collector(FakeAdapter(3))
    collector.collect(FAST)
    fams = parsed(collector)
    assert by_daemon(fams["ceph_perfwatch_bluestore_onode_hits"]).keys() == {"osd.0", "osd.1", "osd.2"}
    hits = by_daemon(fams["ceph_perfwatch_bluestore_onode_hits"])
    assert hits["osd.2"] - hits["osd.0"] == 2
    assert by_daemon(fams["ceph_perfwatch_daemon_up"]) == {"osd.0": 1, "osd.1": 1, "osd.2": 1}
    assert fams["ceph_perfwatch_collections"][0].value == 1
    assert fams["ceph_perfwatch_daemons_polled"][0].value == 3
    assert "ceph_perfwatch_cache_age_seconds" in fams


def test_a_timeout_and_a_down_osd_are_errors_and_the_others_still_update() -> None:
    adapter = FakeAdapter(4)
    adapter.hang.add(1)
    adapter.up[3] = False
    collector = Collector(adapter)
    collector.collect(FAST)
    collector.collect(FAST)
    fams = parsed(collector)
    errors = {(s.labels["ceph_daemon"], s.labels["reason"]): s.value for s in fams["ceph_perfwatch_fetch_errors"]}
    assert errors == {("osd.1", "timeout"): 2, ("osd.3", "down"): 2}
    assert {reason for _daemon, reason in errors} <= set(REASONS), "reason is a bounded label"
    assert by_daemon(fams["ceph_perfwatch_daemon_up"]) == {"osd.0": 1, "osd.1": 0, "osd.2": 1, "osd.3": 0}
    assert by_daemon(fams["ceph_perfwatch_bluestore_onode_hits"]).keys() == {"osd.0", "osd.2"}


def test_an_osd_answering_with_an_error_is_counted_with_that_reason() -> None:
    adapter = FakeAdapter(2)
    adapter.fail.add(0)
    collector = Collector(adapter)
    collector.collect(FAST)
    errors = {(s.labels["ceph_daemon"], s.labels["reason"]) for s in parsed(collector)["ceph_perfwatch_fetch_errors"]}
    assert errors == {("osd.0", "error")}


def test_requests_in_flight_never_exceed_the_bound() -> None:
    adapter = FakeAdapter(20, delay=0.02)
    Collector(adapter).collect(Settings(request_timeout=1, max_in_flight=3))
    assert adapter.calls == 20  # one perf dump each (its mempools are in it)
    assert adapter.max_in_flight_seen == 3


class StuckAdapter(FakeAdapter):
    """osd.0 never answers and ignores the timeout it is given (a bug the cycle's own deadline guards against)."""

    def tell_osd_text(self, osd_id: int, command: dict, timeout: float) -> str:
        if osd_id == 0:
            self.release.wait(30)
        return super().tell_osd_text(osd_id, command, timeout)


def test_an_osd_whose_adapter_ignores_its_timeout_is_a_timeout_after_the_request_timeout() -> None:
    """The collector keeps each OSD's deadline itself (one command, request_timeout): an adapter that never
    returns costs that OSD, not the cycle, and its place goes to the next OSD."""
    adapter = StuckAdapter(3)
    collector = Collector(adapter)
    started = time.monotonic()
    try:
        collector.collect(Settings(request_timeout=0.4, max_in_flight=1))  # one at a time: osd.0 first
    finally:
        adapter.release.set()
    assert 0.4 <= time.monotonic() - started < 3
    fams = parsed(collector)
    errors = {(s.labels["ceph_daemon"], s.labels["reason"]) for s in fams["ceph_perfwatch_fetch_errors"]}
    assert errors == {("osd.0", "timeout")}
    assert by_daemon(fams["ceph_perfwatch_daemon_up"]) == {"osd.0": 0, "osd.1": 1, "osd.2": 1}


def test_the_cache_answers_at_once_while_a_slow_cycle_runs() -> None:
    adapter = FakeAdapter(2)
    collector = Collector(adapter)
    collector.collect(FAST)
    before = collector.cache.get()
    adapter.hang.add(0)  # the next cycle waits the full timeout for osd.0
    cycle = threading.Thread(target=collector.collect, args=(Settings(request_timeout=1.0, max_in_flight=2),))
    cycle.start()
    time.sleep(0.1)
    t0 = time.monotonic()
    during = collector.cache.get()
    body = collector.cache.body(time.time(), compressed=True)
    waited = time.monotonic() - t0
    cycle.join()
    assert during is before, "a scrape during a cycle is served the previous cycle's data"
    assert waited < 0.5, f"a read of the cache waited {waited:.3f} s for the cycle"
    assert gzip.decompress(body).startswith(before.text)
    assert collector.cache.get() is not before


def test_gzip_body_is_two_members_that_decode_to_the_plain_body() -> None:
    collector = Collector(FakeAdapter(1))
    collector.collect(FAST)
    now = time.time()
    assert gzip.decompress(collector.cache.body(now, True)) == collector.cache.body(now, False)


def test_rgw_counters_are_exported_per_daemon() -> None:
    adapter = FakeAdapter(1)
    adapter.rgw = {"rgw.4163": {"rgw.req": {"value": 5}, "rgw.qlen": {"value": 1}}}
    collector = Collector(adapter)
    collector.collect(FAST)
    fams = parsed(collector)
    assert by_daemon(fams["ceph_perfwatch_rgw_requests"]) == {"rgw.4163": 5}
    assert by_daemon(fams["ceph_perfwatch_daemon_up"])["rgw.4163"] == 1


def test_table_values_follow_the_latest_cycle() -> None:
    adapter = FakeAdapter(2)
    collector = Collector(adapter)
    collector.collect(FAST)
    assert set(collector.latest) == {"osd.0", "osd.1"}
    adapter.hang.add(1)
    collector.collect(FAST)
    assert set(collector.latest) == {"osd.0"}
    assert "osd.1" in collector.last_success  # still known, with its last good time


def test_counters_a_release_lacks_are_exported_as_unavailable_and_in_the_report() -> None:
    adapter = FakeAdapter(1)
    adapter.rgw = {"rgw.4148": {"rgw.req": {"value": 5}}}  # Reef: no list latency anywhere
    collector = Collector(adapter)
    collector.collect(FAST)
    fams = parsed(collector)
    unavailable = {(s.labels["ceph_daemon"], s.labels["counter"]) for s in fams["ceph_perfwatch_counters_unavailable"]}
    assert ("rgw.4148", "rgw_op.list_obj_lat") in unavailable
    assert ("osd.0", "rocksdb.compact_completed") in unavailable  # the fake OSDs are Pacific
    assert all(s.value == 0 for s in fams["ceph_perfwatch_counters_missing"])
    report = unavailable_report(collector.unavailable)
    assert report["rgw_op.list_obj_lat"]["daemons"] == ["rgw.4148"]
    assert "Tentacle" in str(report["rgw_op.list_obj_lat"]["releases"])


def test_each_osds_addresses_are_exported_and_a_failure_to_read_them_ends_no_cycle() -> None:
    from perfwatch.ceph.osd_networks import OsdNetwork

    adapter = FakeAdapter(2)
    adapter.osd_networks = lambda: [  # type: ignore[method-assign]
        OsdNetwork(0, "public", "198.18.0.11", "eth0"),
        OsdNetwork(0, "cluster", "198.19.0.11", "eth1"),
    ]
    collector = Collector(adapter)
    collector.collect(FAST)
    rows = {(s.labels["ceph_daemon"], s.labels["network"], s.labels["address"], s.labels["iface"]): s.value
            for s in parsed(collector)["ceph_perfwatch_osd_network_info"]}  # fmt: skip
    assert rows == {("osd.0", "public", "198.18.0.11", "eth0"): 1.0, ("osd.0", "cluster", "198.19.0.11", "eth1"): 1.0}

    def broken() -> list:
        raise KeyError("osd_metadata")

    adapter.osd_networks = broken  # type: ignore[method-assign]
    collector.collect(FAST)
    fams = parsed(collector)
    assert "ceph_perfwatch_osd_network_info" not in fams or not fams["ceph_perfwatch_osd_network_info"]
    assert fams["ceph_perfwatch_collections"][0].value == 2


def test_with_the_exporters_reading_the_counters_no_osd_is_asked_and_no_osd_counter_is_exported() -> None:
    adapter = FakeAdapter(3)
    collector = Collector(adapter)
    collector.collect(Settings(request_timeout=0.3, max_in_flight=4, read_osds=False))
    fams = parsed(collector)
    assert adapter.calls == 0
    assert "ceph_perfwatch_bluestore_onode_hits" not in fams and "ceph_perfwatch_daemon_up" not in fams
    assert fams["ceph_perfwatch_collections"][0].value == 1  # it still collects the rest, and says so
    # back to the module: every OSD again
    collector.collect(FAST)
    assert adapter.calls == 3 and by_daemon(parsed(collector)["ceph_perfwatch_daemon_up"]) == {
        "osd.0": 1, "osd.1": 1, "osd.2": 1
    }  # fmt: skip


# ----- the collection's rows, columns and worker pool at their edges ---------------------------------------


def test_per_osd_and_cluster_wide_results_of_one_unit_render_as_one_family() -> None:
    """A rados probe's per-OSD latencies come as a column, an rbd round's cluster-wide one as a sample of
    the same family: both in one family, and the cycle does not fail."""
    kv = KV()
    board = ResultBoard(BenchStore(kv.get, kv.put, 50, 10, Log()))
    for kind, heavy, osd, value in (("rados", False, 0, 0.002), ("rbd", True, None, 0.004)):
        run = Run(f"{kind}-20240501T120000-0000", kind, heavy, {}, [0], "command")
        run.measurements = [Measurement(kind, "write_latency", osd, value, "seconds")]
        board.on_finished(run)
    collector = Collector(FakeAdapter(1), extra_samples=lambda: board.exposition({}, 1))
    collector.collect(FAST)
    latencies = parsed(collector)["ceph_perfwatch_bench_latency_seconds"]
    assert sorted((s.labels.get("ceph_daemon", "-"), s.labels["kind"], s.value) for s in latencies) == [
        ("-", "rbd", 0.004),
        ("osd.0", "rados", 0.002),
    ]


class DyingAdapter(FakeAdapter):
    """osd.0's request ends in what is not an Exception (SystemExit, a greenlet's exit, ...)."""

    def tell_osd_text(self, osd_id: int, command: dict, timeout: float) -> str:
        if osd_id == 0:
            raise SystemExit("gone")
        return super().tell_osd_text(osd_id, command, timeout)


def test_a_request_ended_by_a_base_exception_fails_that_osd_alone_and_at_once() -> None:
    collector = Collector(DyingAdapter(3))
    started = time.monotonic()
    collector.collect(Settings(request_timeout=0.05, max_in_flight=1))  # one worker: it must go on
    assert time.monotonic() - started < 3
    fams = parsed(collector)
    assert by_daemon(fams["ceph_perfwatch_daemon_up"]) == {"osd.0": 0, "osd.1": 1, "osd.2": 1}
    errors = {(s.labels["ceph_daemon"], s.labels["reason"]) for s in fams["ceph_perfwatch_fetch_errors"]}
    assert errors == {("osd.0", "error")}


class TwiceListedAdapter(FakeAdapter):
    def osds(self) -> list[tuple[int, bool]]:
        return [(0, True), (1, False), (1, True), (0, True)]


def test_an_osd_listed_twice_is_read_once_and_the_cycle_ends_at_once() -> None:
    collector = Collector(TwiceListedAdapter(2))
    started = time.monotonic()
    collector.collect(Settings(request_timeout=0.05, max_in_flight=4))
    assert time.monotonic() - started < 3
    up = [s for s in parsed(collector)["ceph_perfwatch_daemon_up"]]
    assert sorted((s.labels["ceph_daemon"], s.value) for s in up) == [("osd.0", 1), ("osd.1", 1)]


class CutAdapter(FakeAdapter):
    """osd.0's perf dump comes cut short before its `osd` logger."""

    def tell_osd_text(self, osd_id: int, command: dict, timeout: float) -> str:
        text = super().tell_osd_text(osd_id, command, timeout)
        return text[: text.index('"osd":')] if osd_id == 0 and command["prefix"] == "perf dump" else text


def test_a_perf_dump_cut_short_is_a_decode_error_not_an_osd_lacking_counters() -> None:
    collector = Collector(CutAdapter(2))
    collector.collect(FAST)
    fams = parsed(collector)
    assert by_daemon(fams["ceph_perfwatch_daemon_up"]) == {"osd.0": 0, "osd.1": 1}
    errors = {(s.labels["ceph_daemon"], s.labels["reason"]) for s in fams["ceph_perfwatch_fetch_errors"]}
    assert errors == {("osd.0", "decode")}
