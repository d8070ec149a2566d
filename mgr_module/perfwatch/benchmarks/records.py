"""The shapes of the records BenchStore keeps in the mgr store, and how one read back is checked. Pure.

Versions (one number for every record under "bench/"):
  1  today's records before versioning: the bare JSON of the value (no envelope).
  2  the same values in an envelope: {"version": 2, "data": <value>}.
A reader migrates every version up to VERSION and sets aside what is newer or broken (see store.py).

Each clean_* function takes the decoded value and returns a Cleaned: the value as the store will keep
it (None when nothing of it can be used) and what was dropped, said for one log line. Fields that the
code reads are checked for presence and type; fields it does not know are kept as they are, so a newer
writer's extra fields pass through.
"""

import math
import re
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from .results import UNITS

VERSION = 2
MAX_KEYS = 10000  # baselines, regressions, streaks, last_run, scratch runs, recovered run ids
MAX_SCRATCH_ENTRIES = 100  # per run: a kind registers one or two
MAX_HISTORY = 1000  # per kind; the history_limit option's maximum

# "osd/write_iops_4k/osd.3", "rgw/s3_put_latency/-": what Measurement.key makes and split_key reads.
RESULT_KEY = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/(-|osd\.[0-9]+)$")
NAME = re.compile(r"^[A-Za-z0-9_.-]+$")  # a kind or a metric name
# runner.new_run_id: "<kind>-YYYYmmddTHHMMSS-xxxx"; also found inside "perfwatch.<run id>" image names.
RUN_ID = re.compile(r"(?<![A-Za-z0-9_])([a-z][a-z0-9_]{0,31})-([0-9]{8}T[0-9]{6})-([0-9a-f]{4})(?![A-Za-z0-9])")
SCRATCH_TEXT_FIELDS = ("pool", "namespace", "prefix", "image")  # what the kinds' cleanup reads


class Cleaned(NamedTuple):
    value: Any  # None: nothing usable
    dropped: List[str]  # one short note per thing dropped
    recovered: Dict[str, str]  # scratch only: run id -> kind, of runs named in broken material


def _ok(value: Any, dropped: Optional[List[str]] = None, recovered: Optional[Dict[str, str]] = None) -> Cleaned:
    return Cleaned(value, dropped or [], recovered or {})


def _unusable(why: str) -> Cleaned:
    return Cleaned(None, [why], {})


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def run_ids_in(text: str) -> Dict[str, str]:
    """Run ids (and the kind each names) found anywhere in a text, e.g. an unreadable scratch record."""
    return {m.group(0): m.group(1) for m in RUN_ID.finditer(text)}


def kind_of_run_id(run_id: str) -> str:
    m = RUN_ID.fullmatch(run_id)
    return m.group(1) if m else ""


# ----- one measurement, one run --------------------------------------------------------------------


def measurement_problem(data: Any) -> Optional[str]:
    """Why Measurement.from_dict must not be fed this, or None when it may."""
    if not isinstance(data, dict):
        return "a {} where a result should be".format(_type_name(data))
    for field in ("kind", "metric"):
        if not isinstance(data.get(field), str) or not NAME.match(data[field]):
            return "result {} {!r} is not a name".format(field, data.get(field))
    osd = data.get("osd")
    if osd is not None and not (is_int(osd) and osd >= 0):
        return "result osd {!r} is not an OSD id".format(osd)
    if not is_number(data.get("value")):
        return "result value {!r} is not a number".format(data.get("value"))
    if data.get("unit") not in UNITS:
        return "result unit {!r} is not one of {}".format(data.get("unit"), ", ".join(UNITS))
    return None


_RUN_REQUIRED: Tuple[Tuple[str, type], ...] = (  # read with [] by the runner, report.py and the module
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
)


def _has_type(value: Any, wanted: type) -> bool:
    if wanted is float:
        return is_number(value)
    if wanted is bool:
        return isinstance(value, bool)
    return isinstance(value, wanted)


def clean_run(data: Any, kind: Optional[str] = None) -> Cleaned:
    """One history entry (Run.to_dict()). Bad results inside it are dropped, the run kept."""
    if not isinstance(data, dict):
        return _unusable("a {} where a run should be".format(_type_name(data)))
    for field, wanted in _RUN_REQUIRED:
        if field not in data:
            return _unusable("run {} has no {}".format(data.get("run_id", "?"), field))
        if not _has_type(data[field], wanted):
            return _unusable("run {} field {} is a {}".format(data.get("run_id", "?"), field, _type_name(data[field])))
    for field, wanted in _RUN_OPTIONAL:
        value = data.get(field)
        if value is not None and not _has_type(value, wanted):
            return _unusable("run {} field {} is a {}".format(data["run_id"], field, _type_name(value)))
    if not NAME.match(data["kind"]) or (kind is not None and data["kind"] != kind):
        return _unusable("run {} has kind {!r} in the history of {!r}".format(data["run_id"], data["kind"], kind))
    osds = data.get("osds")
    if osds is not None and not all(is_int(o) for o in osds):
        return _unusable("run {} lists OSDs that are not ids".format(data["run_id"]))
    results, dropped = [], []
    for raw in data["results"]:
        problem = measurement_problem(raw)
        if problem is None:
            results.append(raw)
        else:
            dropped.append("run {}: {}".format(data["run_id"], problem))
    out = dict(data)
    out["results"] = results
    return _ok(out, dropped)


