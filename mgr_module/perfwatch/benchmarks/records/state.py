"""The records of judged state: baselines, regressions, streaks and the last run of each kind. Pure."""

from typing import Any, Dict, List, Optional, Tuple

from ..measurement import UNITS
from . import common


def clean_baselines(data: Any) -> common.Cleaned:
    """bench/baselines: result key -> recent values."""
    found, dropped = common.as_mapping(data, "baselines")
    if found is None:
        return common.unusable(dropped[0])
    out: Dict[str, List[float]] = {}
    for key, values in found.items():
        if not common.RESULT_KEY.match(key):
            dropped.append("baseline key {!r}".format(key))
            continue
        if not isinstance(values, list):
            dropped.append("baseline {}: a {} where values should be".format(key, common.type_name(values)))
            continue
        numbers = [float(v) for v in values if common.is_number(v)]
        if len(numbers) < len(values):
            dropped.append("baseline {}: {} values that are not numbers".format(key, len(values) - len(numbers)))
        if numbers:
            out[key] = numbers
    return common.ok(out, common.bounded(out, dropped, common.MAX_RESULT_KEYS))


_REGRESSION_REQUIRED: Tuple[Tuple[str, type], ...] = (("value", float), ("reason", str))  # update_health formats these
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
    if not common.RESULT_KEY.match(key):
        return "regression key {!r}".format(key)
    if not isinstance(value, dict):
        return "regression {}: a {}".format(key, common.type_name(value))
    for field, wanted in _REGRESSION_REQUIRED:
        if not common.has_type(value.get(field), wanted):
            return "regression {}: {} is a {}".format(key, field, common.type_name(value.get(field)))
    if value.get("unit") not in UNITS:
        return "regression {}: unit {!r}".format(key, value.get("unit"))
    for field, wanted in _REGRESSION_OPTIONAL:
        got = value.get(field)
        if got is not None and not (common.is_int(got) if wanted is int else common.has_type(got, wanted)):
            return "regression {}: {} is a {}".format(key, field, common.type_name(got))
    return None


def clean_regressions(data: Any) -> common.Cleaned:
    """bench/regressions: result key -> the verdict that raised it (Verdict fields, run_id, at, consecutive)."""
    return common.clean_entries(data, "regressions", _regression_problem, common.MAX_RESULT_KEYS)


def clean_streaks(data: Any) -> common.Cleaned:
    """bench/streaks: result key -> consecutive regressed results."""

    def problem(key: str, value: Any) -> Optional[str]:
        good = common.RESULT_KEY.match(key) and common.is_int(value) and value >= 1
        return None if good else "streak {!r}: {!r}".format(key, value)

    return common.clean_entries(data, "streaks", problem, common.MAX_RESULT_KEYS)


def clean_last_results(data: Any) -> common.Cleaned:
    """bench/last_results: result key -> [value, unit] of its latest result."""

    def problem(key: str, value: Any) -> Optional[str]:
        good = common.RESULT_KEY.match(key) and isinstance(value, list) and len(value) == 2
        good = good and common.is_number(value[0]) and value[1] in UNITS
        return None if good else "last result {!r}: {!r}".format(key, value)

    return common.clean_entries(data, "last results", problem, common.MAX_RESULT_KEYS)


def clean_last_run(data: Any) -> common.Cleaned:
    """bench/last_run: kind -> when its last run ended (epoch seconds)."""

    def problem(key: str, value: Any) -> Optional[str]:
        good = common.NAME.match(key) and common.is_number(value)
        return None if good else "last run {!r}: {!r}".format(key, value)

    cleaned = common.clean_entries(data, "last run times", problem)
    if cleaned.value is None:
        return cleaned
    return cleaned._replace(value={k: float(v) for k, v in cleaned.value.items()})
