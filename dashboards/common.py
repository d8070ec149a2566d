"""What every perfwatch dashboard shares: its variables, links, tag and uid, and panel builders that always
set a unit, a description and the `$datasource`. Pure: builds Grafana Foundation SDK models, writes nothing.

Queries read recorded series (alerts/recording.py), or a plain gauge of the module where no expression is
involved; thresholds are the production profile's (alerts/profiles.py), the numbers the shipped alerts use.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from typing import TypedDict, TypeVar, Unpack

from grafana_foundation_sdk.builders import common as cb
from grafana_foundation_sdk.builders import dashboard as db
from grafana_foundation_sdk.builders import heatmap, prometheus, stat, statushistory, table, timeseries
from grafana_foundation_sdk.models import common as cm
from grafana_foundation_sdk.models import dashboard as dm
from grafana_foundation_sdk.models import heatmap as hm
from grafana_foundation_sdk.models.prometheus import PromQueryFormat

from alerts.alerting import RUNBOOK_URL
from alerts.profiles import PRODUCTION, Profile
from alerts.promql import sel

SCHEMA_VERSION = 41  # the dashboard schema of Grafana 11.6, which grafana_foundation_sdk 11.6 writes
TAG = "perfwatch"
UID_PREFIX = "perfwatch-"
PROFILE: Profile = PRODUCTION  # every threshold drawn is this profile's: the one the shipped alerts use
DATASOURCE = dm.DataSourceRef(type_val="prometheus", uid="${datasource}")

# The dashboard variables, as the queries use them.
CLUSTER = 'cluster="$cluster"'
HOSTS = 'hostname=~"$host"'
HOST = 'hostname="$host"'
OSDS = 'ceph_daemon=~"$osd"'
OSD = 'ceph_daemon="$osd"'
MODULE = PROFILE.module_selector  # plain gauges of the module are read with its job selector, as the rules do
COUNTERS = PROFILE.daemon_counters_selector  # the OSDs' counter gauges: from the module or the host exporters

Panel = TypeVar("Panel", timeseries.Panel, stat.Panel, table.Panel, heatmap.Panel, statushistory.Panel)
AnyPanel = timeseries.Panel | stat.Panel | table.Panel | heatmap.Panel | statushistory.Panel


@dataclasses.dataclass(frozen=True)
class Query:
    """One PromQL target of a panel: a selector of a recorded series (or of a plain gauge of the module)."""

    expr: str
    legend: str = ""
    instant: bool = False
    fmt: PromQueryFormat = PromQueryFormat.TIME_SERIES


def q(metric: str, *matchers: str, legend: str = "") -> Query:
    """A range query of one series selector: `metric{matchers}`."""
    return Query(sel(metric, *matchers), legend)


def with_baseline(family: str, *matchers: str, legend: str) -> list[Query]:
    """A benchmark family's last results (`ceph_perfwatch_bench_<family>`) and their baselines, plain gauges
    of the module."""
    return [
        q(f"ceph_perfwatch_bench_{family}", MODULE, *matchers, legend=legend),
        q(f"ceph_perfwatch_bench_baseline_{family}", MODULE, *matchers, legend=f"{legend} baseline"),
    ]


@dataclasses.dataclass(frozen=True)
class Steps:
    """Threshold colours: `base` below the first value, then each (value, colour) from that value up."""

    base: str
    steps: tuple[tuple[float, str], ...]

    def model(self) -> dm.ThresholdsConfig:
        first = [dm.Threshold(value=None, color=self.base)]
        return dm.ThresholdsConfig(steps=first + [dm.Threshold(value=v, color=c) for v, c in self.steps])


def limit(field: str) -> float:
    """A threshold of the profile, by its field name (so a test can name where each drawn number comes from)."""
    return float(getattr(PROFILE, field))


def over(field: str, colour: str = "red") -> Steps:
    """Green below the profile's `field`, `colour` from it up."""
    return Steps("green", ((limit(field), colour),))


VERDICT = Steps("green", ((1.0, "red"),))  # 0/1 series: 1 is saturated (or regressed)


def runbook(alert: str) -> db.DashboardLink:
    """A panel link to the runbook section of the alert whose signal the panel shows."""
    return db.DashboardLink(f"Runbook: {alert}").url(f"{RUNBOOK_URL}#{alert.lower()}").target_blank(True)


def to_dashboard(name: str, title: str, *params: str) -> db.DashboardLink:
    """A link to another perfwatch dashboard, keeping the time range and passing `params` (`var-x=...`)."""
    query = "&".join(("${__url_time_range}", "${datasource:queryparam}", "${cluster:queryparam}", *params))
    return db.DashboardLink(title).url(f"/d/{UID_PREFIX}{name}/{UID_PREFIX}{name}?{query}")


