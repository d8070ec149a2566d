"""The light rados probe's coverage of every up OSD, adversarially: tiny and huge clusters,
OSDs that fail, move or vanish, clock jumps, targeted runs, option values at and past their bounds, and
pools the module did not create. Pure: fakes only. What the review that wrote them found:
docs/decisions/adversarial-reviews.md."""

from __future__ import annotations

import contextlib
import math
import random
from typing import Any

import pytest

from perfwatch.benchmarks.base import BenchError
from perfwatch.benchmarks.engine import placement, probe_phases
from perfwatch.benchmarks.engine.placement import names_per_primary, pg_of
from perfwatch.benchmarks.engine.probe_coverage import MAX_POOL_PG_NUM, ProbeCoverage, pg_target
from perfwatch.benchmarks.kinds.rados import RadosLatency
from perfwatch.benchmarks.lifecycle import scratch_pgs
from perfwatch.benchmarks.lifecycle.scratch_pgs import grow
from perfwatch.ceph.seam import OsdInfo
from perfwatch.options import config
from perfwatch.options import declared as options
from tests.unit.perfwatch.benchmarks.lifecycle.test_scratch_pgs import IO, OPTS, Cluster, Ctx, Log

NS = "perfwatch"


@pytest.fixture(autouse=True)
def _fast_and_clean(monkeypatch: Any) -> Any:
    monkeypatch.setattr(probe_phases, "PACE_SECONDS", 0.0)
    scratch_pgs.REFUSED.clear()
    yield
    scratch_pgs.REFUSED.clear()


def is_power_of_two(n: int) -> bool:
    return n >= 1 and n & (n - 1) == 0


def probe(ctx: Ctx, io: Any) -> set[int]:
    results = RadosLatency()._probe(ctx, io, 7, 32, NS)  # type: ignore[arg-type]
    return {m.osd for m in results if m.osd is not None}


# ----- tiny clusters -------------------------------------------------------------------------------


@pytest.mark.parametrize("osds", [1, 2, 3])
def test_one_two_three_osds_are_all_measured_every_round_and_every_object_removed(osds: int) -> None:
    ctx, io = Ctx(osds=osds, per_round=1000), IO()
    for n in range(3):
        ctx.run_id = f"rados-20261129T00000{n}-abcd"  # each run its own id
        assert probe(ctx, io) == set(range(osds))
    assert sum(ctx.coverage.counts(0.0).values()) == osds
    written = sorted(name for op, name in io.ops if op == "write")
    assert written == sorted(name for op, name in io.ops if op == "remove")
    assert len(set(written)) == len(written), "no object name used twice"


@pytest.mark.parametrize("osds", [1, 2, 3])
def test_pg_target_on_a_tiny_cluster_stays_within_what_the_mons_allow(osds: int) -> None:
    for size in (1, 2, 3):
        current = 32
        replicas = current * size  # this pool alone
        got = pg_target(current, 32, osds, size, 8, replicas, 250)
        assert got == current or got * size <= 0.8 * 250 * osds, (osds, size, got)
        assert is_power_of_two(got)


# ----- pg_target bounds ----------------------------------------------------------------------------


@pytest.mark.parametrize("osds", [1, 2, 3, 100, 10000, 50000])
@pytest.mark.parametrize("per_osd", [-5.0, 0.0, 8.0, 16.0, 1e9, 1e300])
@pytest.mark.parametrize("max_pg", [-1, 0, 1, 250, 10**9])
def test_pg_target_never_shrinks_never_exceeds_the_pool_limit_and_never_raises(
    osds: int, per_osd: float, max_pg: int
) -> None:
    for current in (1, 32, 100, 4096, MAX_POOL_PG_NUM):
        for floor in (0, 8, 32, 4096, 10**12):
            got = pg_target(current, floor, osds, 3, per_osd, 100 * osds, max_pg)
            assert got >= current
            assert got == current or got <= MAX_POOL_PG_NUM
            assert got in (current, floor) or is_power_of_two(got)


def test_scratch_pool_pg_num_that_is_not_a_power_of_two_never_becomes_the_pools_pg_num() -> None:
    """scratch_pool_pg_num=100 is within its bounds (8..4096) but refused: a pool of 100 PGs would raise Ceph's
    HEALTH_WARN POOL_PG_NUM_NOT_POWER_OF_TWO, and grow() then never runs (it wants HEALTH_OK); pg_target
    rounds such a floor down to a power of two too."""
    cfg, refused = config.read(lambda n: 100 if n == "scratch_pool_pg_num" else options.defaults()[n], lambda n, d: d)
    used_at_creation = cfg.scratch_pool_pg_num
    assert "scratch_pool_pg_num" in refused or is_power_of_two(used_at_creation), "the pool is created with 100 PGs"
    assert is_power_of_two(pg_target(32, 100, 3, 3, 8, 96, 250)), "the docstring promises a power of two"