# ----- whole records ---------------------------------------------------------------------------------


def clean_history(data: Any, kind: str) -> Cleaned:
    """bench/history/<kind>: a list of runs, oldest first."""
    if not isinstance(data, list):
        return _unusable("a {} where a list of runs should be".format(_type_name(data)))
    runs, dropped = [], []
    for raw in data:
        cleaned = clean_run(raw, kind)
        dropped.extend(cleaned.dropped)
        if cleaned.value is not None:
            runs.append(cleaned.value)
    if len(runs) > MAX_HISTORY:
        dropped.append("{} oldest runs beyond {}".format(len(runs) - MAX_HISTORY, MAX_HISTORY))
        runs = runs[-MAX_HISTORY:]
    return _ok(runs, dropped)


def _mapping(data: Any, what: str) -> Tuple[Optional[Dict[str, Any]], List[str]]:
    if not isinstance(data, dict):
        return None, ["a {} where {} should be".format(_type_name(data), what)]
    return data, []


def bound(mapping: Dict[str, Any], limit: Optional[int] = None) -> List[str]:
    """Trim a dict in place to `limit` (MAX_KEYS) keys, the first in sorted order staying; returns the keys dropped."""
    limit = MAX_KEYS if limit is None else limit
    if len(mapping) <= limit:
        return []
    extra = sorted(mapping)[limit:]
    for key in extra:
        del mapping[key]
    return extra


def _bounded(out: Dict[str, Any], dropped: List[str]) -> List[str]:
    extra = bound(out)
    if extra:
        dropped.append("{} keys beyond {}".format(len(extra), MAX_KEYS))
    return dropped


def clean_baselines(data: Any) -> Cleaned:
    """bench/baselines: result key -> recent values."""
    found, dropped = _mapping(data, "baselines")
    if found is None:
        return _unusable(dropped[0])
    out: Dict[str, List[float]] = {}
    for key, values in found.items():
        if not RESULT_KEY.match(key):
            dropped.append("baseline key {!r}".format(key))
            continue
        if not isinstance(values, list):
            dropped.append("baseline {}: a {} where values should be".format(key, _type_name(values)))
            continue
        numbers = [float(v) for v in values if is_number(v)]
        if len(numbers) < len(values):
            dropped.append("baseline {}: {} values that are not numbers".format(key, len(values) - len(numbers)))
        if numbers:
            out[key] = numbers
    return _ok(out, _bounded(out, dropped))


_REGRESSION_REQUIRED: Tuple[Tuple[str, type], ...] = (("value", float), ("reason", str))  # _update_health formats these
_REGRESSION_OPTIONAL: Tuple[Tuple[str, type], ...] = (
    ("key", str),
    ("baseline", float),
    ("ratio", float),
    ("peer_baseline", float),
    ("peer_ratio", float),
    ("regressed", bool),
    ("run_id", str),
    ("at", float),
    ("consecutive", int),
)


def _regression_problem(key: str, value: Any) -> Optional[str]:
    if not RESULT_KEY.match(key):
        return "regression key {!r}".format(key)
    if not isinstance(value, dict):
        return "regression {}: a {}".format(key, _type_name(value))
    for field, wanted in _REGRESSION_REQUIRED:
        if not _has_type(value.get(field), wanted):
            return "regression {}: {} is a {}".format(key, field, _type_name(value.get(field)))
    if value.get("unit") not in UNITS:
        return "regression {}: unit {!r}".format(key, value.get("unit"))
    for field, wanted in _REGRESSION_OPTIONAL:
        got = value.get(field)
        if got is not None and not (is_int(got) if wanted is int else _has_type(got, wanted)):
            return "regression {}: {} is a {}".format(key, field, _type_name(got))
    return None


def clean_regressions(data: Any) -> Cleaned:
    """bench/regressions: result key -> the verdict that raised it (Verdict fields, run_id, at, consecutive)."""
    found, dropped = _mapping(data, "regressions")
    if found is None:
        return _unusable(dropped[0])
    out = {}
    for key, value in found.items():
        problem = _regression_problem(key, value)
        if problem is None:
            out[key] = value
        else:
            dropped.append(problem)
    return _ok(out, _bounded(out, dropped))


