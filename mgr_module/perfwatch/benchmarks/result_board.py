"""The latest benchmark results and the probe latency histograms, in one place: the runner feeds the
board (on_finished), the exposition and the health check read it (samples, regressions). Data flows
one way: runner -> board -> metrics and health."""

import threading
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple, Union

from ..common.exposition import Column, as_samples
from ..common.metrics_model import Sample
from .kinds.registry import KINDS
from .measurement import Measurement
from .records import fit, state
from .records.store import BenchStore
from .result_samples import ProbeHistograms, Where, result_exposition, result_where
from .run import Run

LastResult = Tuple[float, str]  # (value, unit) of a result
LAST_RESULTS = "last_results"  # the record of every key's latest result: a kind's history keeps what fits one entry


class ResultBoard:
    def __init__(
        self,
        store: BenchStore,
        kinds: Optional[Iterable[str]] = None,
        device_classes: Optional[Callable[[], Dict[int, str]]] = None,
    ) -> None:
        """Starts with the last result of each key as last stored, then those of each kind's last run in the
        store's history (a failover keeps them; kinds: their names, those of kinds.registry.KINDS when None); the
        histograms start empty (they reset with the mgr). device_classes: OSD id -> CRUSH device class
        now, read once per light probe finished (its histograms are per class); none: every OSD in class ""."""
        self._store = store
        self._device_classes = device_classes or dict
        self._lock = threading.Lock()
        self._last: Dict[str, LastResult] = {}  # result key -> (value, unit) of its latest result
        self._histograms = ProbeHistograms()
        self._where: Dict[str, Where] = {}  # result key -> its kind, metric and daemon, as exposition() made them
        self._changes = 0  # bumped whenever a result or a histogram changes
        # exposition()'s last page and what it was made from: the store's and this board's changes and the
        # arguments; the same again is the same page (120,000 per-OSD values at 10,000 OSDs, remade only
        # when a run ends, not every collection cycle)
        self._page: Optional[Tuple[Tuple[Any, ...], List[Union[Column, Sample]]]] = None
        stored = store.records.load(LAST_RESULTS, state.clean_last_results, dict)
        self._last.update((key, (float(value), unit)) for key, (value, unit) in stored.items())
        for kind in KINDS if kinds is None else kinds:
            for record in store.history(kind)[-1:]:
                self._record(Measurement.from_dict(raw) for raw in record.get("results", []))

    def _record(self, measurements: Iterable[Measurement]) -> None:
        with self._lock:
            for m in measurements:
                self._last[m.key] = (m.value, m.unit)

    def on_finished(self, run: Run) -> None:
        """What the runner calls once a run is recorded: its results become the latest; a light probe's
        latencies go into the histograms too. The last results are stored (at most every
        versioned.LARGE_SAVE_INTERVAL once they take several entries: 2.7 MB at 10,000 OSDs)."""
        self._record(run.measurements)
        records = self._store.records
        if not records.held_back(LAST_RESULTS):  # a copy of 60,000 results only when it is written
            with self._lock:
                last = {key: [value, unit] for key, (value, unit) in self._last.items()}
            records.save(LAST_RESULTS, fit.fit_keys(last, records.record_max), throttled=True)
        if not run.heavy:
            try:
                classes = self._device_classes()
            except Exception:  # the OSD map unreadable this moment: the run still counts, in class ""
                classes = {}
            with self._lock:
                self._histograms.observe(run.measurements, classes)
        with self._lock:  # after every change: a page made meanwhile is keyed to the count before, so made anew
            self._changes += 1

    def last_results(self) -> Dict[str, LastResult]:
        with self._lock:
            return dict(self._last)

    def regressions(self) -> Dict[str, Dict[str, Any]]:
        """Result key -> the regression raised on it (what judging/regressions.py recorded in the store)."""
        return self._store.regressions()

    def exposition(
        self, outcomes: Dict[str, int], baseline_min_results: int, with_baselines: bool = True
    ) -> List[Union[Column, Sample]]:
        """The benchmark metrics: latest results, their baselines (unless with_baselines is off: the option
        bench_export_baselines) and regressions, when each kind last ran, outcomes ("kind/state" -> runs
        that ended so), and the probe latency histograms; per-OSD results as columns."""
        store = self._store
        with self._lock:  # the store's count first: a change after it is read makes the next page anew
            asked = (with_baselines, baseline_min_results, tuple(sorted(outcomes.items())))
            made_of = (store.changes, self._changes, *asked)
            if self._page is not None and self._page[0] == made_of:
                return list(self._page[1])
        last = self.last_results()
        baselines = store.baselines_of(last, baseline_min_results) if with_baselines else {}
        # each key's kind, metric and daemon made once, and kept while it has a result
        self._where = {key: self._where.get(key) or result_where(key) for key in last}
        regressions = list(store.regressions())
        items = result_exposition(last, baselines, regressions, store.last_runs(), outcomes, self._where.get)
        # a column's series as a tuple: the page is handed out again, and a caller that changed a list in it
        # would change every later page (each caller gets a list of its own, of items none can change)
        items = [item._replace(series=tuple(item.series)) if isinstance(item, Column) else item for item in items]
        with self._lock:
            page = items + list(self._histograms.samples())
            self._page = (made_of, page)
        return list(page)

    def samples(self, outcomes: Dict[str, int], baseline_min_results: int, with_baselines: bool = True) -> List[Sample]:
        """exposition(), as samples only."""
        return as_samples(self.exposition(outcomes, baseline_min_results, with_baselines))