# ----- huge clusters: planning cost -----------------------------------------------------------------


def primaries_of(osds: int, pgs: int, seed: int) -> dict[int, int]:
    rng = random.Random(seed)
    return {pg: rng.randrange(osds) for pg in range(pgs)}


@pytest.mark.parametrize("osds, per_round", [(10000, 1000), (10000, 10000), (50000, 10000)])
def test_a_rounds_planning_at_10000_and_50000_osds_is_bounded_in_hashes(
    osds: int, per_round: int, monkeypatch: Any
) -> None:
    pgs = pg_target(32, 32, osds, 3, 8, 100 * osds, 250)
    assert pgs <= MAX_POOL_PG_NUM
    primaries = primaries_of(osds, pgs, seed=osds)
    calls = [0]
    real = placement.object_hash

    def counting(name: str, namespace: str = "") -> int:
        calls[0] += 1
        return real(name, namespace)

    monkeypatch.setattr(placement, "object_hash", counting)
    coverage = ProbeCoverage()
    chosen = coverage.choose(range(osds), set(primaries.values()), per_round, 60.0, now=0.0)
    assert len(chosen) == min(per_round, len(set(primaries.values())))
    names = names_per_primary(chosen, primaries, pgs, NS, "rados-20261129T000000-abcd")
    assert calls[0] <= 8 * pgs + 4096, "hashes bounded by the pool's PG count, whatever the OSD count"
    monkeypatch.setattr(placement, "object_hash", real)
    found = {osd: name for osd, name in names.items() if name is not None}
    assert len(found) >= 0.999 * len(chosen)
    assert len(set(found.values())) == len(found), "one object per OSD, never shared"
    for osd, name in list(found.items())[:200]:
        assert primaries[pg_of(name, NS, pgs)] == osd


def test_an_osd_no_name_can_reach_costs_at_most_the_bound_and_does_not_raise(monkeypatch: Any) -> None:
    """A stale PG (beyond pg_num, from lagging stats) is the only one of osd.9: the pass runs to its bound."""
    calls = [0]
    real = placement.object_hash
    monkeypatch.setattr(placement, "object_hash", lambda n, s="": (calls.__setitem__(0, calls[0] + 1), real(n, s))[1])
    out = names_per_primary([9, 1], {1: 1, 40: 9}, 32, NS, "p")
    assert out[9] is None and out[1] is not None
    assert calls[0] == 8 * 32 + 4096


# ----- OSDs that fail, vanish, move --------------------------------------------------------------------


class FailingIO(IO):
    """Writes to the objects of some OSDs time out (a hung OSD still marked up)."""

    def __init__(self, osds: int, failing: set[int]) -> None:
        super().__init__()
        self.osds, self.failing = osds, failing

    def write_full(self, name: str, data: bytes, timeout: float) -> float:
        if pg_of(name, NS, 32) % self.osds in self.failing:
            raise BenchError("write timed out")
        return super().write_full(name, data, timeout)


def test_osds_whose_probe_fails_every_round_do_not_starve_the_rest_of_the_cluster() -> None:
    """A chosen OSD whose write fails has had its turn: with as many failing OSDs as
    rados_probe_osds_per_round, the others are still measured. Once, only a result counted as a turn, the
    failing OSDs stayed 'never measured' and were chosen first every round, and no other OSD was measured."""
    ctx, io = Ctx(osds=20, per_round=4), FailingIO(20, failing={0, 1, 2, 3})
    measured: set[int] = set()
    for _ in range(10):
        with contextlib.suppress(BenchError):
            measured |= probe(ctx, io)
    assert measured >= set(range(4, 20)), "the 16 healthy OSDs within 10 rounds of 4"


def test_a_few_failing_osds_do_not_make_healthy_ones_flap_out_of_fresh() -> None:
    """Same cause: 2 of 4 slots went to the 2 failing OSDs every round, so 18 healthy OSDs took 9 rounds where
    fresh_seconds allows ceil(20/4)+1 = 6: healthy, probed OSDs were counted 'waiting'."""
    ctx, io = Ctx(osds=20, per_round=4), FailingIO(20, failing={0, 1})
    ctx.options["rados_probe_interval"] = 60
    now = [0.0]
    stale_healthy = []
    for n in range(30):
        results = RadosLatency()._probe(ctx, io, 7, 32, NS)  # type: ignore[arg-type]
        ctx.coverage.measured({m.osd for m in results if m.osd is not None}, now[0])  # the round's simulated time
        now[0] += 60.0
        if n >= 12:
            stale_healthy.append(18 - ctx.coverage.counts(now[0] - 1.0)["fresh"])  # just before the next round
    assert max(stale_healthy) == 0, f"healthy OSDs probed every cycle counted not fresh: {stale_healthy}"


