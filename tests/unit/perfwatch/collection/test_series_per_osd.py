"""What the module's endpoint costs per OSD: every line of its output at 20 and at 40 OSDs, each OSD with its
counters (the recorded Pacific perf dump), its two network addresses, and a result of every benchmark kind
that measures OSDs (the light rados and net probes, the heavy osd bench). The lines that grow with the OSD
count must grow by exactly PER_OSD_LINES per OSD, and nothing else may grow: at 10,000 OSDs each line per
OSD is 10,000 series, so a change that adds per-OSD lines must change this budget, and say why (what was
cut: docs/decisions/collection-cost.md#series-the-module-stopped-exporting). For large clusters
(daemon_counters_source=exporters, bench_export_baselines off) the budget is LEAN_LINES per OSD, to stay
within 100,000 samples at 10,000 OSDs."""

from __future__ import annotations

import re
import time
from collections import Counter

from bench.synthetic_module import LIGHT, filled_board, osd_addresses
from perfwatch.ceph.osd_networks import OsdNetwork
from perfwatch.collection.collector import Collector, Settings
from tests.unit.fakes import FakeAdapter

# counters 48, addresses 2, per result of the 6 kinds and metrics the board holds: last value, baseline (12)
PER_OSD_LINES = 62
# addresses 2, the last value of each result (6)
LEAN_LINES = 8
OSD_LABEL = re.compile(r'ceph_daemon="osd\.\d+"')
REGRESSION = "ceph_perfwatch_bench_regression{"


class NetworkedAdapter(FakeAdapter):
    def osd_networks(self) -> list[OsdNetwork]:
        return osd_addresses([osd for osd, up in self.osds() if up])


def endpoint_lines(n: int, read_osds: bool = True, baselines: bool = True) -> list[str]:
    """The module's exposition, comments left out, for n OSDs after enough runs for baselines; osd.1's
    rados write latency is a regression."""
    board, store = filled_board(n)
    store.record_verdicts({"rados/write_latency/osd.1": 3}, {"rados/write_latency/osd.1": {"reason": "slow"}})
    collector = Collector(NetworkedAdapter(n), extra_samples=lambda: board.exposition({"rados/done": 3}, 1, baselines))
    collector.collect(Settings(request_timeout=1.0, max_in_flight=8, read_osds=read_osds))
    text = collector.cache.body(time.time(), compressed=False).decode()
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def shape(lines: list[str]) -> Counter[str]:
    """Lines by their metric name and label set, OSD ids left out."""
    return Counter(OSD_LABEL.sub('ceph_daemon="osd"', line.rsplit(" ", 1)[0]) for line in lines)


def test_the_endpoint_grows_by_a_fixed_budget_per_osd_and_by_nothing_else() -> None:
    small, large = endpoint_lines(20), endpoint_lines(40)
    per_osd = [line for line in large if OSD_LABEL.search(line) and not line.startswith(REGRESSION)]
    assert len(per_osd) == PER_OSD_LINES * 40, Counter(line.split("{", 1)[0] for line in per_osd if 'osd.0"' in line)
    # the rest does not grow with the OSD count (the probe histograms among them: per device class)
    assert shape([line for line in large if not OSD_LABEL.search(line)]) == shape(
        [line for line in small if not OSD_LABEL.search(line)]
    )
    assert len(large) - len(small) == PER_OSD_LINES * 20
    histogram = [line for line in large if line.startswith("ceph_perfwatch_bench_probe_latency_seconds")]
    assert {re.search(r'device_class="(\w*)"', line).group(1) for line in histogram} == {"hdd", "ssd"}  # type: ignore[union-attr]
    assert len(histogram) == 19 * len(LIGHT) * 2  # 16 buckets, +Inf, _sum, _count; per probe metric and class


def test_the_regression_flag_is_there_only_while_it_is_one() -> None:
    flags = [line for line in endpoint_lines(20) if line.startswith(REGRESSION)]
    assert len(flags) == 1 and 'ceph_daemon="osd.1"' in flags[0] and 'metric="write_latency"' in flags[0]
    assert flags[0].endswith(" 1")


def test_lean_output_for_large_clusters_fits_100000_samples_at_10000_osds() -> None:
    small, large = endpoint_lines(20, False, False), endpoint_lines(40, False, False)
    per_osd = [line for line in large if OSD_LABEL.search(line) and not line.startswith(REGRESSION)]
    assert len(per_osd) == LEAN_LINES * 40, Counter(line.split("{", 1)[0] for line in per_osd if 'osd.0"' in line)
    counters = ("ceph_perfwatch_osd_", "ceph_perfwatch_bluestore_", "ceph_perfwatch_rocksdb_", "ceph_perfwatch_bluefs_")
    assert not [
        line for line in large if "_baseline_" in line or (line.startswith(counters) and "network_info" not in line)
    ]
    fixed = len(large) - LEAN_LINES * 40
    assert fixed == len(small) - LEAN_LINES * 20  # nothing else grows with the OSD count
    assert fixed + LEAN_LINES * 10_000 <= 100_000, fixed
    # the same histograms, results and regression flag as with every series on
    full = {line.rsplit(" ", 1)[0] for line in endpoint_lines(40)}
    assert {line.rsplit(" ", 1)[0] for line in large} <= full
