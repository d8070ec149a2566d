"""A simulated module's state at n OSDs, for the endpoint's figures (dev/bench/metrics_endpoint.py) and its budget
of series per OSD (tests/unit/perfwatch/collection/test_series_per_osd.py): each OSD's public and cluster
address, and a result board holding, for every OSD, a result of each benchmark kind that measures OSDs (the
light rados and net probes, the heavy osd bench) after enough runs for baselines. Half the OSDs are hdd, half
ssd."""

from __future__ import annotations

import logging

from perfwatch.benchmarks.measurement import Measurement
from perfwatch.benchmarks.records.store import BenchStore
from perfwatch.benchmarks.result_board import ResultBoard
from perfwatch.benchmarks.run import Run
from perfwatch.ceph.osd_networks import OsdNetwork

LIGHT = (("rados", "write_latency", "seconds"), ("rados", "read_latency", "seconds"),
         ("net", "ping_front", "seconds"), ("net", "ping_back", "seconds"))  # fmt: skip
HEAVY = (("osd", "write_iops_4k", "iops"), ("osd", "write_throughput_4m", "bytes_per_second"))


def osd_addresses(osds: list[int]) -> list[OsdNetwork]:
    """Each OSD's public (eth0) and cluster (eth1) address, distinct per OSD."""
    return [
        OsdNetwork(osd, net, f"10.{k}.{osd // 250}.{osd % 250}", f"eth{k}")
        for osd in osds
        for k, net in enumerate(("public", "cluster"))
    ]


class _MemoryStore(dict):  # type: ignore[type-arg]
    """The mgr store's get_store/set_store, in memory."""

    def put(self, key: str, value: str | None) -> None:
        if value is None:
            self.pop(key, None)
        else:
            self[key] = value


def filled_board(n: int, runs: int = 3) -> tuple[ResultBoard, BenchStore]:
    """A result board (and its store) after `runs` runs of each kind over n OSDs: every result key has a
    baseline from baseline_min_results=1 on."""
    kv = _MemoryStore()
    store = BenchStore(kv.get, kv.put, 50, 10, logging.getLogger("synthetic"))
    board = ResultBoard(store, device_classes=lambda: {osd: "hdd" if osd % 2 else "ssd" for osd in range(n)})
    for k in range(runs):
        for kind, heavy, chosen in (("rados", False, LIGHT[:2]), ("net", False, LIGHT[2:]), ("osd", True, HEAVY)):
            run = Run(f"{kind}-20240501T12000{k}-0000", kind, heavy, {}, list(range(n)), "schedule")
            run.measurements = [
                Measurement(kind, m, osd, 0.001 * (osd + 1), u) for _, m, u in chosen for osd in range(n)
            ]
            run.ended_at = 1714564800.0 + k
            store.add_run(run.to_dict())
            store.judge(run.measurements, {}, 0.5, 1)
            board.on_finished(run)
    return board, store
