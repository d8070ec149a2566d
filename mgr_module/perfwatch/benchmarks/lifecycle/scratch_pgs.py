"""The scratch pool's PG count, grown with the cluster so the rados probe reaches its OSDs.

An OSD is measured by the light rados probe only while it is the acting primary of a scratch PG: with P
PGs placed by CRUSH over N OSDs, about 1 - exp(-P/N) of them are (P = 32 on 1,000 OSDs reaches at most
32). After a round, when the cluster is healthy, perfwatch grows its own pool towards
probe_coverage.pg_target (a power of two, at most scratch_pool_pgs_per_osd PG replicas per in OSD, within
80 % of what mon_max_pg_per_osd allows the cluster) and sets the pool's pg_num_min to it, so the PG
autoscaler, when it is on, does not shrink the pool back. It never shrinks the pool, nor touches another.
"""

import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..base import BenchError
from ..engine.probe_coverage import pg_target
from .scratch_pool import ownership_problem

SPLIT_WAIT_SECONDS = 30.0  # a PG count change of an empty pool settles in seconds
DEFAULT_MAX_PG_PER_OSD = 250  # mon_max_pg_per_osd's default, when the option cannot be read


def _target(entry: Dict[str, Any]) -> int:
    """The PG count the pool is heading for (pg_num_target since Nautilus; pg_num where absent)."""
    return int(entry.get("pg_num_target", entry.get("pg_num", 0)))


def changing(entry: Dict[str, Any]) -> Optional[str]:
    """How the pool's PG count is still changing ("pg_num 32 -> 64"), None when it is settled: the
    placement of an object computed from pg_num holds only when pg_num and pgp_num are at their targets."""
    pg_num, pgp_num = int(entry.get("pg_num", 0)), int(entry.get("pg_placement_num", entry.get("pg_num", 0)))
    target = _target(entry)
    pgp_target = int(entry.get("pg_placement_num_target", target))
    if pg_num != target:
        return "pg_num {} -> {}".format(pg_num, target)
    if pgp_num != pgp_target:
        return "pgp_num {} -> {}".format(pgp_num, pgp_target)
    return None


def wait_settled(
    adapter: Any,
    pool: str,
    timeout: float = SPLIT_WAIT_SECONDS,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    check: Callable[[], None] = lambda: None,
) -> bool:
    """Before a probe names objects: wait while the pool's PG count changes (True: it changed, read the
    pool again); BenchError if it goes on past the timeout; what check raises (the run's cancel and
    deadline: ctx.check) ends the wait at once."""
    if not hasattr(adapter, "pool_entry"):  # an adapter that cannot say (tests' fakes)
        return False
    deadline = clock() + timeout
    waited = False
    while True:
        entry = adapter.pool_entry(pool)
        how = changing(entry) if entry else None
        if how is None:
            return waited
        if clock() >= deadline:
            raise BenchError(
                "scratch pool {!r} is changing its PG count ({}) for more than {:.0f} s: objects cannot be "
                "placed on chosen OSDs until it settles; the next probe tries again".format(pool, how, timeout)
            )
        waited = True
        check()
        sleep(1.0)


REFUSAL_BACKOFF_SECONDS = 3600.0  # a pg_num the mons refused is not asked for again before this
REFUSED: Dict[Tuple[str, int], float] = {}  # (pool, pg_num asked) -> when the mons refused it (monotonic)


def _owned(adapter: Any, pool: str, entry: Dict[str, Any], pool_id: Optional[int], log: Any) -> bool:
    """Whether the pool the name now points at is the one the run checked (same id) and perfwatch's
    (tagged perfwatch only): a pool deleted and made again under the name, or an operator's pool the
    option was pointed at, is never changed."""
    if pool_id is not None and int(entry.get("pool", -1)) != int(pool_id):
        log.info("scratch pool %s is no longer pool %d (recreated?): not growing it", pool, pool_id)
        return False
    problem = ownership_problem(pool, entry.get("application_metadata") or {})
    if problem:
        log.warning("not growing the scratch pool: %s", problem)
        return False
    return True


