"""The records of runs: one run (Run.to_dict()), a kind's history, the runs in progress. Pure."""

from typing import Any, Dict, Optional, Tuple

from ..measurement import UNITS
from . import common


def measurement_problem(data: Any) -> Optional[str]:
    """Why Measurement.from_dict must not be fed this, or None when it may."""
    if not isinstance(data, dict):
        return "a {} where a result should be".format(common.type_name(data))
    for field in ("kind", "metric"):
        if not isinstance(data.get(field), str) or not common.NAME.match(data[field]):
            return "result {} {!r} is not a name".format(field, data.get(field))
    osd = data.get("osd")
    if osd is not None and not (common.is_int(osd) and osd >= 0):
        return "result osd {!r} is not an OSD id".format(osd)
    if not common.is_number(data.get("value")):
        return "result value {!r} is not a number".format(data.get("value"))
    if data.get("unit") not in UNITS:
        return "result unit {!r} is not one of {}".format(data.get("unit"), ", ".join(UNITS))
    return None


_RUN_REQUIRED: Tuple[Tuple[str, type], ...] = (  # read with [] by the runner, report_text.py and the module
    ("run_id", str),
    ("kind", str),
    ("state", str),
    ("progress", float),
    ("started_at", float),
    ("results", list),
)
_RUN_OPTIONAL: Tuple[Tuple[str, type], ...] = (  # read with .get(); checked when present
    ("heavy", bool),
    ("trigger", str),
    ("message", str),
    ("params", dict),
    ("osds", list),
    ("ended_at", float),
    ("results_omitted", int),  # results left out to fit the record into the mgr store (fit.py)
    ("osds_omitted", int),  # and OSDs of its list, when not even one result fits
)


def clean_run(data: Any, kind: Optional[str] = None) -> common.Cleaned:
    """One history entry (Run.to_dict()). Bad results inside it are dropped, the run kept."""
    if not isinstance(data, dict):
        return common.unusable("a {} where a run should be".format(common.type_name(data)))
    for field, wanted in _RUN_REQUIRED:
        if field not in data:
            return common.unusable("run {} has no {}".format(data.get("run_id", "?"), field))
        if not common.has_type(data[field], wanted):
            return common.unusable(
                "run {} field {} is a {}".format(data.get("run_id", "?"), field, common.type_name(data[field]))
            )
    for field, wanted in _RUN_OPTIONAL:
        value = data.get(field)
        if value is not None and not common.has_type(value, wanted):
            return common.unusable("run {} field {} is a {}".format(data["run_id"], field, common.type_name(value)))
    if not common.NAME.match(data["kind"]) or (kind is not None and data["kind"] != kind):
        return common.unusable("run {} has kind {!r} in the history of {!r}".format(data["run_id"], data["kind"], kind))
    osds = data.get("osds")
    if osds is not None and not all(common.is_int(o) for o in osds):
        return common.unusable("run {} lists OSDs that are not ids".format(data["run_id"]))
    results, dropped = [], []
    for raw in data["results"]:
        problem = measurement_problem(raw)
        if problem is None:
            results.append(raw)
        else:
            dropped.append("run {}: {}".format(data["run_id"], problem))
    out = dict(data)
    out["results"] = results
    return common.ok(out, dropped)


def clean_history(data: Any, kind: str) -> common.Cleaned:
    """bench/history/<kind>: a list of runs, oldest first."""
    if not isinstance(data, list):
        return common.unusable("a {} where a list of runs should be".format(common.type_name(data)))
    runs, dropped = [], []
    for raw in data:
        cleaned = clean_run(raw, kind)
        dropped.extend(cleaned.dropped)
        if cleaned.value is not None:
            runs.append(cleaned.value)
    if len(runs) > common.MAX_HISTORY:
        dropped.append("{} oldest runs beyond {}".format(len(runs) - common.MAX_HISTORY, common.MAX_HISTORY))
        runs = runs[-common.MAX_HISTORY :]
    return common.ok(runs, dropped)


def clean_running(data: Any) -> common.Cleaned:
    """bench/running: run id -> the record of a run in progress, with what it had measured so far.
    What a new active mgr finds here was interrupted (the mgr running it died or failed over)."""
    found, dropped = common.as_mapping(data, "the runs in progress")
    if found is None:
        return common.unusable(dropped[0])
    out: Dict[str, Any] = {}
    for run_id, raw in found.items():
        cleaned = clean_run(raw)
        dropped.extend(cleaned.dropped)
        if cleaned.value is not None and cleaned.value["run_id"] == run_id:
            out[run_id] = cleaned.value
        else:
            dropped.append("run in progress {!r}: not a run record".format(run_id))
    return common.ok(out, common.bounded(out, dropped))
