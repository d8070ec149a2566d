import copy

from perfwatch import counters as c
from perfwatch.metric_families import MODULE_REGISTRY

from .fakes import MEMPOOLS, PERF_DUMP


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


def test_mempools_of_the_bluestore_caches_only() -> None:
    samples = c.extract_mempools(MEMPOOLS, "osd.1")
    pools = sorted({dict(s.labels)["pool"] for s in samples})
    assert pools == ["data", "meta", "onode", "other"]
    onode = {s.family: s.value for s in samples if dict(s.labels)["pool"] == "onode"}
    assert onode[c.MEMPOOL_ITEMS] == MEMPOOLS["mempool"]["by_pool"]["bluestore_cache_onode"]["items"]


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
