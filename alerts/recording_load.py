"""Whose load: the share of client ops each pool and client brings to an OSD and a host, from the module's
OSD perf queries (load_attribution), and the shares on the OSDs a verdict names.

A share is an entity's ops over the OSD's total, read and write together (an op that does both counts twice
here, once in `ceph perfwatch top`); a host's sums its OSDs' as primaries. Only each OSD's load_top_per_osd
busiest pools and clients are exported, so a host's shares undercount the rest; client shares are
approximate while ceph_perfwatch_load_clients_sampled_osds is above 0. A device's alert quotes each of its
OSDs' shares: PromQL cannot sum over that many-to-many map. More: docs/operating.md#whose-load.
"""

from __future__ import annotations

from .profiles import Profile
from .promql import Rule, by, rule, sel
from .recording_network import ONE_HOST_PER_OSD

ENTITIES = ("pool", "client")
OSD_TOTAL = "osd:ceph_perfwatch_load_ops:rate"
ON_OSD = "on (cluster, ceph_daemon)"
# each OSD's host (the topology group's), one per OSD: an OSD under two hostnames would make the join fail
OSD_HOST = ONE_HOST_PER_OSD


def share(level: str, entity: str) -> str:
    """The recorded share of client ops of each `entity` (pool, client) per `level` (osd, host)."""
    return f"{level}:ceph_perfwatch_load_{entity}_ops:ratio"


def ops(entity: str) -> str:
    return f"osd:ceph_perfwatch_load_{entity}_ops:rate"


def load_rules(p: Profile, verdict: str) -> list[Rule]:
    """verdict: the per-OSD verdict series (recording.VERDICT)."""
    mod = p.module_selector
    out = [
        # read and write together; max over the module's endpoints (only the active mgr exports these)
        rule(
            OSD_TOTAL,
            by(
                "cluster, ceph_daemon",
                "sum",
                by("cluster, ceph_daemon, op", "max", sel("ceph_perfwatch_load_osd_ops", mod)),
            ),
        ),
    ]
    for entity in ENTITIES:
        keep = f"cluster, ceph_daemon, {entity}"
        out.append(
            rule(
                ops(entity),
                by(keep, "sum", by(f"{keep}, op", "max", sel(f"ceph_perfwatch_load_osd_{entity}_ops", mod))),
            )
        )
        out.append(rule(share("osd", entity), f"{ops(entity)}\n/ {ON_OSD} group_left ()\n({OSD_TOTAL} > 0)"))
        part = by(f"cluster, hostname, {entity}", "sum", f"{ops(entity)}\n* {ON_OSD} group_left (hostname)\n{OSD_HOST}")
        total = by("cluster, hostname", "sum", f"{OSD_TOTAL}\n* {ON_OSD} group_left (hostname)\n{OSD_HOST}")
        out.append(rule(share("host", entity), f"{part}\n/ on (cluster, hostname) group_left ()\n({total} > 0)"))
        # on the OSDs a verdict names (any resource): the dashboard's "whose load" table
        out.append(
            rule(
                f"osd:ceph_perfwatch_saturated_load_{entity}_ops:ratio",
                f"{share('osd', entity)}\n* {ON_OSD} group_left (hostname)\n"
                f"topk by (cluster, ceph_daemon) (1, max by (cluster, hostname, ceph_daemon) ({verdict} == 1))",
            )
        )
    return out