def test_osds_that_go_down_come_back_or_disappear_between_rounds() -> None:
    coverage = ProbeCoverage()
    assert coverage.choose(range(10), range(10), 5, 60.0, now=0.0) == [0, 1, 2, 3, 4]
    coverage.measured([0, 1, 2, 3, 4], 0.0)
    # osd.3, osd.4 destroyed; osd.10 and osd.11 new; osd.7 down
    up = [0, 1, 2, 5, 6, 8, 9, 10, 11]
    chosen = coverage.choose(up, up, 5, 60.0, now=30.0)
    assert chosen == [5, 6, 8, 9, 10]
    assert 3 not in chosen and 7 not in chosen
    counts = coverage.counts(30.0)
    assert sum(counts.values()) == len(up), "every up OSD counted once, none that is gone"
    assert counts == {"fresh": 3, "waiting": 6, "unreachable": 0}


def test_osds_the_rule_never_maps_are_unreachable_not_waiting_and_not_stale_forever() -> None:
    """Weight 0, out, or another device class: never a scratch PG's primary. They are counted, as
    unreachable, and do not stretch the rounds or the fresh window."""
    coverage = ProbeCoverage()
    up, reachable = range(10), [0, 1, 2, 3]  # 4..9: hdd, the rule takes ssd
    for n in range(5):
        chosen = coverage.choose(up, reachable, 2, 60.0, now=n * 60.0)
        assert set(chosen) <= set(reachable)
        coverage.measured(chosen, n * 60.0)
    assert coverage.fresh_seconds() == 3 * 60.0
    assert coverage.counts(4 * 60.0) == {"fresh": 4, "waiting": 0, "unreachable": 6}
    # osd.1 moves to hdd: once its result ages out it is unreachable, not waiting
    coverage.choose(up, [0, 2, 3], 2, 60.0, now=5 * 60.0)
    assert coverage.counts(10 * 60.0) == {"fresh": 0, "waiting": 3, "unreachable": 7}


def test_every_up_osd_down_or_unreachable_raises_a_clear_error_not_a_crash() -> None:
    ctx, io = Ctx(osds=3, per_round=3), IO()
    ctx.osds = [OsdInfo(o, f"host{o}", False, "ssd") for o in range(3)]
    with pytest.raises(BenchError, match="no up OSD is the acting primary"):
        probe(ctx, io)
    assert io.ops == []


# ----- the freshness count and the clock ----------------------------------------------------------------


def test_a_backward_clock_jump_does_not_keep_unmeasured_osds_fresh() -> None:
    """Results stamped while the wall clock was a day ahead, then the clock set right (NTP): those stamps,
    later than now, count as never. Once, now - at <= window held for a negative age: the OSDs counted fresh
    for that day, and, stamped 'latest', were chosen last, so never measured again."""
    right = 1_800_000_000.0
    coverage = ProbeCoverage()
    coverage.measured([2, 3], right - 60.0)
    coverage.choose(range(4), range(4), 2, 60.0, now=right + 86400.0)  # chooses 0 and 1, a day ahead
    coverage.measured([0, 1], right + 86400.0)
    assert coverage.counts(right)["fresh"] == 2, "only osd.2 and osd.3, measured a minute ago"
    assert coverage.choose(range(4), range(4), 2, 60.0, now=right) == [0, 1], "never measured in truth: first"


def test_a_forward_clock_jump_makes_results_stale_then_fresh_again() -> None:
    coverage = ProbeCoverage()
    coverage.choose(range(4), range(4), 4, 60.0, now=1000.0)
    coverage.measured(range(4), 1000.0)
    assert coverage.counts(1000.0 + 1e9) == {"fresh": 0, "waiting": 4, "unreachable": 0}
    coverage.measured(coverage.choose(range(4), range(4), 4, 60.0, now=1000.0 + 1e9), 1000.0 + 1e9)
    assert coverage.counts(1000.0 + 1e9)["fresh"] == 4


# ----- a targeted run and the cluster-wide figures --------------------------------------------------------