def _target(query: Query, ref: str) -> prometheus.Dataquery:
    target = prometheus.Dataquery().expr(query.expr).ref_id(ref).legend_format(query.legend or "__auto")
    if query.instant:
        target.instant()
    else:
        target.range()
    if query.fmt != PromQueryFormat.TIME_SERIES:
        target.format(query.fmt)
    return target


class Options(TypedDict, total=False):
    steps: Steps  # thresholds
    links: Sequence[db.DashboardLink]  # panel links (the runbook, another dashboard)
    width: int  # of 24 columns; 8 unless given
    height: int  # grid rows; 8 unless given


def panel(
    p: Panel, title: str, description: str, unit: str, queries: Sequence[Query], **opts: Unpack[Options]
) -> Panel:
    """Title, description (how to read it), unit, queries on `$datasource`, thresholds and links: every panel
    of the dashboards is made here, so none lacks a unit or a description."""
    if not description.strip() or not unit or not queries:
        raise ValueError(f"{title}: a panel needs a description, a unit and a query")
    p.title(title).description(description).unit(unit).datasource(DATASOURCE)
    p.span(opts.get("width", 8)).height(opts.get("height", 8))
    for index, query in enumerate(queries):
        p.with_target(_target(query, chr(ord("A") + index)))
    if "steps" in opts:
        p.thresholds(db.ThresholdsConfig().mode(dm.ThresholdsMode.ABSOLUTE).steps(opts["steps"].model().steps))
    if opts.get("links"):
        p.links(list(opts["links"]))
    return p


def graph(
    title: str, description: str, unit: str, queries: Sequence[Query], **opts: Unpack[Options]
) -> timeseries.Panel:
    """A time series; thresholds, when given, drawn as dashed lines."""
    p = panel(timeseries.Panel(), title, description, unit, queries, **opts)
    p.fill_opacity(10).show_points(cm.VisibilityMode.NEVER)
    if "steps" in opts:
        p.thresholds_style(cb.GraphThresholdsStyleConfig().mode(cm.GraphThresholdsStyleMode.DASHED))
    return p


def per_field(p: Panel, steps: dict[str, Steps], by_query: bool = False) -> Panel:
    """Other thresholds for some fields: by display name, or by query refId."""
    for name, field_steps in steps.items():
        props = [dm.DynamicConfigValue(id_val="thresholds", value=field_steps.model())]
        if by_query:
            p.override_by_query(name, props)
        else:
            p.override_by_name(name, props)
    return p


def states(
    title: str, description: str, queries: Sequence[Query], labels: tuple[str, str], **opts: Unpack[Options]
) -> statushistory.Panel:
    """A status history of 0/1 series: 0 shows labels[0] in green, 1 labels[1] in red."""
    opts["steps"] = VERDICT
    p = panel(statushistory.Panel(), title, description, "none", queries, **opts)
    results = {"0": dm.ValueMappingResult(text=labels[0], color="green", index=0)}
    results["1"] = dm.ValueMappingResult(text=labels[1], color="red", index=1)
    p.mappings([dm.ValueMap(options=results)]).show_value(cm.VisibilityMode.NEVER)
    return p.line_width(1).fill_opacity(70)


def figure(title: str, description: str, unit: str, queries: Sequence[Query], **opts: Unpack[Options]) -> stat.Panel:
    """A stat: the last value of each series, coloured by its thresholds, with a sparkline."""
    p = panel(stat.Panel(), title, description, unit, queries, **opts)
    p.reduce_options(cb.ReduceDataOptions().calcs(["lastNotNull"]).values(False))
    return p.color_mode(cm.BigValueColorMode.BACKGROUND).graph_mode(cm.BigValueGraphMode.AREA)


def listing(
    title: str, description: str, unit: str, query: Query, *, top: int = 0, **opts: Unpack[Options]
) -> table.Panel:
    """A table of an instant query's series, one row each, labels as columns. With `top`, the `top` rows of
    largest value first; without, the value is left out (info and ALERTS series: the labels are the news)."""
    instant = dataclasses.replace(query, instant=True, fmt=PromQueryFormat.TABLE)
    p = panel(table.Panel(), title, description, unit, [instant], **opts)
    p.align(cm.FieldTextAlignment.AUTO).inspect(False)
    hidden = {"Time": True, "__name__": True, **({} if top else {"Value": True})}
    p.with_transformation(dm.DataTransformerConfig(id_val="organize", options={"excludeByName": hidden}))
    if top:
        by_value = {"sort": [{"field": "Value", "desc": True}]}
        p.with_transformation(dm.DataTransformerConfig(id_val="sortBy", options=by_value))
        p.with_transformation(dm.DataTransformerConfig(id_val="limit", options={"limitField": top}))
    return p