def _placement(
    adapter: Any, pool: str, entry: Dict[str, Any], pools: List[Dict[str, Any]]
) -> Optional[Tuple[int, int]]:
    """(in OSDs the pool's CRUSH rule places on, PG replicas on them) for the budget. A rule over a
    subset (a device class, one root) concentrates the pool's PGs on that subset: counting every in OSD
    would put many times the budget on each of them. Where the adapter cannot say, the whole cluster;
    None while the mgr has no PG count for one of them (just active: it would count as empty)."""
    try:
        rule_osds = adapter.pool_rule_osds(pool) if hasattr(adapter, "pool_rule_osds") else None
        counts = adapter.osd_pg_counts() if rule_osds else {}
    except Exception:  # a map the mgr cannot give now: the cluster-wide figures
        rule_osds = None
    if not rule_osds:
        replicas = sum(max(int(p.get("pg_num", 0)), _target(p)) * int(p.get("size", 1)) for p in pools)
        return adapter.in_osd_count(), replicas
    if any(osd not in counts for osd in rule_osds):
        return None
    pending = sum(max(0, _target(p) - int(p.get("pg_num", 0))) * int(p.get("size", 1)) for p in pools)
    return len(rule_osds), sum(counts.get(osd, 0) for osd in rule_osds) + pending


def _declined(log: Any, pool: str, why: str) -> Optional[int]:
    """A growth not attempted now, and why (debug: every round while it lasts); None, as grow returns."""
    log.debug("scratch pool %s not grown now: %s", pool, why)
    return None


def grow(
    adapter: Any,
    pool: str,
    options: Dict[str, Any],
    log: Any,
    pool_id: Optional[int] = None,
    clock: Callable[[], float] = time.monotonic,
    scratch_busy: Callable[[], bool] = lambda: False,
    max_objects: Optional[int] = None,
) -> Optional[int]:
    """Grow the scratch pool towards its target when the cluster is healthy; returns the pg_num asked
    for, None when nothing was changed. Refusals by the mons are logged, never raised, and not asked
    again for an hour: the probe goes on with the PGs the pool has. pool_id: the pool the run checked.
    Only an empty pool is split (no data moves): not while another run writes into it (scratch_busy), nor
    while the mgr counts more than max_objects in it (what the round wrote and removed, its df lagging)."""
    if not hasattr(adapter, "set_pool"):  # an adapter that cannot change pools (tests' fakes)
        return None
    if scratch_busy():
        return _declined(log, pool, "another run writes into it")
    objects = adapter.pool_objects(pool) if max_objects is not None and hasattr(adapter, "pool_objects") else None
    if objects is not None and objects > max_objects:
        return _declined(log, pool, "the mgr counts {} objects in it".format(objects))
    status, pgs = adapter.cluster_state()
    if status != "HEALTH_OK" or any(n and state != "active+clean" for state, n in pgs.items()):
        return _declined(log, pool, "{}, PGs {}".format(status, pgs))  # no peering added to a cluster that is not well
    entry, pools = adapter.pool_entry(pool), adapter.pool_entries()
    if sum(pgs.values()) < sum(int(p.get("pg_num", 0)) for p in pools):
        return _declined(
            log,
            pool,
            "the mgr knows {} PGs of the pools' {}".format(
                sum(pgs.values()), sum(int(p.get("pg_num", 0)) for p in pools)
            ),
        )  # just active: not "all clean"
    if not entry or changing(entry) or not _owned(adapter, pool, entry, pool_id, log):
        return None
    current = _target(entry)
    try:
        max_per_osd = int(adapter.ceph_option("mon_max_pg_per_osd"))
    except Exception:
        max_per_osd = DEFAULT_MAX_PG_PER_OSD
    placement = _placement(adapter, pool, entry, pools)
    if placement is None:
        return _declined(log, pool, "its rule's OSDs or their PG counts are unknown")
    in_osds, replicas = placement
    target = pg_target(
        current,
        int(options["scratch_pool_pg_num"]),
        in_osds,
        int(entry.get("size", 3)),
        float(options["scratch_pool_pgs_per_osd"]),
        replicas,
        max_per_osd,
    )
    pool_options = entry.get("options") or {}
    ceiling = int(pool_options.get("pg_num_max", 0) or 0)  # the operator's (Quincy on): never past it
    if ceiling:
        target = max(current, min(target, ceiling))
    minimum = int(pool_options.get("pg_num_min", 0))
    refused_at = REFUSED.get((pool, target))
    if refused_at is not None and clock() - refused_at < REFUSAL_BACKOFF_SECONDS:
        return None
    asked: Optional[int] = None
    try:
        if target > current:
            log.info("scratch pool %s: pg_num %d -> %d so the rados probe reaches more OSDs", pool, current, target)
            adapter.set_pool(pool, "pg_num", target)
            asked = target
        if minimum < target and (not ceiling or target <= ceiling):  # pg_num_min may not exceed pg_num's target
            adapter.set_pool(pool, "pg_num_min", target)
    except Exception as exc:
        REFUSED[(pool, target)] = clock()
        log.warning("scratch pool %s: growing it to %d PGs was refused (not asked again for an hour): %s",
                    pool, target, exc)  # fmt: skip
        return None
    return asked
