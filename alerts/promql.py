"""Small PromQL builders shared by the recording rules and the alerts: selectors, rates, ratios.

Pure string functions; every expression of the project is built from these in recording.py, once.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

# Every recorded series keeps these, so that several clusters in one Prometheus never mix.
OSD_DEVICE = "cluster, hostname, ceph_daemon, device, role"
OSD_HOST = "cluster, hostname, ceph_daemon"
OSD = "cluster, ceph_daemon"
HOST = "cluster, hostname"
HOST_DEVICE = "cluster, hostname, device"
CLUSTER = "cluster"


OSD_ONLY = 'ceph_daemon=~"osd\\\\..+"'  # written into YAML as the PromQL regex osd\..+

Rule = dict[str, Any]


def rule(record: str, expr: str) -> Rule:
    """One recording rule."""
    return {"record": record, "expr": expr}


def sel(metric: str, *matchers: str) -> str:
    """`metric{a, b}` from the non-empty matchers (each `label op "value"`, or several joined by commas)."""
    parts = [m for m in matchers if m]
    return f"{metric}{{{', '.join(parts)}}}" if parts else metric


def rate(series: str, window: str) -> str:
    return f"rate({series}[{window}])"


def by(labels: str, aggregation: str, expr: str) -> str:
    return f"{aggregation} by ({labels}) ({expr})"


def mean_from_summary(prefix: str, matchers: tuple[str, ...], labels: str, window: str) -> str:
    """Mean of a summary's observations over the window: rate(_sum) / rate(_count), 0 when none."""
    total = by(labels, "sum", rate(sel(f"{prefix}_sum", *matchers), window))
    count = by(labels, "sum", rate(sel(f"{prefix}_count", *matchers), window))
    return f"{total}\n/\nclamp_min({count}, 1e-9)"


def either(
    metric: str,
    exp: str,
    mod: str,
    *matchers: str,
    over: Callable[[str], str] = lambda s: s,
    labels: str = "",
) -> str:
    """A daemon counter family (or `over` it, e.g. its rate) per OSD and `labels` (the family's own labels,
    such as op or reason), from one source: the host exporter's where it reads that OSD's counters
    (--daemon-counters), else the module's. Never both: with both on (a mis-set option) the exporter's alone
    count, and PerfwatchDaemonCountersFromTwoSources says so. Two exporter targets reading one OSD (two
    exporters on a host, or a host known by two names) count once too: the max over them. A label value
    only one source has (fetch_errors' reason "down", the module's) is taken from that source."""
    keep = f"{OSD}, {labels}" if labels else OSD
    ours = by(keep, "max", over(sel(metric, exp, *matchers)))
    return f"(\n{ours}\nor on ({keep})\n{over(sel(metric, mod, *matchers))}\n)"


def mean_from_counters(prefix: str, exp: str, mod: str, labels: str, window: str) -> str:
    """mean_from_summary of a daemon counter summary, from one source per OSD (either)."""
    total = by(labels, "sum", either(f"{prefix}_sum", exp, mod, over=lambda s: rate(s, window)))
    count = by(labels, "sum", either(f"{prefix}_count", exp, mod, over=lambda s: rate(s, window)))
    return f"{total}\n/\nclamp_min({count}, 1e-9)"


def with_label(expr: str, label: str, value: str) -> str:
    """The series of `expr` with one more label set to a constant."""
    return f'label_replace({expr}, "{label}", "{value}", "", "")'


SELECTOR = re.compile(r"(?<![:\w])([a-zA-Z_][a-zA-Z0-9_]*)(\{[^}]*\})")


def input_selectors(expr: str) -> list[str]:
    """The raw series selectors an expression reads (`name{matchers}`; recorded names have colons and no
    matchers here, so they are not inputs)."""
    return [name + matchers for name, matchers in SELECTOR.findall(expr)]
