"""The scratch pool's PG count, grown with the cluster so the rados probe reaches its OSDs.

An OSD is measured by the light rados probe only while it is the acting primary of a scratch PG: with P
PGs placed by CRUSH over N OSDs, about 1 - exp(-P/N) of them are (P = 32 on 1,000 OSDs reaches at most
32). After a round, when the cluster is healthy, perfwatch grows its own pool towards
probe_coverage.pg_target (a power of two, at most scratch_pool_pgs_per_osd PG replicas per in OSD, within
80 % of what mon_max_pg_per_osd allows the cluster) and sets the pool's pg_num_min to it, so the PG
autoscaler, when it is on, does not shrink the pool back. It never shrinks the pool, nor touches another.
"""

import time
from typing import Any, Callable, Dict, Optional

from .base import BenchError
from .probe_coverage import pg_target

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
) -> bool:
    """Before a probe names objects: wait while the pool's PG count changes (True: it changed, read the
    pool again); BenchError if it goes on past the timeout."""
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
        sleep(1.0)


def grow(adapter: Any, pool: str, options: Dict[str, Any], log: Any) -> Optional[int]:
    """Grow the scratch pool towards its target when the cluster is healthy; returns the pg_num asked
    for, None when nothing was changed. Refusals by the mons are logged, never raised: the probe goes on
    with the PGs the pool has."""
    if not hasattr(adapter, "set_pool"):  # an adapter that cannot change pools (tests' fakes)
        return None
    status, pgs = adapter.cluster_state()
    if status != "HEALTH_OK" or any(n and state != "active+clean" for state, n in pgs.items()):
        return None  # never add peering to a cluster that is recovering or warning
    entry = adapter.pool_entry(pool)
    if not entry or changing(entry):
        return None
    current = _target(entry)
    try:
        max_per_osd = int(adapter.ceph_option("mon_max_pg_per_osd"))
    except Exception:
        max_per_osd = DEFAULT_MAX_PG_PER_OSD
    replicas = sum(max(int(p.get("pg_num", 0)), _target(p)) * int(p.get("size", 1)) for p in adapter.pool_entries())
    target = pg_target(
        current,
        int(options["scratch_pool_pg_num"]),
        adapter.in_osd_count(),
        int(entry.get("size", 3)),
        float(options["scratch_pool_pgs_per_osd"]),
        replicas,
        max_per_osd,
    )
    minimum = int((entry.get("options") or {}).get("pg_num_min", 0))
    asked: Optional[int] = None
    try:
        if target > current:
            log.info("scratch pool %s: pg_num %d -> %d so the rados probe reaches more OSDs", pool, current, target)
            adapter.set_pool(pool, "pg_num", target)
            asked = target
        if minimum < target:  # pg_num_min may not exceed pg_num's target: set after it
            adapter.set_pool(pool, "pg_num_min", target)
    except Exception as exc:
        log.warning("scratch pool %s: growing it to %d PGs was refused: %s", pool, target, exc)
        return None
    return asked
