"""Free space as the mgr's maps give it, per OSD and per pool: the figures the benchmarks' capacity rules
(benchmarks/lifecycle/capacity.py) judge a run's writes against. Pure."""

from typing import Any, Dict, NamedTuple, Optional, Tuple

KIB = 1 << 10


class OsdSpace(NamedTuple):
    osd: int
    total: int  # bytes
    used: int
    avail: int


class PoolSpace(NamedTuple):
    name: str
    id: int
    size: int  # replicas (k+m for an erasure-coded pool)
    max_avail: Optional[int]  # client bytes the pool can take before its first OSD is full; None: unknown
    osds: Tuple[int, ...]  # OSDs in the up sets of its PGs; empty when no PG has reported yet


class CapacityView(NamedTuple):
    osds: Dict[int, OsdSpace]
    nearfull_ratio: float
    pools: Dict[str, PoolSpace]


def view_from_payloads(osd_stats: Any, osd_map: Any, df: Any, pg_stats: Any) -> CapacityView:
    """A CapacityView from get('osd_stats'), get('osd_map'), get('df') and get('pg_stats')."""
    osds: Dict[int, OsdSpace] = {}
    for stat in (osd_stats or {}).get("osd_stats", []):
        kb = int(stat.get("kb", 0))
        if kb > 0:  # an OSD that has not reported yet shows kb 0: no figures
            osd = int(stat["osd"])
            osds[osd] = OsdSpace(osd, kb * KIB, int(stat.get("kb_used", 0)) * KIB, int(stat.get("kb_avail", 0)) * KIB)
    max_avail = {int(p["id"]): int(p["stats"]["max_avail"]) for p in (df or {}).get("pools", []) if "stats" in p}
    members: Dict[int, set] = {}
    for pg in (pg_stats or {}).get("pg_stats", []):
        pool_id = int(str(pg.get("pgid", "-1.0")).split(".")[0])
        members.setdefault(pool_id, set()).update(o for o in pg.get("up", []) if o >= 0)
    pools: Dict[str, PoolSpace] = {}
    for pool in (osd_map or {}).get("pools", []):
        pool_id = int(pool["pool"])
        pools[pool["pool_name"]] = PoolSpace(
            pool["pool_name"],
            pool_id,
            int(pool.get("size", 1)),
            max_avail.get(pool_id),
            tuple(sorted(members.get(pool_id, ()))),
        )
    return CapacityView(osds, float((osd_map or {}).get("nearfull_ratio", 0.85)), pools)