def latency_heatmap(title: str, description: str, query: Query, **opts: Unpack[Options]) -> heatmap.Panel:
    """A heatmap of a histogram's recorded bucket rates (`le` buckets, seconds up the y axis)."""
    buckets = dataclasses.replace(query, legend="{{le}}", fmt=PromQueryFormat.HEATMAP)
    p = panel(heatmap.Panel(), title, description, "s", [buckets], **opts)
    p.calculate(False).y_axis(heatmap.YAxisConfig().unit("s")).cell_values(heatmap.CellValues().unit("ops"))
    return p.color(heatmap.HeatmapColorOptions().mode(hm.HeatmapColorMode.SCHEME).scheme("Oranges").steps(64))


# ----- variables ---------------------------------------------------------------------------------------


def datasource_variable() -> db.DatasourceVariable:
    return db.DatasourceVariable("datasource").label("Data source").type("prometheus")


def query_variable(
    name: str, label: str, query: str, description: str, *, multi: bool = False, all_value: str = ""
) -> db.QueryVariable:
    """label_values(...) from the `$datasource`, refreshed with the time range, in natural order."""
    v = db.QueryVariable(name).label(label).description(description).query(query).datasource(DATASOURCE)
    v.refresh(dm.VariableRefresh.ON_TIME_RANGE_CHANGED).sort(dm.VariableSort.NATURAL_ASC)
    if multi:
        v.multi(True).include_all(True)
        if all_value:
            v.all_value(all_value)
    return v


def cluster_variable() -> db.QueryVariable:
    # every cluster whose perfwatch module Prometheus scrapes (each target carries `cluster`: the fsid)
    return query_variable(
        "cluster",
        "Cluster",
        "label_values(cluster:ceph_perfwatch_module_targets:count, cluster)",
        "The Ceph cluster (its fsid, the `cluster` label of every perfwatch target).",
    )


def host_variable(multi: bool = True) -> db.QueryVariable:
    return query_variable(
        "host",
        "Host",
        f"label_values(osd:ceph_perfwatch_osd:info{{{CLUSTER}}}, hostname)",
        "Hosts with OSDs, as the host exporter names them (its --hostname).",
        multi=multi,
        all_value=".+" if multi else "",
    )


def osd_variable(multi: bool, source: str = "osd:ceph_perfwatch_osd:info", *matchers: str) -> db.QueryVariable:
    return query_variable(
        "osd",
        "OSD",
        f"label_values({sel(source, CLUSTER, *matchers)}, ceph_daemon)",
        "The OSD (ceph_daemon, as Ceph's own exporters label it).",
        multi=multi,
        all_value=".+" if multi else "",
    )


# ----- the dashboard -----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Row:
    title: str
    panels: Sequence[AnyPanel]


def board(
    name: str, title: str, description: str, variables: Sequence[db.QueryVariable], rows: Sequence[Row]
) -> dm.Dashboard:
    """A perfwatch dashboard: uid `perfwatch-<name>`, the `perfwatch` tag, `$datasource` and `$cluster`
    first, links to the other perfwatch dashboards (by tag) and to the runbook; rows of panels, numbered."""
    d = db.Dashboard(title).uid(UID_PREFIX + name).description(description).tags([TAG])
    d.time("now-3h", "now").refresh("1m").timezone("browser").tooltip(dm.DashboardCursorSync.CROSSHAIR)
    d.with_variable(datasource_variable()).with_variable(cluster_variable())
    for variable in variables:
        d.with_variable(variable)
    d.link(
        db.DashboardLink("perfwatch")
        .type(dm.DashboardLinkType.DASHBOARDS)
        .tags([TAG])
        .as_dropdown(True)
        .include_vars(True)
        .keep_time(True)
    )
    d.link(db.DashboardLink("Runbook").type(dm.DashboardLinkType.LINK).url(RUNBOOK_URL).icon("doc").target_blank(True))
    ids = itertools.count(1)
    for row in rows:
        d.with_row(db.Row(row.title).id(next(ids)))
        for p in row.panels:
            d.with_panel(p.id(next(ids)))
    model = d.build()
    if model.schema_version != SCHEMA_VERSION:
        raise RuntimeError(f"the SDK writes schemaVersion {model.schema_version}, not {SCHEMA_VERSION}")
    return model
