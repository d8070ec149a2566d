"""What `ceph perfwatch status` reports, built from plain values so it is testable without a mgr."""

import time
from typing import Any, Dict, List, Optional, Tuple

from ..collection.budget import CollectionBudget
from ..common.daemon_counters import counters
from .output import key_value_lines


def build(
    version: str,
    mgr_id: str,
    active: bool,
    ceph_version: str,
    options: Dict[str, Any],
    started_at: float,
    loop_passes: int,
    last_pass_at: Optional[float],
    now: Optional[float] = None,
    config_errors: Optional[Dict[str, str]] = None,
) -> Dict[str, Any]:
    """`options` are the values in use; `config_errors` (option -> message) the values set but refused,
    each replaced as validation.effective says."""
    now = time.time() if now is None else now
    return {
        "module": "perfwatch",
        "version": version,
        "ceph_version": ceph_version,
        "mgr": mgr_id,
        "active": active,
        "uptime_seconds": round(max(0.0, now - started_at), 1),
        "serve_loop": {
            "passes": loop_passes,
            "last_pass_age_seconds": None if last_pass_at is None else round(max(0.0, now - last_pass_at), 1),
        },
        "options": dict(sorted(options.items())),
        "config_errors": dict(sorted((config_errors or {}).items())),
    }


def render_plain(status: Dict[str, Any]) -> str:
    shown = dict(status)
    if not shown.get("config_errors"):
        shown["config_errors"] = "none"
    return key_value_lines(shown)


def unavailable_report(unavailable: Dict[str, Tuple[str, ...]]) -> Dict[str, Dict[str, object]]:
    """For `ceph perfwatch status`: each release-dependent counter some daemon lacks, which daemons lack
    it and which releases have it."""
    lacking: Dict[str, List[str]] = {}
    for daemon in sorted(unavailable):
        for name in unavailable[daemon]:
            lacking.setdefault(name, []).append(daemon)
    return {name: {"releases": counters.releases_of(name), "daemons": d} for name, d in sorted(lacking.items())}


def cpu_budget(budget: CollectionBudget, cpu_total: float, percent: float, now: float) -> Dict[str, Any]:
    """For `ceph perfwatch status`: what the collections cost and whether the budget puts them off (`now`
    and the budget's times are monotonic seconds)."""
    due = budget.next_at(percent)
    return {
        "cpu_budget_percent": percent,
        "last_cycle_cpu_seconds": round(budget.last_cpu, 3),
        "cpu_seconds_total": round(cpu_total, 3),
        "deferred_passes": budget.deferred,
        "next_allowed_in_seconds": 0.0 if due is None else round(max(0.0, due - now), 1),
    }
