"""Growing the scratch pool (scratch_pgs.grow), adversarially: never a pool that is not perfwatch's (another
pool of that name, a pool tagged for something else), not past an operator's pg_num_max, and not again
and again every round when the mons refuse."""

from __future__ import annotations

from typing import Any

import pytest

from perfwatch.benchmarks.lifecycle import scratch_pgs
from perfwatch.benchmarks.lifecycle.scratch_pgs import grow
from tests.unit.perfwatch.benchmarks.lifecycle.test_scratch_pgs import OPTS, Cluster, Log
from tests.unit.perfwatch.benchmarks.test_runner import env, wait_done  # noqa: F401 (env: a fixture)


@pytest.fixture(autouse=True)
def _no_remembered_refusals() -> Any:
    scratch_pgs.REFUSED.clear()
    yield
    scratch_pgs.REFUSED.clear()


def owned(**entry: Any) -> Cluster:
    return Cluster(pool=7, application_metadata={"perfwatch": {}}, **entry)


@pytest.mark.parametrize(
    "apps", [{}, {"rbd": {}}, {"perfwatch": {}, "rbd": {}}, {"rgw": {}}], ids=["untagged", "rbd", "both", "rgw"]
)
def test_a_pool_that_is_not_perfwatchs_is_never_changed(apps: dict[str, Any]) -> None:
    cluster, log = Cluster(pool=7, application_metadata=apps), Log()
    assert grow(cluster, "perfwatch", OPTS, log, pool_id=7) is None
    assert cluster.commands == []
    assert any("not perfwatch's" in line or "also used by" in line for line in log.lines), log.lines


def test_a_pool_recreated_under_the_name_during_the_round_is_never_changed() -> None:
    cluster = owned()
    cluster.entry["pool"] = 8  # perfwatch's pool 7 was deleted and another made with its name
    assert grow(cluster, "perfwatch", OPTS, Log(), pool_id=7) is None
    assert cluster.commands == []


def test_its_own_pool_grows() -> None:
    cluster = owned()
    assert grow(cluster, "perfwatch", OPTS, Log(), pool_id=7) == 2048
    assert cluster.commands == [("perfwatch", "pg_num", 2048), ("perfwatch", "pg_num_min", 2048)]


def test_an_operators_pg_num_max_is_a_ceiling() -> None:
    cluster = owned(options={"pg_num_max": 256})
    assert grow(cluster, "perfwatch", OPTS, Log(), pool_id=7) == 256
    assert cluster.commands == [("perfwatch", "pg_num", 256), ("perfwatch", "pg_num_min", 256)]
    cluster = owned(pg_num=512, options={"pg_num_max": 256})  # already above it: left as it is
    assert grow(cluster, "perfwatch", OPTS, Log(), pool_id=7) is None and cluster.commands == []


def test_a_refusal_is_not_asked_again_every_round() -> None:
    cluster, now = owned(), [0.0]
    cluster.refuse = True
    calls: list[str] = []
    original = cluster.set_pool

    def counting(name: str, var: str, value: int) -> None:
        calls.append(var)
        original(name, var, value)

    cluster.set_pool = counting  # type: ignore[method-assign]
    for _ in range(30):  # half an hour of rounds a minute apart
        grow(cluster, "perfwatch", OPTS, Log(), pool_id=7, clock=lambda: now[0])
        now[0] += 60
    assert calls == ["pg_num"], "asked once, then left until the cluster changes or an hour passes"
    now[0] = 3700.0
    grow(cluster, "perfwatch", OPTS, Log(), pool_id=7, clock=lambda: now[0])
    assert calls == ["pg_num", "pg_num"], "asked again after an hour"


class Subset(Cluster):
    """1,200 in OSDs, but the scratch pool's CRUSH rule (a device class) places on 100 of them."""

    def __init__(self, per_osd: int, **entry: Any) -> None:
        super().__init__(pool=7, application_metadata={"perfwatch": {}}, **entry)
        self.per_osd = per_osd

    def pool_rule_osds(self, name: str) -> set[int]:
        return set(range(100))

    def osd_pg_counts(self) -> dict[int, int]:
        return {osd: (self.per_osd if osd < 100 else 10) for osd in range(1200)}


def test_a_rule_over_a_subset_of_the_osds_budgets_for_that_subset() -> None:
    cluster = Subset(per_osd=100)
    # 8 x 100 / 3 = 266 -> 256 PGs: 7.7 more PG replicas on each of the 100 OSDs (2048 would be 61)
    assert grow(cluster, "perfwatch", OPTS, Log(), pool_id=7) == 256
    cluster = Subset(per_osd=195)  # 0.8 x 250 leaves 5 per OSD there: 500 replicas, 166 PGs + the 32 -> 128
    assert grow(cluster, "perfwatch", OPTS, Log(), pool_id=7) == 128
    cluster = Subset(per_osd=205)  # past 80 % there already, however idle the rest of the cluster
    assert grow(cluster, "perfwatch", OPTS, Log(), pool_id=7) is None
    assert cluster.commands == [("perfwatch", "pg_num_min", 32)]


def test_a_cancel_ends_the_wait_for_a_splitting_pool_at_once() -> None:
    from perfwatch.benchmarks.base import Cancelled
    from perfwatch.benchmarks.lifecycle.scratch_pgs import wait_settled

    cluster, now, checks = owned(pg_num=32, pg_num_target=64), [0.0], [0]

    def check() -> None:
        checks[0] += 1
        if now[0] >= 2:
            raise Cancelled("cancelled by the operator")

    with pytest.raises(Cancelled):
        wait_settled(cluster, "perfwatch", 30, clock=lambda: now[0],
                     sleep=lambda s: now.__setitem__(0, now[0] + s), check=check)  # fmt: skip
    assert now[0] <= 2.0, "not the 30 s the split may take"


