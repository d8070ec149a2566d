"""The background collection: ask every up OSD for its counters, a bounded number at a time, and put
the rendered text in a cache that scrapes read without ever waiting for Ceph."""

import logging
import math
import threading
import time
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

from ..ceph import cpu_clock
from ..ceph.seam import CephAdapter, FetchError
from ..common import exposition
from ..common.daemon_counters import counters
from ..common.daemon_counters.counter_families import DAEMON_UP, FETCH_ERRORS, LAST_SUCCESS, MISSING, UNAVAILABLE
from ..common.daemon_counters.counter_rows import Row
from ..common.daemon_counters.fetch_reasons import REASON_DOWN, REASON_ERROR
from ..common.exposition import exposable
from ..common.metrics_cache import MetricsCache
from ..common.metrics_model import Sample
from .budget import CollectionBudget
from .module_families import (
    CACHE_AGE,
    COLLECTION_CPU,
    COLLECTIONS,
    DEFERRED,
    DURATION,
    LAST_COLLECTION,
    MODULE_REGISTRY,
    OSD_NETWORK,
    POLLED,
)
from .osd_reads import read_osds


class Settings(NamedTuple):
    request_timeout: float
    max_in_flight: int
    read_osds: bool = True  # False: the host exporters read the OSDs' counters (daemon_counters_source)
    cpu_budget_percent: float = 100.0  # collect_cpu_budget_percent (budget.py); 100 never defers


