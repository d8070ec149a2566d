"""--daemon-counters: the exporter reads its host's OSDs' counters through their admin sockets and exports
them as the mgr module does (same families, values and labels, plus cluster and hostname); failures are
counted per OSD by reason; off by default, when no OSD is asked for them."""

from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from perfwatch.collection.collector import Collector as ModuleCollector
from perfwatch.collection.collector import Settings as ModuleSettings
from perfwatch.common.exposition import PREFIX
from perfwatch_host_exporter import asok
from perfwatch_host_exporter.daemon_counters import FAMILIES
from tests.unit.exporter.test_collector import FSID, build, collector
from tests.unit.fakes import FakeAdapter

OSD0 = "/var/run/ceph/ceph-osd.0.asok"
WHERE = {"cluster": FSID, "hostname": "node1"}


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def counter_samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """The samples of the counter families (not the module's or exporter's status of reading them)."""
    status = {PREFIX + n for n in ("daemon_up", "daemon_last_success_timestamp_seconds", "fetch_errors_total")}
    names = {PREFIX + n for n in FAMILIES} - status
    return {k: v for k, v in samples(text).items() if k[0] in names or k[0].rsplit("_", 1)[0] in names}


def test_the_exporter_exports_an_osds_counters_as_the_module_does(tmp_path: Path) -> None:
    host, fake = build(tmp_path)
    exporter = counter_samples(collector(host, fake, daemon_counters=True).render())
    module = ModuleCollector(FakeAdapter(1))  # osd.0 answers the same recorded perf dump and mempools
    module.collect(ModuleSettings(request_timeout=1.0, max_in_flight=1))
    expected = {
        (name, frozenset({**dict(labels), **WHERE}.items())): v
        for (name, labels), v in counter_samples(module.cache.body(0.0, compressed=False).decode()).items()
    }
    assert len(expected) > 40
    assert exporter == expected


def test_status_of_each_osd_read_here_and_failures_by_reason(tmp_path: Path) -> None:
    host, fake = build(tmp_path)
    c = collector(host, fake, daemon_counters=True)
    osd = {"ceph_daemon": "osd.0", **WHERE}
    got = samples(c.render())
    assert got[(PREFIX + "daemon_up", frozenset(osd.items()))] == 1
    assert (PREFIX + "daemon_last_success_timestamp_seconds", frozenset(osd.items())) in got
    assert got[(PREFIX + "counters_missing", frozenset(osd.items()))] == 0
    assert got[(PREFIX + "fetch_errors_total", frozenset({**osd, "reason": "timeout"}.items()))] == 0
    # its socket stops answering: no counters, up 0, a timeout counted (and an asok collection error)
    replies = dict(fake.replies)

    def hung(path: str, command: dict, timeout: float, expected: asok.Listener | None) -> object:
        if path.endswith("ceph-osd.0.asok") and command["prefix"] == "perf dump":
            raise asok.AsokTimeout("timed out")
        return fake(path, command, timeout, expected)

    c.sockets.call = hung
    got = samples(c.render())
    assert got[(PREFIX + "daemon_up", frozenset(osd.items()))] == 0
    assert got[(PREFIX + "fetch_errors_total", frozenset({**osd, "reason": "timeout"}.items()))] == 1
    assert (
        got[(PREFIX + "exporter_collection_errors_total", frozenset({"hostname": "node1", "source": "asok"}.items()))]
        == 1
    )
    assert (PREFIX + "bluestore_onodes", frozenset(osd.items())) not in got
    # a reply that is not an object: decode
    c.sockets.call = fake
    fake.replies[(OSD0, "perf dump")] = ["not", "an", "object"]
    got = samples(c.render())
    assert got[(PREFIX + "fetch_errors_total", frozenset({**osd, "reason": "decode"}.items()))] == 1
    assert got[(PREFIX + "daemon_up", frozenset(osd.items()))] == 0
    # it answers again: up, the failures kept
    fake.replies.update(replies)
    got = samples(c.render())
    assert got[(PREFIX + "daemon_up", frozenset(osd.items()))] == 1
    assert got[(PREFIX + "fetch_errors_total", frozenset({**osd, "reason": "timeout"}.items()))] == 1
    assert (PREFIX + "bluestore_onodes", frozenset(osd.items())) in got


def test_off_by_default_no_osd_is_asked_for_its_counters(tmp_path: Path) -> None:
    host, fake = build(tmp_path)
    text = collector(host, fake).render()
    assert not counter_samples(text)
    assert PREFIX + "daemon_up" not in {name for name, _ in samples(text)}
    assert fake.asked("perf dump ", OSD0) == 0


# One OSD whose perf dump is a JSON object with a surprising entry
CASES = {
    "mempool bytes null": ("perf dump", {"mempool": {"bluestore_cache_onode_bytes": None}}),
    "mempool bytes a list": ("perf dump", {"mempool": {"bluestore_cache_onode_bytes": [1, 2]}}),
    "perf dump int too big for a float": ("perf dump", {"bluestore": {"onodes": 10**400}}),
    "perf dump latency sum null": ("perf dump", {"rocksdb": {"submit_sync_latency": {"sum": None, "avgcount": 1}}}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_surprising_entry_in_a_reply_is_a_decode_error_and_the_osds_other_samples_stay(
    tmp_path: Path, case: str
) -> None:
    host, fake = build(tmp_path)
    c = collector(host, fake, daemon_counters=True)
    before = samples(c.render())
    cpu = (PREFIX + "daemon_cpu_seconds_total", frozenset({**WHERE, "ceph_daemon": "osd.0", "mode": "user"}.items()))
    assert cpu in before and before[(PREFIX + "daemon_up", frozenset({**WHERE, "ceph_daemon": "osd.0"}.items()))] == 1
    what, reply = CASES[case]
    fake.replies[(OSD0, what)] = reply
    got = samples(c.render())
    # as the module does (collector._read_osd): daemon_up 0, a decode error counted, the rest kept
    assert cpu in got, "osd.0's CPU samples vanished"
    assert (PREFIX + "daemon_up", frozenset({**WHERE, "ceph_daemon": "osd.0"}.items())) in got, (
        "osd.0's daemon_up vanished"
    )
    errors = sum(
        v for (n, labels), v in got.items() if n == PREFIX + "fetch_errors_total" and ("ceph_daemon", "osd.0") in labels
    )
    assert errors == 1
    assert (
        got[(PREFIX + "fetch_errors_total", frozenset({**WHERE, "ceph_daemon": "osd.0", "reason": "decode"}.items()))]
        == 1
    )
    assert got[(PREFIX + "daemon_up", frozenset({**WHERE, "ceph_daemon": "osd.0"}.items()))] == 0
