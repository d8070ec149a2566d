import copy

import pytest

from perfwatch.collection.module_families import MODULE_REGISTRY
from perfwatch.common.daemon_counters import counters as c
from perfwatch.common.daemon_counters.counter_families import MEMPOOL_BYTES, MEMPOOL_ITEMS
from tests.unit.fakes import MEMPOOLS, PERF_DUMP


def values(samples: list[c.Sample]) -> dict[tuple, float]:
    return {(s.family + s.suffix, tuple(kv for kv in s.labels if kv[0] != "ceph_daemon")): s.value for s in samples}


def test_every_table_entry_is_found_in_a_real_pacific_osd() -> None:
    samples, missing = c.extract(c.OSD_SPECS, PERF_DUMP, "osd.1")
    assert missing == []
    v = values(samples)
    assert v[(c.ONODE_HITS, ())] == PERF_DUMP["bluestore"]["onode_hits"]
    assert v[(c.DB_TOTAL, ())] == PERF_DUMP["bluefs"]["db_total_bytes"]
    assert v[(c.GET_LAT + "_count", ())] == PERF_DUMP["rocksdb"]["get_latency"]["avgcount"]
    assert v[(c.GET_LAT + "_sum", ())] == PERF_DUMP["rocksdb"]["get_latency"]["sum"]
    assert v[(c.WRITE_DELAY, ())] == PERF_DUMP["rocksdb"]["rocksdb_write_delay_time"]["sum"]
    assert v[(c.COMPACTIONS, (("trigger", "range"),))] == PERF_DUMP["rocksdb"]["compact_range"]
    data = PERF_DUMP["bluestore-pricache:data"]
    pri = sum(val for key, val in data.items() if key.startswith("pri") and key.endswith("_bytes"))
    assert v[(c.CACHE_TARGET, (("cache", "data"),))] == pri
    assert (
        v[(c.CACHE_COMMITTED, (("cache", "kv_onode"),))] == PERF_DUMP["bluestore-pricache:kv_onode"]["committed_bytes"]
    )
    assert all(s.labels[0] == ("ceph_daemon", "osd.1") for s in samples)


def test_the_older_spelling_of_a_renamed_counter_is_found_too() -> None:
    old = copy.deepcopy(PERF_DUMP)
    old["bluestore"]["bluestore_onode_hits"] = old["bluestore"].pop("onode_hits")
    old["bluestore"]["bluestore_onode_misses"] = old["bluestore"].pop("onode_misses")
    samples, missing = c.extract(c.OSD_SPECS, old, "osd.0")
    assert missing == []
    assert values(samples)[(c.ONODE_HITS, ())] == PERF_DUMP["bluestore"]["onode_hits"]


def test_a_counter_the_release_lacks_is_reported_not_invented() -> None:
    lacking = copy.deepcopy(PERF_DUMP)
    del lacking["bluefs"]["slow_used_bytes"]
    del lacking["rocksdb"]
    samples, missing = c.extract(c.OSD_SPECS, lacking, "osd.0")
    assert "bluefs.slow_used_bytes" in missing and "rocksdb.get_latency" in missing
    assert not [s for s in samples if s.family in (c.SLOW_USED, c.GET_LAT)]


def test_mempools_of_the_bluestore_caches_only_from_the_perf_dumps_mempool_logger() -> None:
    """The fixtures were taken together from one OSD: its perf dump's mempool logger says what its
    dump_mempools said, pool by pool."""
    samples = [s for s in c.osd_counters(PERF_DUMP, "osd.1").samples if s.family in (MEMPOOL_BYTES, MEMPOOL_ITEMS)]
    by_pool = MEMPOOLS["mempool"]["by_pool"]
    assert sorted({dict(s.labels)["pool"] for s in samples}) == ["data", "meta", "onode", "other"]
    for s in samples:
        pool = "bluestore_cache_" + dict(s.labels)["pool"]
        assert s.value == by_pool[pool]["bytes" if s.family == MEMPOOL_BYTES else "items"], s
    assert len(samples) == 8


