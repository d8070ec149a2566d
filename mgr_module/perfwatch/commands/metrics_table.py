"""The per-OSD summary behind `ceph perfwatch metrics`: hit ratios and RocksDB pressure at a glance."""

from typing import Any, Dict, List, Optional

from ..common.daemon_counters import counters as c

COLUMNS = (
    ("daemon", "OSD"),
    ("onode_hit_ratio", "ONODE HIT"),
    ("buffer_hit_ratio", "BUFFER HIT"),
    ("compaction_queue", "COMPACT Q"),
    ("compactions", "COMPACTIONS"),
    ("write_stall_seconds", "STALL S"),
    ("spillover_bytes", "SPILLOVER"),
    ("db_used_bytes", "DB USED"),
    ("age_seconds", "AGE S"),
)


def _ratio(hits: Optional[float], misses: Optional[float]) -> Optional[float]:
    if hits is None or misses is None or hits + misses == 0:
        return None
    return round(hits / (hits + misses), 4)


def rows(latest: Dict[str, Dict[str, float]], last_success: Dict[str, float], now: float) -> List[Dict[str, Any]]:
    out = []
    daemons = {d for d in list(latest) + list(last_success) if d.startswith("osd.")}
    for daemon in sorted(daemons, key=lambda d: int(d.split(".")[1])):
        v = latest.get(daemon, {})  # empty when the last read failed: the row shows its age only
        compactions = [value for key, value in v.items() if key.startswith(c.COMPACTIONS)]
        seen = last_success.get(daemon)
        out.append(
            {
                "daemon": daemon,
                "onode_hit_ratio": _ratio(v.get(c.ONODE_HITS), v.get(c.ONODE_MISSES)),
                "buffer_hit_ratio": _ratio(v.get(c.BUF_HIT), v.get(c.BUF_MISS)),
                "compaction_queue": v.get(c.COMPACT_QUEUE),
                "compactions": sum(compactions) if compactions else None,
                "write_stall_seconds": v.get(c.WRITE_DELAY),
                "spillover_bytes": v.get(c.SLOW_USED),
                "db_used_bytes": v.get(c.DB_USED),
                "age_seconds": None if seen is None else round(max(0.0, now - seen), 1),
            }
        )
    return out


def _cell(key: str, value: Any) -> str:
    if value is None:
        return "-"
    if key.endswith("_ratio"):
        return "{:.1%}".format(value)
    if key.endswith("_bytes"):
        return human_bytes(value)
    if isinstance(value, float) and value == int(value):
        return str(int(value))
    return str(value)


def human_bytes(value: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return "{:.0f} {}".format(value, unit) if unit == "B" else "{:.1f} {}".format(value, unit)
        value /= 1024.0
    return str(value)


def render_plain(table: List[Dict[str, Any]]) -> str:
    if not table:
        return "no OSD counters collected yet (first collection pending, or no OSD answered)"
    cells = [[title for _, title in COLUMNS]] + [[_cell(k, row[k]) for k, _ in COLUMNS] for row in table]
    widths = [max(len(r[i]) for r in cells) for i in range(len(COLUMNS))]
    return "\n".join(
        "  ".join(cell.rjust(w) if i else cell.ljust(w) for i, (cell, w) in enumerate(zip(r, widths))) for r in cells
    )
