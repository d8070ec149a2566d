"""The dashboards' queries as Prometheus would run them, for tests against a live Prometheus: every panel's
queries (and every variable's series selector) with the dashboard variables set to given values, and the
panels that can only have data under a condition. Pure: reads dashboard JSON (dicts), runs nothing.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping
from typing import Any

# A variable reference: $name, ${name} or ${name:format}, and the old [[name]]
REFERENCE = re.compile(r"\$\{(\w+)(?::[^}]*)?\}|\$(\w+)|\[\[(\w+)(?::[^\]]*)?\]\]")
LABEL_VALUES = re.compile(r"^\s*label_values\((.*),\s*\w+\s*\)\s*$", re.DOTALL)


@dataclasses.dataclass(frozen=True)
class PanelQuery:
    dashboard: str  # uid
    panel: str  # title
    ref_id: str
    expr: str  # with the variables substituted
    instant: bool


@dataclasses.dataclass(frozen=True)
class Conditional:
    """A panel that has data only under a condition, and what a test must do or see for it."""

    dashboard: str  # uid
    panel: str  # title
    condition: str


# Kept short: every other panel has data on a cluster running the module, the host exporter, node_exporter
# and Ceph's prometheus module, a few minutes after the light probes started (their baselines need
# baseline_min_results probes).
CONDITIONAL_PANELS: tuple[Conditional, ...] = (
    Conditional("perfwatch-bottlenecks", "Alerts firing", "only while a perfwatch alert fires"),
    Conditional(
        "perfwatch-bottlenecks",
        "Verdicts that cannot be made",
        "only while a verdict's input is missing (osd:ceph_perfwatch_verdict_input_missing:info)",
    ),
    Conditional(
        "perfwatch-osd-detail",
        "CPU against its cgroup limit",
        "only for an OSD under a cgroup CPU limit (ceph_perfwatch_daemon_cgroup_cpu_limit_cores)",
    ),
    Conditional(
        "perfwatch-osd-detail",
        "osd bench against its baseline",
        "only after `ceph perfwatch bench run --kind osd` on the OSD; its baseline after baseline_min_results runs",
    ),
    Conditional(
        "perfwatch-benchmarks",
        "osd bench: 4 KiB write IOPS per OSD",
        "only after an osd benchmark; the baselines after baseline_min_results runs",
    ),
    Conditional(
        "perfwatch-benchmarks",
        "osd bench: 4 MiB write throughput per OSD",
        "only after an osd benchmark; the baselines after baseline_min_results runs",
    ),
    Conditional(
        "perfwatch-benchmarks",
        "Measured IOPS per stored GB",
        "only after an osd benchmark, with data stored in the cluster's pools",
    ),
    Conditional(
        "perfwatch-benchmarks",
        "rgw probe: omap_set_latency",
        "only after an rgw probe ran since the active mgr started (it needs a bucket-index pool)",
    ),
    Conditional(
        "perfwatch-rgw-bucket-index",
        "Bucket-index op latency",
        "only once a bucket exists (RGW creates its index pool with the first one) and an rgw probe ran",
    ),
    Conditional(
        "perfwatch-rgw-bucket-index",
        "S3 PUT and LIST latency",
        "only with mgr/perfwatch/rgw_s3_endpoint and the probe user's keys set, after an rgw probe",
    ),
    # the Bottlenecks dashboard's "whose load" tables of the saturated OSDs (the per-host ones have data
    # whenever load_attribution is on and clients write)
    Conditional(
        "perfwatch-bottlenecks",
        "Pools on saturated OSDs",
        "only while a saturation verdict names an OSD and load_attribution is on (the CPU saturation test's alert "
        "quotes these shares)",
    ),
    Conditional(
        "perfwatch-bottlenecks",
        "Clients on saturated OSDs",
        "only while a saturation verdict names an OSD and load_attribution is on (the CPU saturation test's alert "
        "quotes these shares)",
    ),
)


@dataclasses.dataclass(frozen=True)
class ReleaseDependent:
    """A panel of module families only some Ceph releases have: it has data exactly where the module exports
    them (the module reports the counters behind them in `counters_unavailable` elsewhere)."""

    dashboard: str  # uid
    panel: str  # title
    families: tuple[str, ...]  # the module families (metric names) it reads


RELEASE_DEPENDENT_PANELS: tuple[ReleaseDependent, ...] = (
    ReleaseDependent(
        "perfwatch-bluestore",
        "Compactions finished and running (Reef 18.2 and later)",
        ("ceph_perfwatch_rocksdb_compactions_completed_total", "ceph_perfwatch_rocksdb_compactions_running"),
    ),
    ReleaseDependent(
        "perfwatch-bluestore",
        "Last compaction duration (Reef 18.2 and later)",
        ("ceph_perfwatch_rocksdb_last_compaction_duration_seconds",),
    ),
)


def substitute(text: str, values: Mapping[str, str]) -> str:
    """`text` with every reference to a variable of `values` replaced by its value (others left as they are)."""

    def value(match: re.Match[str]) -> str:
        name = next(group for group in match.groups() if group)
        return values.get(name, match.group(0))

    return REFERENCE.sub(value, text)


def panels(dashboard: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every panel but rows, those inside collapsed rows included."""
    for panel in dashboard.get("panels", []):
        if panel.get("type") == "row":
            yield from panel.get("panels", [])
        else:
            yield panel


def panel_queries(dashboard: Mapping[str, Any], values: Mapping[str, str]) -> list[PanelQuery]:
    """Each panel's each query, variables set to `values` (e.g. {"cluster": fsid, "host": "host1",
    "osd": "osd.0"}; a multi-value variable may take a regex, as Grafana writes one: `(osd\\.0|osd\\.1)`)."""
    return [
        PanelQuery(
            dashboard["uid"],
            panel["title"],
            target.get("refId", ""),
            substitute(target["expr"], values),
            bool(target.get("instant")),
        )
        for panel in panels(dashboard)
        for target in panel.get("targets", [])
    ]


def variable_selectors(dashboard: Mapping[str, Any], values: Mapping[str, str]) -> dict[str, str]:
    """Variable name -> the series selector its `label_values(selector, label)` reads, variables substituted."""
    out = {}
    for variable in dashboard.get("templating", {}).get("list", []):
        query = variable.get("query")
        query = query.get("query", "") if isinstance(query, dict) else query
        match = LABEL_VALUES.match(query or "") if variable.get("type") == "query" else None
        if match:
            out[variable["name"]] = substitute(match.group(1), values)
    return out


def conditional(uid: str, title: str) -> Conditional | None:
    return next((c for c in CONDITIONAL_PANELS if (c.dashboard, c.panel) == (uid, title)), None)


def release_dependent(uid: str, title: str) -> ReleaseDependent | None:
    return next((r for r in RELEASE_DEPENDENT_PANELS if (r.dashboard, r.panel) == (uid, title)), None)
