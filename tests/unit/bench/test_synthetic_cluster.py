"""dev/bench/synthetic_cluster.py in its two collection modes: the OSDs' daemon counters from the mgr module (the
default) or from each host's exporter (daemon_counters_source exporters), and without baselines."""

from __future__ import annotations

import re

import pytest

from bench.synthetic_cluster import SyntheticCluster
from perfwatch.common.daemon_counters import counters

# families the OSDs' daemon counters give (what the exporters take over), and the collector's per-daemon ones
COUNTER_FAMILIES = {"ceph_perfwatch_" + spec.family for spec in counters.OSD_SPECS}


def names(cluster: SyntheticCluster, source: str) -> set[str]:
    return {re.sub(r"_(sum|count)$", "", text.split("{", 1)[0]) for text, _, _ in cluster.by_source.get(source, [])}


def test_by_default_the_module_exports_the_counters_and_the_baselines() -> None:
    cluster = SyntheticCluster(100, 24)
    module, exporter = names(cluster, "perfwatch"), names(cluster, "perfwatch-host")
    assert "ceph_perfwatch_rocksdb_submit_sync_latency_seconds" in module & COUNTER_FAMILIES
    assert not exporter & COUNTER_FAMILIES
    assert "ceph_perfwatch_bench_baseline_latency_seconds" in module


def test_with_the_exporters_collecting_the_counters_come_from_each_osds_host() -> None:
    cluster = SyntheticCluster(100, 24, counters_from="exporters", baselines=False)
    module, exporter = names(cluster, "perfwatch"), names(cluster, "perfwatch-host")
    assert not module & COUNTER_FAMILIES
    assert "ceph_perfwatch_daemon_up" not in module, "the module reports no OSD's daemon_up then"
    assert {"ceph_perfwatch_rocksdb_submit_sync_latency_seconds", "ceph_perfwatch_daemon_up"} <= exporter
    assert not {n for n in module if "baseline" in n}
    assert "ceph_perfwatch_osd_network_info" in module and "ceph_perfwatch_bench_latency_seconds" in module
    # each OSD's counters carry its own host, as its host's exporter labels them
    for text, _, _ in cluster.by_source["perfwatch-host"]:
        if text.startswith("ceph_perfwatch_daemon_up{"):
            osd = int(re.search(r'ceph_daemon="osd\.(\d+)"', text).group(1))  # type: ignore[union-attr]
            assert f'hostname="{cluster.hosts[osd // 24]}"' in text and f'instance="{cluster.hosts[osd // 24]}:9285"'
    smaller = SyntheticCluster(100, 24).series_count - cluster.series_count
    assert smaller > 0, "without baselines there are fewer series"


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="module or exporters"):
        SyntheticCluster(10, 24, counters_from="both")


def test_the_per_osd_load_series_stay_within_the_modules_cap_and_the_saturated_osds_keep_theirs() -> None:
    """Whose load, on with the module's defaults: at 10,000 OSDs the cap (load_osd_series_max) holds the
    busiest 1,000 OSDs' series, and those are the saturated ones first (the load rules join them)."""
    from bench.synthetic_cluster import LOAD_DEFAULTS, LOAD_SERIES_PER_OSD

    cluster = SyntheticCluster(10_000, 24)
    per_osd = [t for t, _, _ in cluster.by_source["perfwatch"] if t.startswith("ceph_perfwatch_load_osd_")]
    assert len(per_osd) == LOAD_DEFAULTS["load_osd_series_max"], "the cap, and no more"
    loaded = {re.search(r'ceph_daemon="(osd\.\d+)"', t).group(1) for t in per_osd}  # type: ignore[union-attr]
    assert len(loaded) * LOAD_SERIES_PER_OSD == len(per_osd)
    checks = {what: expected for what, _, expected in cluster.checks}
    assert checks["load: saturated OSDs' busiest clients"] > 0, "no saturated OSD kept its load series"
    left = next(v for t, v, _ in cluster.by_source["perfwatch"] if t.startswith("ceph_perfwatch_load_osds_without"))
    assert len(loaded) + left < cluster.osds, "the OSDs left out are counted, the down and failing ones not"
