"""Fitting the records of runs into the mgr store's entries (records.ENTRY_MAX_CHARS each). Pure.

A run record carries every result it measured: a net probe at 10,000 OSDs holds 20,000 results, about 1.8 MB,
and a kind's history holds history_limit of them. Written as one entry, such a record is refused by the mons
(see records.ENTRY_MAX_CHARS). These records are what `bench history` shows and what an interrupted run
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
    """The runs in progress (run id -> record), each within an equal share of max_chars."""
    if not running or size(running) <= max_chars - OVERHEAD:
        return running
    share = (max_chars - OVERHEAD) // len(running) - 2 * OVERHEAD
    return {run_id: shrink_run(run, share) for run_id, run in running.items()}