class Collector:
    def __init__(
        self,
        adapter: CephAdapter,
        clock: Callable[[], float] = time.time,
        log: Optional[logging.Logger] = None,
        extra_samples: Optional[Callable[[], Sequence[Union[Sample, exposition.Column]]]] = None,
    ) -> None:
        self.adapter = adapter
        self.extra_samples = extra_samples  # e.g. benchmark results, rendered with each cycle
        self.clock = clock
        self.log = log or logging.getLogger(__name__)
        self.cache = MetricsCache(self._scrape_tail)
        self._renderer = exposition.Renderer(MODULE_REGISTRY)
        self.cycles = 0
        self.errors: Dict[Tuple[str, str], int] = {}
        self.last_success: Dict[str, float] = {}
        self._latest: Dict[str, Row] = {}  # daemon -> its counters of the last cycle
        self.unavailable: Dict[str, Tuple[str, ...]] = {}  # daemon -> counters its release lacks (counters.py)
        self._lock = threading.Lock()  # one cycle at a time
        self._warned_missing: Dict[str, bool] = {}
        self.budget = CollectionBudget()
        self.cpu_seconds = 0.0  # CPU of every collection so far: the collecting thread's and the adapter's
        self._thread_cpu = cpu_clock.thread_cpu_clock()

    @property
    def latest(self) -> Dict[str, Dict[str, float]]:
        """Daemon -> family+labels key -> value of the last cycle, for tables: flattened when asked, not
        each cycle (0.5 s of a cycle at 10,000 OSDs)."""
        layout = counters.OSD_LAYOUT
        return {daemon: table_values(layout.samples(row, daemon)) for daemon, row in self._latest.items()}

    def _count_error(self, daemon: str, reason: str) -> None:
        key = (daemon, reason)
        self.errors[key] = self.errors.get(key, 0) + 1

    def _osd_networks(self) -> List[Sample]:
        """Each up OSD's public and cluster address (osd_networks.py); a failure here never ends a cycle."""
        try:
            rows = self.adapter.osd_networks()
        except Exception as exc:
            self.log.warning("reading the OSDs' addresses failed: %s", exc)
            return []
        return [
            Sample(OSD_NETWORK, "", (("ceph_daemon", "osd.{}".format(r.osd)), ("network", r.network),
                                     ("address", r.address), ("iface", r.iface)), 1.0)
            for r in rows
        ]  # fmt: skip

    def collect(self, settings: Settings) -> bool:
        """One collection cycle, unless the last one's CPU puts it off to keep within
        settings.cpu_budget_percent of a core (budget.py): whether it ran."""
        with self._lock:
            began = time.monotonic()
            if not self.budget.allows(began, settings.cpu_budget_percent):
                self.log.debug(
                    "collection put off: the last took %.3f s of CPU, more than %g %% of a core since it began",
                    self.budget.last_cpu,
                    settings.cpu_budget_percent,
                )
                return False
            spent = self._cpu_meter()
            try:
                self._collect(settings, spent)
            finally:
                cpu = spent()
                self.cpu_seconds += cpu
                self.budget.record(began, cpu)
            return True

    def _scrape_tail(self, age: float) -> str:
        """What each scrape appends to the cached page, computed then: its age, and the passes put off so far
        (they grow while no collection renders a page)."""
        return exposition.render(
            MODULE_REGISTRY,
            [Sample(CACHE_AGE, "", (), round(age, 3)), Sample(DEFERRED, "", (), float(self.budget.deferred))],
        )

    def _cpu_meter(self) -> Callable[[], float]:
        """CPU seconds spent from now by this thread and the adapter's command threads (wall seconds of this
        thread where the platform has no per-thread CPU clock: never less than its CPU). A clock or figure
        that fails counts as none spent: the budget never stops the collection for a failing meter."""
        clock = self._thread_cpu or time.monotonic
        adapter = self.adapter

        def now() -> float:
            try:
                return cpu_clock.reading(clock) + adapter.command_cpu_seconds()
            except Exception:
                return math.nan

        start = now()

        def spent() -> float:
            total = now() - start
            return total if total >= 0.0 else 0.0  # NaN (a failed reading) and a clock gone back: none

        return spent

    def _collect(self, settings: Settings, spent: Callable[[], float]) -> None:
        started = self.clock()
        t0 = time.monotonic()
        samples: List[Sample] = []
        status: List[Tuple[str, bool]] = []
        # the host exporters read the OSDs' counters, or we do
        # each OSD once, even if the map lists one twice (up if any entry says so)
        osds = list(dict(sorted(self.adapter.osds(), key=lambda o: o[1])).items()) if settings.read_osds else []
        up = [osd_id for osd_id, is_up in osds if is_up]
        for osd_id, is_up in osds:
            if not is_up:
                self._count_error("osd.{}".format(osd_id), REASON_DOWN)
                status.append(("osd.{}".format(osd_id), False))
        readings = read_osds(self.adapter, up, settings.request_timeout, settings.max_in_flight)
        # New dicts each cycle, published whole at the end: commands read them from other threads.
        latest: Dict[str, Row] = {}
        unavailable: Dict[str, Tuple[str, ...]] = {}
        last_success = dict(self.last_success)
        now = self.clock()
        for reading in readings:
            row = reading.row
            if row is None:
                error = reading.error or FetchError(REASON_ERROR, "no reading")
                self._count_error(reading.daemon, error.reason)
                self.log.debug("could not read %s: %s", reading.daemon, error)
                status.append((reading.daemon, False))
                continue
            if row.missing and not self._warned_missing.get(reading.daemon):
                self._warned_missing[reading.daemon] = True
                self.log.info("%s lacks counters %s", reading.daemon, ", ".join(row.missing))
            last_success[reading.daemon] = now
            latest[reading.daemon] = row
            unavailable[reading.daemon] = row.unavailable
            status.append((reading.daemon, True))
        samples.extend(self._read_rgws(status, last_success, unavailable))
        samples.extend(self._osd_networks())
        known = {daemon for daemon, _ in status}
        self.last_success = {d: t for d, t in last_success.items() if d in known}  # forget removed daemons
        self._latest = latest
        self.unavailable = unavailable
        self.cycles += 1
        ended = self.clock()
        # What each daemon has, as columns (without a Sample per series: 10,000 series a family at 10,000
        # OSDs); a family may have both (a benchmark's per-OSD results and its cluster-wide ones).
        items: List[exposition.Item] = [*counters.OSD_LAYOUT.columns(list(latest.items()))]
        items.extend(self._daemon_columns(status, latest, unavailable))
        items.extend(samples)
        if self.extra_samples is not None:
            try:
                items.extend(self.extra_samples())
            except Exception:
                self.log.exception("extra samples failed; exporting the rest")
        items.extend(self._self_samples(status, time.monotonic() - t0, ended, self.cpu_seconds + spent()))
        self.cache.put(self._renderer.render(items), ended)
        self.log.debug("collection of %d daemons took %.3f s", len(status), ended - started)

    def _read_rgws(
        self,
        status: List[Tuple[str, bool]],
        last_success: Dict[str, float],
        unavailable: Dict[str, Tuple[str, ...]],
    ) -> List[Sample]:
        try:
            per_daemon = self.adapter.rgw_counters()
        except FetchError as exc:
            self._count_error("mgr", exc.reason)
            return []
        samples: List[Sample] = []
        for daemon in sorted(per_daemon):
            got = counters.extract_detail(counters.RGW_SPECS, counters.flatten_mgr_counters(per_daemon[daemon]), daemon)
            samples.extend(got.samples)
            status.append((daemon, bool(got.samples)))
            if got.samples:
                last_success[daemon] = self.clock()
                unavailable[daemon] = tuple(got.unavailable)
        return samples

    def _self_samples(self, status: List[Tuple[str, bool]], duration: float, ended: float, cpu: float) -> List[Sample]:
        out = [
            Sample(DURATION, "", (), round(duration, 6)),
            Sample(LAST_COLLECTION, "", (), round(ended, 3)),
            Sample(COLLECTIONS, "", (), float(self.cycles)),
            Sample(COLLECTION_CPU, "", (), round(cpu, 6)),
            Sample(POLLED, "", (), float(len(status))),
        ]
        for (daemon, reason), count in sorted(self.errors.items()):
            out.append(Sample(FETCH_ERRORS, "", (("ceph_daemon", daemon), ("reason", reason)), float(count)))
        return out

    def _daemon_columns(
        self, status: List[Tuple[str, bool]], latest: Dict[str, Row], unavailable: Dict[str, Tuple[str, ...]]
    ) -> List[exposition.Column]:
        """Per daemon: up, its last success, the table's counters it lacks (OSDs read this cycle) and those
        its release does not have."""
        lacking: Dict[str, List[Tuple[str, exposition.Value]]] = {}
        for daemon in sorted(unavailable):
            for name in unavailable[daemon]:
                lacking.setdefault(name, []).append((daemon, 1))
        seen = self.last_success
        return [
            exposition.Column(DAEMON_UP, "", "ceph_daemon", (), [(d, 1 if ok else 0) for d, ok in status]),
            exposition.Column(LAST_SUCCESS, "", "ceph_daemon", (),
                              [(d, exposable(round(seen[d], 3)) or 0) for d, _ok in status if d in seen]),
            exposition.Column(MISSING, "", "ceph_daemon", (), [(d, len(row.missing)) for d, row in latest.items()]),
            *(exposition.Column(UNAVAILABLE, "", "ceph_daemon", (("counter", name),), lacking[name])
              for name in sorted(lacking)),
        ]  # fmt: skip


def table_values(samples: List[Sample]) -> Dict[str, float]:
    """Flatten one daemon's samples to {"family[label=value]suffix": value} for tables and checks."""
    out: Dict[str, float] = {}
    for s in samples:
        extra = ",".join("{}={}".format(k, v) for k, v in s.labels if k != "ceph_daemon")
        out["{}{}{}".format(s.family, "[" + extra + "]" if extra else "", s.suffix)] = s.value
    return out
