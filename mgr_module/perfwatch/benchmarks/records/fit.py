"""Fitting the records of runs into the mgr store's entries (common.ENTRY_MAX_CHARS each). Pure.

A run record carries every result it measured: a net probe at 10,000 OSDs holds 20,000 results, about 1.8 MB,
and a kind's history holds history_limit of them. Written as one entry, such a record is refused by the mons
(see common.ENTRY_MAX_CHARS). These records are what `bench history` shows and what an interrupted run
reports; the baselines and regressions are kept apart. So a kind's history keeps its newest runs that fit
one entry, and a run too large alone keeps what fits of its OSD list and results (the rest counted)."""

import json
from typing import Any, Dict, List

# The envelope versioned.py wraps a record in, and the separators between list items, with room to spare.
OVERHEAD = 64


def size(value: Any) -> int:
    """Characters of a value as versioned.py encodes it."""
    return len(json.dumps(value, sort_keys=True))


def shrink_run(run: Dict[str, Any], max_chars: int) -> Dict[str, Any]:
    """The run itself when it fits within max_chars; else without the OSDs of its list that do not fit
    (counted in osds_omitted: 10,000 OSD ids are 59 KB), then with as many of its first results as fit
    (the others counted in results_omitted)."""
    if size(run) <= max_chars:
        return run
    run = _first_that_fit(run, "osds", max_chars)
    return run if size(run) <= max_chars else _first_that_fit(run, "results", max_chars)


def _first_that_fit(run: Dict[str, Any], field: str, max_chars: int) -> Dict[str, Any]:
    items = run.get(field) or []
    counter = field + "_omitted"
    omitted = run.get(counter) or 0
    low, high = 0, len(items)  # the most items that fit lies in [low, high]
    while low < high:
        mid = (low + high + 1) // 2
        if size(dict(run, **{field: items[:mid], counter: omitted + len(items) - mid})) <= max_chars:
            low = mid
        else:
            high = mid - 1
    return dict(run, **{field: items[:low], counter: omitted + len(items) - low})


def fit_runs(runs: List[Dict[str, Any]], max_chars: int) -> List[Dict[str, Any]]:
    """The newest runs (oldest first, as given) whose list fits within max_chars; when even the newest does
    not fit alone, it with the results that fit."""
    budget = max_chars - OVERHEAD
    kept: List[Dict[str, Any]] = []
    used = 0
    for run in reversed(runs):
        need = size(run) + 2
        if used + need > budget:
            if not kept:
                kept.append(shrink_run(run, budget))
            break
        kept.append(run)
        used += need
    kept.reverse()
    return kept


def fit_running(running: Dict[str, Dict[str, Any]], max_chars: int) -> Dict[str, Dict[str, Any]]:
    """The runs in progress (run id -> record), each within an equal share of max_chars, smaller shares
    until they fit together (or each is bare: then the record takes several entries)."""
    budget = max_chars - OVERHEAD
    share = budget // max(1, len(running))
    fitted = running
    while size(fitted) > budget and share > 0:
        fitted = {run_id: shrink_run(run, share) for run_id, run in running.items()}
        share = share * 3 // 4
    return fitted


def fit_values(history: Dict[str, List[float]], max_chars: int) -> Dict[str, List[float]]:
    """Baselines (result key -> recent values, oldest first) within max_chars: the newest values of each
    key, as many as fit for every key alike (at least one). Written as they are when they fit."""
    total = size(history)
    if total <= max_chars - OVERHEAD:
        return history
    longest = max(len(values) for values in history.values())
    keep = max(1, longest * (max_chars - OVERHEAD) // total)
    while keep > 1 and size({k: v[-keep:] for k, v in history.items()}) > max_chars - OVERHEAD:
        keep -= 1
    return {key: values[-keep:] for key, values in history.items()}


def fit_keys(mapping: Dict[str, Any], max_chars: int) -> Dict[str, Any]:
    """A mapping within max_chars: its first keys in sorted order that fit, the mapping itself when it fits."""
    if size(mapping) <= max_chars - OVERHEAD:
        return mapping
    out: Dict[str, Any] = {}
    used = 2
    for key in sorted(mapping):
        need = size({key: mapping[key]})
        if used + need > max_chars - OVERHEAD:
            break
        out[key] = mapping[key]
        used += need
    return out
