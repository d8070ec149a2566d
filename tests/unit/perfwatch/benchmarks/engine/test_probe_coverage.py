"""Every OSD measured: the scratch pool's PG count for a cluster's size, the rounds that
cover every reachable OSD at 1,000 and 10,000 simulated OSDs, and the coverage figures."""

from __future__ import annotations

import math
import random

import pytest

from perfwatch.benchmarks.engine.probe_coverage import MAX_POOL_PG_NUM, ProbeCoverage, pg_target, rounds_to_cover
from perfwatch.collection import module_families as mf

MAX_PER_OSD = 250  # mon_max_pg_per_osd's default


def target(osds: int, current: int = 32, floor: int = 32, budget: float = 8, per_osd_now: int = 100) -> int:
    return pg_target(current, floor, osds, 3, budget, per_osd_now * osds, MAX_PER_OSD)


def test_the_pool_grows_to_the_largest_power_of_two_within_the_budget() -> None:
    assert target(4) == 32, "a small cluster keeps scratch_pool_pg_num"
    assert target(1000) == 2048  # 8 x 1000 / 3 = 2666
    assert target(10000) == 16384  # 26,666
    assert target(100000) == MAX_POOL_PG_NUM, "the mons refuse more than 65,536 PGs in one pool"
    assert target(1000, budget=0) == 32, "0: never beyond the floor"
    assert target(1000, floor=4096) == 4096, "the floor is the least"


def test_the_pool_never_shrinks_and_leaves_the_operator_a_fifth_of_the_pg_limit() -> None:
    assert target(1000, current=4096) == 4096
    # 190 PG replicas per OSD already: 0.8 x 250 leaves 10 per OSD, 3,333 PGs at size 3 -> 2048 still fits
    assert target(1000, per_osd_now=190) == 2048
    # 198 per OSD: 2 per OSD left, 666 PGs -> 512 (with the 32 it has)
    assert target(1000, per_osd_now=198) == 512
    # at the limit already: the pool stays as it is
    assert target(1000, per_osd_now=230) == 32


def simulate(osds: int, pgs: int, seed: int) -> dict[int, int]:
    """PG -> acting primary, as CRUSH spreads primaries: uniformly at random over equal OSDs."""
    rng = random.Random(seed)
    return {pg: rng.randrange(osds) for pg in range(pgs)}


@pytest.mark.parametrize("osds", [1000, 10000])
def test_every_reachable_osd_has_a_result_within_the_rounds_to_cover_it(osds: int) -> None:
    pgs = target(osds)
    primaries = simulate(osds, pgs, seed=osds)
    reachable = set(primaries.values())
    expected = 1 - math.exp(-pgs / osds)
    assert abs(len(reachable) / osds - expected) < 0.02, "the share of OSDs that are a primary"
    coverage = ProbeCoverage()
    up = range(osds)
    per_round, interval = 1000, 60.0
    rounds = rounds_to_cover(len(reachable), per_round)
    assert rounds == math.ceil(len(reachable) / per_round)
    measured: set[int] = set()
    when: dict[int, float] = {}
    for n in range(rounds):
        chosen = coverage.choose(up, reachable, per_round, interval, now=n * interval)
        assert len(chosen) <= per_round and set(chosen) <= reachable
        new = set(chosen) - measured
        assert len(new) == min(per_round, len(reachable - measured)), "the OSDs not measured yet first"
        measured |= set(chosen)
        coverage.measured(chosen, n * interval)
        when.update(dict.fromkeys(chosen, n * interval))
    assert measured == reachable, "every reachable OSD within ceil(reachable / per round) rounds"
    counts = coverage.counts(rounds * interval)
    assert counts == {"fresh": len(reachable), "waiting": 0, "unreachable": osds - len(reachable)}
    # the next round starts over with the OSD measured longest ago
    oldest = sorted(reachable, key=lambda osd: (when[osd], osd))[:per_round]
    assert coverage.choose(up, reachable, per_round, interval, now=rounds * interval) == sorted(oldest)


def test_an_osd_that_comes_up_or_becomes_reachable_is_taken_first() -> None:
    coverage = ProbeCoverage()
    coverage.measured([0, 1, 2], 100.0)
    chosen = coverage.choose([0, 1, 2, 3], [0, 1, 2, 3], 2, 60.0, now=150.0)
    assert chosen == [0, 3], "never measured first, then oldest"
    coverage.measured([0, 3], 200.0)
    assert coverage.choose([0, 1, 2, 3], [0, 1, 2, 3], 2, 60.0, now=250.0) == [1, 2]
    assert coverage.choose([0, 1, 3], [0, 1, 2, 3], 5, 60.0, now=300.0) == [0, 1, 3], "a down OSD is not probed"


def test_results_age_out_of_fresh_and_down_osds_are_not_counted() -> None:
    coverage = ProbeCoverage()
    coverage.choose(range(4), [0, 1, 2], 2, 0.0, now=0.0)  # probes on command only: a round counts as a minute
    assert coverage.fresh_seconds() == 180.0
    coverage.choose(range(4), [0, 1, 2], 2, 60.0, now=0.0)  # 3 reachable, 2 a round: 2 rounds, fresh for 3
    coverage.measured([0, 1], 0.0)
    assert coverage.fresh_seconds() == 180.0
    assert coverage.counts(100.0) == {"fresh": 2, "waiting": 1, "unreachable": 1}
    assert coverage.counts(181.0) == {"fresh": 0, "waiting": 3, "unreachable": 1}
    coverage.choose([0, 2], [0, 1, 2], 2, 60.0, now=0.0)  # osd.1 and osd.3 went down
    assert coverage.counts(100.0) == {"fresh": 1, "waiting": 1, "unreachable": 0}


def test_the_coverage_series_say_nothing_before_the_first_round_then_count_every_up_osd() -> None:
    coverage = ProbeCoverage()
    assert coverage.samples(0.0) == []
    coverage.choose(range(10), range(7), 3, 60.0, now=0.0)
    coverage.measured([0, 1, 2], 0.0)
    by_state = {dict(s.labels)["state"]: s.value for s in coverage.samples(1.0) if s.family == mf.BENCH_PROBE_COVERAGE}
    assert by_state == {"fresh": 3.0, "waiting": 4.0, "unreachable": 3.0}
    (rounds,) = [s for s in coverage.samples(1.0) if s.family == mf.BENCH_PROBE_ROUNDS_TO_COVER]
    assert rounds.value == 3.0 and dict(rounds.labels) == {"kind": "rados"}