@pytest.mark.parametrize("logger", [None, [], "mempool"], ids=["absent", "a list", "a string"])
def test_a_perf_dump_without_its_mempool_logger_says_the_mempools_are_missing(logger: object) -> None:
    lacking = copy.deepcopy(PERF_DUMP)
    if logger is None:
        del lacking["mempool"]
    else:
        lacking["mempool"] = logger  # not an object: as another logger that is not, missing
    got = c.osd_counters(lacking, "osd.0")
    assert c.MEMPOOLS_MISSING in got.missing and c.MEMPOOLS_MISSING == "mempool.bluestore_cache_*"
    assert not [s for s in got.samples if s.family in (MEMPOOL_BYTES, MEMPOOL_ITEMS)]
    assert len(got.samples) == len(c.osd_counters(PERF_DUMP, "osd.0").samples) - 8


def test_mempool_counters_that_are_not_a_pools_bytes_are_left_alone() -> None:
    dump = copy.deepcopy(PERF_DUMP)
    dump["mempool"]["bluestore_cache_bytes"] = 5  # no pool name between the prefix and _bytes
    dump["mempool"]["bluestore_cache_new_bytes"] = 7  # a pool a later release adds: read; no items, none exported
    dump["mempool"]["bluestore_cache_items"] = 3
    got = c.osd_counters(dump, "o")
    mempool = (MEMPOOL_BYTES, MEMPOOL_ITEMS)
    pools = {(s.family, dict(s.labels)["pool"]): s.value for s in got.samples if s.family in mempool}
    assert pools[(MEMPOOL_BYTES, "new")] == 7 and (MEMPOOL_ITEMS, "new") not in pools
    assert got.missing == ["mempool.bluestore_cache_new_items"]
    assert sorted({pool for _f, pool in pools}) == ["data", "meta", "new", "onode", "other"]


def test_rgw_counters_from_the_mgr_shape() -> None:
    mgr = {"rgw.req": {"value": 7}, "rgw.qlen": {"value": 0}, "rgw.list_obj_lat": {"value": 1.5, "count": 3}}
    samples, missing = c.extract(c.RGW_SPECS, c.flatten_mgr_counters(mgr), "rgw.4163")
    v = values(samples)
    assert v[(c.RGW_REQS, ())] == 7
    assert v[(c.RGW_LIST_LAT + "_sum", ())] == 1.5 and v[(c.RGW_LIST_LAT + "_count", ())] == 3
    assert "rgw.cache_hit" in missing


def test_family_names_follow_prometheus_conventions() -> None:
    for family in MODULE_REGISTRY.families():
        if family.type == "counter":
            assert family.name.endswith("_total"), family.name
        else:
            assert not family.name.endswith("_total"), family.name
        assert not any(unit in family.name for unit in ("_ms", "_usec", "_kb", "_mb")), family.name


# ----- releases after Pacific (shapes read from live Reef 18.2.7 and Tentacle 20.2.4 daemons) -------------

# The rocksdb logger of a Reef/Tentacle OSD: compact_range is gone, RocksDB's compaction events came.
REEF_ROCKSDB = {
    "get_latency": {"avgcount": 262, "sum": 0.0079, "avgtime": 0.00003},
    "submit_latency": {"avgcount": 3726, "sum": 0.1364, "avgtime": 0.00004},
    "submit_sync_latency": {"avgcount": 613, "sum": 5.6654, "avgtime": 0.0092},
    "compact": 1,
    "compact_running": 0,
    "compact_completed": 4,
    "compact_lasted": 0.040566207,
    "compact_queue_merge": 0,
    "compact_queue_len": 0,
    "rocksdb_write_delay_time": {"avgcount": 0, "sum": 0.0, "avgtime": 0.0},
}


def reef_dump() -> dict:
    dump = copy.deepcopy(PERF_DUMP)
    dump["rocksdb"] = copy.deepcopy(REEF_ROCKSDB)
    return dump