def test_a_probe_attributes_by_the_current_osd_map_not_the_lagging_pg_stats(monkeypatch: Any) -> None:
    """Just after a split the mgr's PG stats still name the primary a PG had before pgp_num moved it: a
    result written there would be another OSD's. The OSD map the mgr holds now decides."""
    from perfwatch.benchmarks.engine import probe_phases
    from perfwatch.benchmarks.kinds.rados import RadosLatency
    from tests.unit.perfwatch.benchmarks.lifecycle.test_scratch_pgs import IO, Ctx

    monkeypatch.setattr(probe_phases, "PACE_SECONDS", 0.0)
    ctx, io = Ctx(osds=20, per_round=8), IO()
    moved = {3: 9, 23: 9}  # PGs 3 and 23 (osd.3's, say the stats) are osd.9's in the current map

    def acting_primaries(pool_id: int, pgs: Any) -> dict[int, int]:
        return {pg: moved.get(pg, pg % 20) for pg in pgs}

    ctx.acting_primaries = acting_primaries  # type: ignore[attr-defined]
    results = RadosLatency()._probe(ctx, io, 7, 32, "perfwatch")  # type: ignore[arg-type]
    probed = {m.osd for m in results}
    assert 3 not in probed, "osd.3 is the primary of no PG in the current map"
    assert probed == {0, 1, 2, 4, 5, 6, 7, 8}, "the 8 lowest reachable ones"
    assert len(io.ops) == 24


def test_a_pool_with_data_in_it_is_not_split_under_a_running_benchmark() -> None:
    """A heavy rbd round writes into the same pool while a light probe runs (they are different kinds):
    splitting it then moves its data during the benchmark."""
    cluster = owned()
    assert grow(cluster, "perfwatch", OPTS, Log(), pool_id=7, scratch_busy=lambda: True) is None
    cluster.objects = 5000  # type: ignore[attr-defined]
    cluster.pool_objects = lambda name: cluster.objects  # type: ignore[attr-defined]
    assert grow(cluster, "perfwatch", OPTS, Log(), pool_id=7, max_objects=1000) is None
    assert cluster.commands == []
    cluster.objects = 800  # the round's own, removed, still in the mgr's df
    assert grow(cluster, "perfwatch", OPTS, Log(), pool_id=7, max_objects=1000) == 2048


def test_the_lifecycle_tells_a_run_whether_another_writes_into_the_scratch_pool(
    env: dict,  # noqa: F811 (the fixture imported above)
    monkeypatch: Any,
) -> None:
    from perfwatch.benchmarks.base import Benchmark, Context
    from perfwatch.benchmarks.kinds.registry import KINDS

    class Probe(Benchmark):
        name, heavy, scratch_pool = "probe", False, True

        def __init__(self) -> None:
            self.seen: list[bool] = []

        def run(self, ctx: Context) -> list:
            self.seen.append(ctx.scratch_busy())
            return []

    probe = Probe()
    monkeypatch.setitem(KINDS, "probe", probe)
    monkeypatch.setattr(env["kind"], "scratch_pool", True, raising=False)
    env["kind"].release.clear()
    heavy = env["runner"].start("fake", None, {})
    wait_done(env["runner"], env["runner"].start("probe", None, {}).run_id)
    env["kind"].release.set()
    wait_done(env["runner"], heavy.run_id)
    wait_done(env["runner"], env["runner"].start("probe", None, {}).run_id)
    assert probe.seen == [True, False], "busy while the heavy round writes there; not once it ended"


def test_a_mgr_that_does_not_know_every_pg_yet_changes_nothing() -> None:
    """Just after a failover the new mgr's PG summary and osd_stats fill in over seconds: no unclean PG
    and no PG on an OSD is not the same as all clean and an empty OSD."""
    cluster = owned()
    cluster.pgs = {}
    assert grow(cluster, "perfwatch", OPTS, Log(), pool_id=7) is None
    cluster.pgs = {"active+clean": 20000}  # of the 40,032 PGs its pools have
    assert grow(cluster, "perfwatch", OPTS, Log(), pool_id=7) is None
    subset = Subset(per_osd=195)
    subset.osd_pg_counts = lambda: {osd: 195 for osd in range(50)}  # type: ignore[method-assign]
    assert grow(subset, "perfwatch", OPTS, Log(), pool_id=7) is None, "50 of its 100 OSDs not reported yet"
    assert cluster.commands == [] and subset.commands == []


def test_the_probe_counts_what_librbd_leaves_in_the_pool_as_empty(monkeypatch: Any) -> None:
    """rbd_directory, rbd_info, rbd_trash stay after the rbd kind's images are gone: a 3-OSD lab whose
    round wrote 3 objects must still grow its pool."""
    from perfwatch.benchmarks.engine import probe_phases
    from perfwatch.benchmarks.kinds import rados
    from tests.unit.perfwatch.benchmarks.lifecycle.test_scratch_pgs import IO, Ctx

    monkeypatch.setattr(probe_phases, "PACE_SECONDS", 0.0)
    asked: list[Any] = []
    monkeypatch.setattr(rados, "grow", lambda *a, **k: asked.append(k["max_objects"]))
    rados.RadosLatency()._probe(Ctx(osds=3, per_round=3), IO(), 7, 32, "perfwatch")  # type: ignore[arg-type]
    assert asked and asked[0] >= 3 + 5, asked