def test_a_command_run_on_one_osd_does_not_shrink_the_cluster_wide_coverage_series() -> None:
    """`ceph perfwatch bench run rados --osd 5` plans osd.5 only: the cluster-wide coverage view stays, and does
    not become that one OSD (or none, the series gone, for a down OSD) until the next scheduled round."""
    ctx, io = Ctx(osds=20, per_round=1000), IO()
    probe(ctx, io)
    assert sum(ctx.coverage.counts(0.0).values()) == 20
    ctx.pg_primaries = lambda pool_id: {pg: pg % 20 for pg in range(32)}  # type: ignore[method-assign]
    ctx.osds = [OsdInfo(5, "host5", True, "ssd")]  # the plan of a run on osd.5
    ctx.targeted = True
    assert probe(ctx, io) == {5}
    assert sum(ctx.coverage.counts(0.0).values()) == 20, "still 20 up OSDs in the cluster"


# ----- growing the pool: only its own, within bounds ---------------------------------------------------


@pytest.mark.parametrize(
    "entry",
    [
        {"application_metadata": {}},  # a pool of that name the module did not create
        {"application_metadata": {"rbd": {}}},
        {"application_metadata": {"perfwatch": {}, "cephfs": {}}},
        {"pool": 99},  # deleted and recreated under the name
        {"pg_num_target": 16},  # the autoscaler merging it now
        {"pg_placement_num_target": 64},  # pgp_num moving
    ],
)
def test_grow_changes_no_pool_that_is_not_its_own_or_is_changing(entry: dict[str, Any]) -> None:
    cluster = Cluster(**entry)
    assert grow(cluster, "perfwatch", OPTS, Log(), pool_id=7) is None
    assert cluster.commands == []


def test_grow_of_a_deleted_pool_does_nothing() -> None:
    cluster = Cluster()
    cluster.pool_entry = lambda name: None  # type: ignore[method-assign]
    assert grow(cluster, "perfwatch", OPTS, Log(), pool_id=7) is None
    assert cluster.commands == []


@pytest.mark.parametrize("hand_set", [8, 100, 3000, 8192, 131072])
def test_an_operators_pg_num_is_never_shrunk_and_never_raised_past_the_pool_limit(hand_set: int) -> None:
    cluster = Cluster(pg_num=hand_set)
    asked = grow(cluster, "perfwatch", OPTS, Log(), pool_id=7)
    for _name, var, value in cluster.commands:
        assert value >= hand_set
        assert value == hand_set or value <= MAX_POOL_PG_NUM
        if var == "pg_num_min":
            assert value <= max(hand_set, asked or 0)
    assert all(name == "perfwatch" for name, _v, _x in cluster.commands)


@pytest.mark.parametrize(
    "name, value",
    [
        ("scratch_pool_pg_num", 0),
        ("scratch_pool_pg_num", -5),
        ("scratch_pool_pg_num", 10**12),
        ("scratch_pool_pgs_per_osd", -1),
        ("scratch_pool_pgs_per_osd", 10**9),
    ],
)
def test_grow_with_option_values_past_their_bounds_stays_within_the_cluster_limits(name: str, value: int) -> None:
    cluster = Cluster()
    asked = grow(cluster, "perfwatch", {**OPTS, name: value}, Log(), pool_id=7)
    if asked is not None:
        assert is_power_of_two(asked) and asked <= MAX_POOL_PG_NUM
        # 1,200 in OSDs, 40,032 PGs x 3 already: 0.8 x 250 x 1200 = 240,000 replicas allowed
        assert (40000 + asked) * 3 <= 0.8 * 250 * 1200 + 32 * 3


@pytest.mark.parametrize("option", [None, "garbage", "250.0", -1, 0, float("nan")])
def test_an_unreadable_or_odd_mon_max_pg_per_osd_does_not_raise(option: Any) -> None:
    cluster = Cluster()
    cluster.ceph_option = lambda name: option  # type: ignore[method-assign]
    asked = grow(cluster, "perfwatch", OPTS, Log(), pool_id=7)
    assert asked is None or (is_power_of_two(asked) and asked <= MAX_POOL_PG_NUM)


@pytest.mark.parametrize("per_round", [0, -3, 1, 10**9])
def test_osds_per_round_past_its_bounds_still_takes_at_least_one_and_at_most_the_reachable(per_round: int) -> None:
    coverage = ProbeCoverage()
    chosen = coverage.choose(range(50), range(0, 50, 2), per_round, 60.0, now=0.0)
    assert 1 <= len(chosen) <= 25
    assert coverage.fresh_seconds() >= 60.0 and math.isfinite(coverage.fresh_seconds())


def test_names_are_the_runs_own_and_distinct_so_they_never_hit_an_existing_object() -> None:
    ctx, io = Ctx(osds=20, per_round=1000), IO()
    probe(ctx, io)
    written = [name for op, name in io.ops if op == "write"]
    assert all(name.startswith(ctx.run_id + ".") for name in written)
    assert len(set(written)) == len(written)