def test_pacific_lacks_only_what_later_releases_added_and_nothing_is_missing() -> None:
    got = c.extract_detail(c.OSD_SPECS, PERF_DUMP, "osd.1")
    assert got.missing == []
    assert sorted(got.unavailable) == ["rocksdb.compact_completed", "rocksdb.compact_lasted", "rocksdb.compact_running"]


def test_reef_compaction_counters_map_into_their_families() -> None:
    got = c.extract_detail(c.OSD_SPECS, reef_dump(), "osd.0")
    assert got.missing == [] and got.unavailable == ["rocksdb.compact_range"]
    v = values(got.samples)
    assert v[(c.COMPACTIONS_COMPLETED, ())] == 4
    assert v[(c.COMPACTIONS_RUNNING, ())] == 0
    assert v[(c.LAST_COMPACTION, ())] == 0.040566207
    assert v[(c.COMPACTIONS, (("trigger", "background"),))] == 1
    assert (c.COMPACTIONS, (("trigger", "range"),)) not in v  # not invented from another counter
    assert c.releases_of("rocksdb.compact_range").startswith("Pacific")


def test_an_unknown_rename_of_a_counter_every_release_has_is_still_missing() -> None:
    dump = reef_dump()
    dump["rocksdb"]["compact_queue_length"] = dump["rocksdb"].pop("compact_queue_len")
    assert c.extract_detail(c.OSD_SPECS, dump, "osd.0").missing == ["rocksdb.compact_queue_len"]


def test_rgw_list_latency_is_read_from_rgw_op_in_seconds() -> None:
    """Tentacle: the mgr holds rgw_op's unlabeled instance; time counters in nanoseconds (type bit 1)."""
    mgr = {
        "rgw.req": {"value": 40, "type": 10},
        "rgw_op.list_obj_lat": {"value": 44_000_000, "count": 11, "type": 5},
        "rgw_op.list_buckets_lat": {"value": 24_000_000, "count": 11, "type": 5},
    }
    got = c.extract_detail(c.RGW_SPECS, c.flatten_mgr_counters(mgr), "rgw.4160")
    v = values(got.samples)
    assert v[(c.RGW_LIST_LAT + "_sum", ())] == pytest.approx(0.044) and v[(c.RGW_LIST_LAT + "_count", ())] == 11
    assert v[(c.RGW_LIST_BUCKETS_LAT + "_sum", ())] == pytest.approx(0.024)
    assert "rgw_op.list_obj_lat" not in got.unavailable


def test_reef_rgw_says_list_latency_is_unavailable_not_missing() -> None:
    """Reef 18.2.7's RGW has no list latency in any logger: explicit, and no sample invented."""
    mgr = {"rgw.req": {"value": 7, "type": 10}, "rgw.get_initial_lat": {"value": 5, "count": 1, "type": 5}}
    got = c.extract_detail(c.RGW_SPECS, c.flatten_mgr_counters(mgr), "rgw.4148")
    assert sorted(got.unavailable) == ["rgw_op.list_buckets_lat", "rgw_op.list_obj_lat"]
    assert "rgw_op.list_obj_lat" not in got.missing
    assert not [s for s in got.samples if s.family in (c.RGW_LIST_LAT, c.RGW_LIST_BUCKETS_LAT)]
    assert "Tentacle" in c.releases_of("rgw_op.list_obj_lat")


def test_labeled_counters_give_only_the_daemon_wide_instance() -> None:
    labeled = {
        "rgw_op": [
            {"labels": {}, "counters": {"list_obj_lat": {"type": 5, "priority": 5, "value": 7, "count": 2}}},
            {"labels": {"bucket": "b1"}, "counters": {"list_obj_lat": {"type": 5, "value": 1, "count": 1}}},
        ],
        "AsyncMessenger::Worker": [
            {"labels": {"id": "0"}, "counters": {"msgr_connection_ready_timeouts": {"value": 0}}}
        ],
        "odd": "not a list",
    }
    assert c.flatten_labeled_counters(labeled) == {
        "rgw_op.list_obj_lat": {"type": 5, "priority": 5, "value": 7, "count": 2}
    }
