"""What `bench status` and `bench history` show, as data (report_text.py renders it for people)."""

from typing import Any, Dict, Iterable, List, Optional

from .records.store import BenchStore
from .run import Run


def status(runs: Iterable[Run], store: BenchStore) -> Dict[str, Any]:
    """Running and recent runs, active regressions, and the runs whose scratch awaits cleanup."""
    ordered = sorted(runs, key=lambda r: r.started_at)
    return {
        "running": [r.to_dict(with_results=False) for r in ordered if r.state == "running"],
        "recent": [r.to_dict(with_results=False) for r in ordered if r.state != "running"][-10:],
        "regressions": sorted(store.regressions()),
        "scratch_pending_cleanup": sorted(store.scratch_run_ids()),
    }


def history(
    kinds: Iterable[str], store: BenchStore, kind: Optional[str], osd: Optional[int], limit: int
) -> List[Dict[str, Any]]:
    """The last `limit` runs, oldest first, of one kind or all; with an OSD, only runs (and results) of it."""
    chosen = [kind] if kind else sorted(kinds)
    records = [r for k in chosen for r in store.history(k)]
    if osd is not None:
        records = [
            dict(r, results=[m for m in r["results"] if m.get("osd") == osd])
            for r in records
            if osd in r.get("osds", []) or any(m.get("osd") == osd for m in r.get("results", []))
        ]
    records.sort(key=lambda r: r.get("started_at", 0))
    return records[-limit:]
