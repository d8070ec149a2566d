"""Growing the scratch pool with the cluster (scratch_pgs.py) and the probe's phases (probe_phases.py):
only perfwatch's pool, only when healthy, pg_num before pg_num_min, never while its PGs change; one op a
second on an OSD; a probe round takes the OSDs measured longest ago."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from perfwatch.benchmarks.base import BenchError
from perfwatch.benchmarks.engine import probe_phases
from perfwatch.benchmarks.engine.probe_coverage import ProbeCoverage
from perfwatch.benchmarks.engine.probe_phases import ProbePhases
from perfwatch.benchmarks.kinds.rados import RadosLatency
from perfwatch.benchmarks.lifecycle import scratch_pgs
from perfwatch.benchmarks.lifecycle.scratch_pgs import changing, grow, wait_settled
from perfwatch.ceph.seam import FetchError, OsdInfo
from perfwatch.common.daemon_counters.fetch_reasons import REASON_ERROR
from perfwatch.options import declared as options


class Log:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return lambda fmt, *a: self.lines.append(f"{name}: " + fmt % a)


class Cluster:
    """The mgr's view of a 1,200-OSD cluster with 100 PG replicas per OSD and perfwatch's pool."""

    def __init__(self, pg_num: int = 32, **entry: Any) -> None:
        self.health, self.pgs = "HEALTH_OK", {"active+clean": 40000 + pg_num}
        self.entry = {"pool_name": "perfwatch", "pg_num": pg_num, "pg_num_target": pg_num, "pg_placement_num": pg_num,
                      "pg_placement_num_target": pg_num, "size": 3, "options": {}, "pool": 7,
                      "application_metadata": {"perfwatch": {}}, **entry}  # fmt: skip
        self.others = [{"pool_name": "rbd", "pg_num": 40000, "size": 3}]
        self.commands: list[tuple[str, str, int]] = []
        self.refuse = False

    def cluster_state(self) -> tuple[str, dict[str, int]]:
        return self.health, self.pgs

    def pool_entry(self, name: str) -> dict[str, Any] | None:
        return dict(self.entry) if name == "perfwatch" else None

    def pool_entries(self) -> list[dict[str, Any]]:
        return [self.entry, *self.others]

    def in_osd_count(self) -> int:
        return 1200

    def ceph_option(self, name: str) -> Any:
        return {"mon_max_pg_per_osd": 250}[name]

    def set_pool(self, name: str, var: str, value: int) -> None:
        if self.refuse:
            raise FetchError(REASON_ERROR, "mon: osd pool set: -34 pg_num 4096 size 3 would mean 300000 total pgs")
        self.commands.append((name, var, value))
        if var == "pg_num":
            self.entry["pg_num_target"] = value
        else:
            self.entry["options"] = {"pg_num_min": value}


OPTS = options.defaults()


@pytest.fixture(autouse=True)
def _no_remembered_refusals() -> Any:
    scratch_pgs.REFUSED.clear()
    yield
    scratch_pgs.REFUSED.clear()


def test_a_healthy_cluster_grows_the_pool_and_pins_it_against_the_autoscaler() -> None:
    cluster = Cluster()
    assert grow(cluster, "perfwatch", OPTS, Log()) == 2048  # 8 x 1200 / 3 = 3200
    assert cluster.commands == [("perfwatch", "pg_num", 2048), ("perfwatch", "pg_num_min", 2048)], "pg_num first"
    assert changing(cluster.entry) == "pg_num 32 -> 2048"
    assert grow(cluster, "perfwatch", OPTS, Log()) is None and len(cluster.commands) == 2, "not while it changes"


def test_a_pool_at_its_size_gets_only_its_pg_num_min() -> None:
    cluster = Cluster(pg_num=4096)
    assert grow(cluster, "perfwatch", OPTS, Log()) is None
    assert cluster.commands == [("perfwatch", "pg_num_min", 4096)], "never shrunk; pinned where it is"
    assert grow(cluster, "perfwatch", OPTS, Log()) is None and len(cluster.commands) == 1


@pytest.mark.parametrize(
    "health, pgs", [("HEALTH_WARN", {"active+clean": 40032}), ("HEALTH_OK", {"active+clean": 40022, "peering": 10})]
)
def test_nothing_changes_unless_every_pg_is_clean_and_health_ok(health: str, pgs: dict[str, int]) -> None:
    cluster = Cluster()
    cluster.health, cluster.pgs = health, pgs
    assert grow(cluster, "perfwatch", OPTS, Log()) is None and cluster.commands == []


def test_a_refusal_by_the_mons_is_logged_and_the_probe_goes_on() -> None:
    cluster, log = Cluster(), Log()
    cluster.refuse = True
    assert grow(cluster, "perfwatch", OPTS, log) is None
    assert any(
        line.startswith("warning: scratch pool perfwatch: growing it to 2048 PGs was refused") for line in log.lines
    )


def test_a_budget_of_zero_keeps_the_floor() -> None:
    cluster = Cluster()
    assert grow(cluster, "perfwatch", {**OPTS, "scratch_pool_pgs_per_osd": 0}, Log()) is None
    assert cluster.commands == [("perfwatch", "pg_num_min", 32)]


def test_a_probe_waits_while_the_pool_splits_and_gives_up_with_a_clear_error() -> None:
    cluster = Cluster(pg_num=32, pg_num_target=64)
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds
        if now[0] >= 3:
            cluster.entry["pg_num"] = cluster.entry["pg_placement_num"] = 64
            cluster.entry["pg_placement_num_target"] = 64

    assert wait_settled(cluster, "perfwatch", 30, clock=lambda: now[0], sleep=sleep) is True
    assert wait_settled(cluster, "perfwatch", 30, clock=lambda: now[0], sleep=sleep) is False, "settled: no wait"
    stuck = Cluster(pg_num=32, pg_num_target=64)
    with pytest.raises(BenchError, match=r"changing its PG count \(pg_num 32 -> 64\) for more than 30 s"):
        wait_settled(stuck, "perfwatch", 30, clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))


class Ctx:
    unsettled = False
    targeted = False
    run_id = "rados-20261125T000000-abcd"

    def __init__(self, osds: int, per_round: int) -> None:
        self.options = {**OPTS, "rados_probe_osds_per_round": per_round}
        self.osds = [OsdInfo(o, f"host{o}", True, "ssd") for o in range(osds)]
        self.acting: dict[int, list[int]] = {}
        self.commit_latency: dict[int, float] = {}
        self.coverage = ProbeCoverage()
        self.log = Log()
        self.adapter = self
        self.scratch_busy = lambda: False

    def pg_primaries(self, pool_id: int) -> dict[int, int]:
        return {pg: pg % len(self.osds) for pg in range(32)}

    def check(self) -> None:
        pass

    def step_timeout(self, wanted: float) -> float:
        return wanted

    def remaining(self) -> float:
        return 60.0

    def progress(self, *_: Any) -> None:
        pass


class IO:
    timeout = 5.0

    def __init__(self) -> None:
        self.ops: list[tuple[str, str]] = []
        self.lock = threading.Lock()

    def write_full(self, name: str, data: bytes, timeout: float) -> float:
        with self.lock:
            self.ops.append(("write", name))
        return 0.002

    def read(self, name: str, size: int, timeout: float) -> float:
        with self.lock:
            self.ops.append(("read", name))
        return 0.001

    def remove(self, name: str, timeout: float) -> None:
        with self.lock:
            self.ops.append(("remove", name))


def test_a_round_takes_the_osds_measured_longest_ago_and_removes_what_it_wrote(monkeypatch: Any) -> None:
    monkeypatch.setattr(probe_phases, "PACE_SECONDS", 0.0)
    ctx, io = Ctx(osds=20, per_round=8), IO()
    seen: list[set[int]] = []
    for _ in range(3):
        results = RadosLatency()._probe(ctx, io, 7, 32, "perfwatch")  # type: ignore[arg-type]
        seen.append({m.osd for m in results if m.osd is not None})
        assert len(results) == 16 and all(m.metric in ("write_latency", "read_latency") for m in results)
    assert seen[0] == set(range(8)) and seen[1] == set(range(8, 16))
    assert seen[2] == {16, 17, 18, 19, 0, 1, 2, 3}, "then those measured longest ago"
    written = [name for op, name in io.ops if op == "write"]
    assert sorted(written) == sorted(name for op, name in io.ops if op == "remove"), "every object removed"


def test_no_two_ops_on_one_osd_are_less_than_a_second_apart() -> None:
    starts: dict[int, list[float]] = {}
    ctx = Ctx(osds=3, per_round=3)
    phases = ProbePhases(ctx, workers=8)
    todo = [(0, "a"), (1, "b"), (2, "c")]
    clock = probe_phases.time.monotonic

    def op(name: str) -> float:
        starts.setdefault("abc".index(name), []).append(clock())
        return 0.0

    for step in ("write", "read"):
        phases.run(step, todo, op)
    for osd, (first, second) in starts.items():
        assert second - first >= 0.99, f"osd.{osd}: {second - first:.3f} s between two ops"
