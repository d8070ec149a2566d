"""The scratch pool's maps inside ceph-mgr, for MgrAdapter: pools as the OSD map has them, the OSDs a pool's
CRUSH rule reaches and their PG counts, the acting primaries the current OSD map gives, and `osd pool set`."""

from typing import Any, Dict, Iterable, List, Optional, Set


class PoolMaps:
    module: Any  # the MgrModule

    def mon_command(self, command: Dict[str, Any]) -> Any:  # MgrAdapter's
        raise NotImplementedError

    def _pools(self) -> List[Dict[str, Any]]:
        return (self.module.get("osd_map") or {}).get("pools", [])

    def pool_entry(self, name: str) -> Optional[Dict[str, Any]]:
        """The pool as the OSD map has it (pg_num, pg_num_target, size, options, ...), None if absent."""
        for pool in self._pools():
            if pool.get("pool_name") == name:
                return dict(pool)
        return None

    def pool_entries(self) -> List[Dict[str, Any]]:
        return [dict(pool) for pool in self._pools()]

    def in_osd_count(self) -> int:
        return sum(1 for osd in (self.module.get("osd_map") or {}).get("osds", []) if osd.get("in"))

    def pool_rule_osds(self, name: str) -> Optional[Set[int]]:
        """In OSDs under the takes of the pool's CRUSH rule, with a CRUSH weight (as the balancer reads a take)."""
        entry, crush = self.pool_entry(name), self.module.get_osdmap().get_crush()
        rule = crush.get_rule_by_id(int(entry["crush_rule"])) if entry else None
        takes = [s["item"] for s in (rule or {}).get("steps", []) if s.get("op") == "take"]
        under = {osd for t in takes for osd, weight in crush.get_take_weight_osd_map(t).items() if weight > 0}
        return {o["osd"] for o in self.module.get("osd_map")["osds"] if o.get("in") and o["osd"] in under} or None

    def osd_pg_counts(self) -> Dict[int, int]:
        return {int(s["osd"]): int(s["num_pgs"]) for s in (self.module.get("osd_stats") or {}).get("osd_stats", [])}

    def ceph_option(self, name: str) -> Any:
        return self.module.get_ceph_option(name)

    def set_pool(self, name: str, var: str, value: int) -> None:
        self.module.log.info("scratch pool %s: setting %s to %s", name, var, value)
        self.mon_command({"prefix": "osd pool set", "pool": name, "var": var, "val": str(value)})

    def acting_primaries(self, pool_id: int, pgs: Iterable[int]) -> Dict[int, int]:
        """PG -> acting primary as the mgr's current OSD map computes it (the PG stats lag it by seconds,
        more while a pool splits): one map for all of them."""
        osdmap = self.module.get_osdmap()
        out: Dict[int, int] = {}
        for pg in pgs:
            primary = int(osdmap.pg_to_up_acting_osds(pool_id, pg).get("acting_primary", -1))
            if primary >= 0:
                out[pg] = primary
        return out
