"""What the module's endpoint costs per OSD: every line of its output at 20 and at 40 OSDs, each OSD with its
counters (the recorded Pacific perf dump), its two network addresses, and a result of every benchmark kind
that measures OSDs (the light rados and net probes, the heavy osd bench). The lines that grow with the OSD
count must grow by exactly PER_OSD_LINES per OSD, and nothing else may grow: at 10,000 OSDs each line per
OSD is 10,000 series. Probe histograms were 76 lines per OSD (19 per histogram) until they became per device
class: a change that adds per-OSD lines must change this budget, and say why."""

from __future__ import annotations

import re
import time
from collections import Counter

from perfwatch.benchmarks.result_board import ResultBoard
from perfwatch.benchmarks.results import Measurement
from perfwatch.benchmarks.run import Run
from perfwatch.benchmarks.store import BenchStore
from perfwatch.collector import Collector, Settings
from perfwatch.osd_networks import OsdNetwork

from .fakes import FakeAdapter
from .test_bench_store import KV, Log

# counters 48, addresses 2, per result of the 6 below: its last value, baseline, ratio, regression flag (24)
PER_OSD_LINES = 74
LIGHT = (("rados", "write_latency", "seconds"), ("rados", "read_latency", "seconds"),
         ("net", "ping_front", "seconds"), ("net", "ping_back", "seconds"))  # fmt: skip
HEAVY = (("osd", "write_iops_4k", "iops"), ("osd", "write_throughput_4m", "bytes_per_second"))
OSD_LABEL = re.compile(r'ceph_daemon="osd\.\d+"')


class NetworkedAdapter(FakeAdapter):
    def osd_networks(self) -> list[OsdNetwork]:
        return [
            OsdNetwork(osd, net, f"10.{i}.{osd // 250}.{osd % 250}", f"eth{i}")
            for osd, up in self.osds()
            if up
            for i, net in enumerate(("public", "cluster"))
        ]


def endpoint_lines(n: int) -> list[str]:
    """The module's exposition, comments left out, for n OSDs after enough runs for baselines."""
    kv = KV()
    store = BenchStore(kv.get, kv.put, 50, 10, Log())
    board = ResultBoard(store, device_classes=lambda: {osd: "hdd" if osd % 2 else "ssd" for osd in range(n)})
    for k in range(3):
        for kind, heavy, chosen in (("rados", False, LIGHT[:2]), ("net", False, LIGHT[2:]), ("osd", True, HEAVY)):
            run = Run(f"{kind}-20240501T12000{k}-0000", kind, heavy, {}, list(range(n)), "schedule")
            run.measurements = [
                Measurement(kind, m, osd, 0.001 * (osd + 1), u) for _, m, u in chosen for osd in range(n)
            ]
            run.ended_at = 1714564800.0 + k
            store.add_run(run.to_dict())
            store.judge(run.measurements, {}, 0.5, 1)
            board.on_finished(run)
    collector = Collector(NetworkedAdapter(n), extra_samples=lambda: board.samples({"rados/done": 3}, 1))
    collector.collect(Settings(request_timeout=1.0, max_in_flight=8))
    text = collector.cache.body(time.time(), compressed=False).decode()
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def shape(lines: list[str]) -> Counter[str]:
    """Lines by their metric name and label set, OSD ids left out."""
    return Counter(OSD_LABEL.sub('ceph_daemon="osd"', line.rsplit(" ", 1)[0]) for line in lines)


def test_the_endpoint_grows_by_a_fixed_budget_per_osd_and_by_nothing_else() -> None:
    small, large = endpoint_lines(20), endpoint_lines(40)
    per_osd = [line for line in large if OSD_LABEL.search(line)]
    assert len(per_osd) == PER_OSD_LINES * 40, Counter(line.split("{", 1)[0] for line in per_osd if 'osd.0"' in line)
    # the rest does not grow with the OSD count (the probe histograms among them: per device class)
    assert shape([line for line in large if not OSD_LABEL.search(line)]) == shape(
        [line for line in small if not OSD_LABEL.search(line)]
    )
    assert len(large) - len(small) == PER_OSD_LINES * 20
    histogram = [line for line in large if line.startswith("ceph_perfwatch_bench_probe_latency_seconds")]
    assert {re.search(r'device_class="(\w*)"', line).group(1) for line in histogram} == {"hdd", "ssd"}  # type: ignore[union-attr]
    assert len(histogram) == 19 * len(LIGHT) * 2  # 16 buckets, +Inf, _sum, _count; per probe metric and class
