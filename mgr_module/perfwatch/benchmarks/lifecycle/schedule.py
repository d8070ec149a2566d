"""The benchmark schedule: starting the kinds that are due (tick), and the rows of `bench schedule`.

A kind runs on schedule every `interval_option` seconds (0: on command only) with its default
parameters; when such a run is heavy, only inside the heavy_bench_window.
"""

import time
from typing import Any, Callable, Dict, List

from ..base import Benchmark
from ..records.store import BenchStore
from ..run import Run
from .due import is_due
from .run_control import Refused


def scheduled_heavy(kind: Benchmark) -> bool:
    """Whether a scheduled run of this kind (its default parameters) is heavy."""
    return kind.is_heavy(kind.validate({}))


def heavy_interval_options(kinds: Dict[str, Benchmark]) -> List[str]:
    """The interval options of the kinds whose scheduled runs are heavy (they wait for the window)."""
    return sorted(k.interval_option for k in kinds.values() if k.interval_option and scheduled_heavy(k))


def tick(
    now: float,
    kinds: Dict[str, Benchmark],
    store: BenchStore,
    opts: Dict[str, Any],
    start: Callable[..., Run],
    log: Any,
) -> List[str]:
    """Start what is due, with start(kind, osds, params, trigger=...); returns the run ids started."""
    minute = time.localtime(now).tm_hour * 60 + time.localtime(now).tm_min
    started = []
    for name in sorted(kinds):
        option = kinds[name].interval_option
        if option is None:
            continue
        window = opts["heavy_bench_window"] if scheduled_heavy(kinds[name]) else ""
        try:
            due = is_due(now, store.last_run(name), float(opts[option]), minute, window)
        except ValueError as exc:  # a malformed window stops that kind only, not the light probes
            log.error("%s not scheduled: %s", name, exc)
            continue
        if not due:
            continue
        try:
            started.append(start(name, None, {}, trigger="schedule").run_id)
        except Refused as exc:
            log.debug("scheduled %s not started: %s", name, exc)
            store.mark_attempt(name, now)  # try again one interval later, not every tick
        except Exception as exc:
            log.warning("scheduled %s failed to start: %s", name, exc)
            store.mark_attempt(name, now)
    return started


def schedule_rows(kinds: Dict[str, Benchmark], store: BenchStore, opts: Dict[str, Any]) -> List[Dict[str, Any]]:
    """One row per kind: how often it runs, when it last ran, in which window."""
    rows = []
    for name in sorted(kinds):
        kind = kinds[name]
        option = kind.interval_option
        heavy = scheduled_heavy(kind)
        rows.append(
            {
                "kind": name,
                "heavy": heavy,
                "interval": float(opts[option]) if option else 0.0,
                "interval_option": option,
                "window": opts["heavy_bench_window"] if heavy else "",
                "last_run": store.last_run(name),
                "description": kind.description,
            }
        )
    return rows
