"""What `ceph perfwatch status` reports, built from plain values so it is testable without a mgr."""

import time
from typing import Any, Dict, Optional

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
) -> Dict[str, Any]:
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
    }


def render_plain(status: Dict[str, Any]) -> str:
    return key_value_lines(status)
