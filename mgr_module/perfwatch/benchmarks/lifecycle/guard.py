"""Whether a heavy round may start now. Pure: the cluster's state in, the reasons to refuse out."""

from typing import Dict, Iterable, List


def refusal_reasons(
    health_status: str,
    pg_states: Dict[str, int],
    osd_up: Dict[int, bool],
    plan_osds: Iterable[int],
) -> List[str]:
    reasons = []
    if health_status == "HEALTH_ERR":
        reasons.append("the cluster is HEALTH_ERR")
    total = sum(pg_states.values())
    unclean = {state: n for state, n in pg_states.items() if state != "active+clean"}
    if unclean:
        states = ", ".join("{} {}".format(n, s) for s, n in sorted(unclean.items()))
        reasons.append("{} of {} PGs are not active+clean ({})".format(sum(unclean.values()), total, states))
    if any(("recover" in s or "backfill" in s) for s in unclean):
        reasons.append("recovery or backfill is running")
    missing = [osd for osd in plan_osds if osd not in osd_up]
    down = [osd for osd in plan_osds if osd in osd_up and not osd_up[osd]]
    if missing:
        reasons.append("no such OSD: {}".format(", ".join("osd.{}".format(o) for o in missing)))
    if down:
        reasons.append("down: {}".format(", ".join("osd.{}".format(o) for o in down)))
    return reasons


def client_latency_too_high(before: Dict[str, float], after: Dict[str, float], threshold_seconds: float) -> bool:
    """Whether client ops during a step averaged above the threshold.

    before/after are an OSD logger's op_latency sum and avgcount ({"sum": s, "avgcount": n}) taken
    around the step; no client op in the step is never a reason to abort.
    """
    count = after.get("avgcount", 0) - before.get("avgcount", 0)
    if count <= 0:
        return False
    return (after.get("sum", 0.0) - before.get("sum", 0.0)) / count > threshold_seconds