def clean_streaks(data: Any) -> Cleaned:
    """bench/streaks: result key -> consecutive regressed results."""
    found, dropped = _mapping(data, "streaks")
    if found is None:
        return _unusable(dropped[0])
    out = {}
    for key, value in found.items():
        if RESULT_KEY.match(key) and is_int(value) and value >= 1:
            out[key] = value
        else:
            dropped.append("streak {!r}: {!r}".format(key, value))
    return _ok(out, _bounded(out, dropped))


def clean_last_run(data: Any) -> Cleaned:
    """bench/last_run: kind -> when its last run ended (epoch seconds)."""
    found, dropped = _mapping(data, "last run times")
    if found is None:
        return _unusable(dropped[0])
    out = {}
    for key, value in found.items():
        if NAME.match(key) and is_number(value):
            out[key] = float(value)
        else:
            dropped.append("last run {!r}: {!r}".format(key, value))
    return _ok(out, _bounded(out, dropped))


def _scratch_entry_ok(entry: Any) -> bool:
    return isinstance(entry, dict) and all(
        isinstance(entry[field], str) for field in SCRATCH_TEXT_FIELDS if field in entry
    )


def clean_scratch(data: Any) -> Cleaned:
    """bench/scratch: run id -> {"kind", "entries"}: what an unfinished run wrote, for its cleanup.

    Nothing here is dropped quietly: a run whose item is broken is reported in `recovered` (with its
    kind, or the kind its run id names) so that its scratch can still be found by its run-id prefix."""
    found, dropped = _mapping(data, "the scratch registry")
    if found is None:
        return _unusable(dropped[0])
    out: Dict[str, Dict[str, Any]] = {}
    recovered: Dict[str, str] = {}
    for run_id, item in found.items():
        kind = item.get("kind") if isinstance(item, dict) else None
        kind = kind if isinstance(kind, str) and NAME.match(kind) else kind_of_run_id(run_id)
        entries = item.get("entries") if isinstance(item, dict) else None
        if not run_id:
            dropped.append("scratch item with an empty run id")
            recovered.update(run_ids_in(repr(item)))
            continue
        if not isinstance(entries, list):
            dropped.append("scratch {}: no list of entries".format(run_id))
            recovered[run_id] = kind
            recovered.update(run_ids_in(repr(item)))
            continue
        good = [e for e in entries if _scratch_entry_ok(e)]
        if len(good) < len(entries):
            dropped.append("scratch {}: {} broken entries".format(run_id, len(entries) - len(good)))
            recovered[run_id] = kind
            recovered.update(run_ids_in(repr([e for e in entries if e not in good])))
        if len(good) > MAX_SCRATCH_ENTRIES:
            dropped.append("scratch {}: entries beyond {}".format(run_id, MAX_SCRATCH_ENTRIES))
            recovered[run_id] = kind
            good = good[:MAX_SCRATCH_ENTRIES]
        if not kind:  # no kind to clean it with: only its run id (the prefix of its objects) is left
            dropped.append("scratch {}: no kind".format(run_id))
            recovered[run_id] = ""
            continue
        out[run_id] = dict(item, kind=kind, entries=good)
    kinds = {run_id: item["kind"] for run_id, item in out.items()}
    for run_id in bound(out):
        recovered[run_id] = kinds[run_id]
        dropped.append("scratch {}: beyond {} runs".format(run_id, MAX_KEYS))
    return _ok(out, dropped, recovered)


def clean_running(data: Any) -> Cleaned:
    """bench/running: run id -> the record of a run in progress, with what it had measured so far.
    What a new active mgr finds here was interrupted (the mgr running it died or failed over)."""
    found, dropped = _mapping(data, "the runs in progress")
    if found is None:
        return _unusable(dropped[0])
    out: Dict[str, Any] = {}
    for run_id, raw in found.items():
        cleaned = clean_run(raw)
        dropped.extend(cleaned.dropped)
        if cleaned.value is not None and cleaned.value["run_id"] == run_id:
            out[run_id] = cleaned.value
        else:
            dropped.append("run in progress {!r}: not a run record".format(run_id))
    return _ok(out, _bounded(out, dropped))


def clean_recovered(data: Any) -> Cleaned:
    """bench/recovered_scratch: run id -> kind ("" when unknown), of runs named by broken scratch records."""
    found, dropped = _mapping(data, "recovered run ids")
    if found is None:
        return _unusable(dropped[0])
    out = {}
    for run_id, kind in found.items():
        if run_id and isinstance(kind, str):
            out[run_id] = kind
        else:
            dropped.append("recovered run id {!r}: {!r}".format(run_id, kind))
    return _ok(out, _bounded(out, dropped))


def clean_key_list(data: Any) -> Cleaned:
    """bench/aside_index: the keys of records set aside, oldest first."""
    if not isinstance(data, list) or not all(isinstance(k, str) for k in data):
        return _unusable("a {} where a list of keys should be".format(_type_name(data)))
    return _ok(list(data))
