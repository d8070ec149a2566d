"""The background collection: ask every up OSD for its counters, a bounded number at a time, and put
the rendered text in a cache that scrapes read without ever waiting for Ceph."""

import collections
import contextlib
import logging
import queue
import threading
import time
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

from . import json_members
from .adapter import CephAdapter, FetchError
from .call_pool import failure
from .core import exposition
from .core.exposition import exposable
from .core.metrics_cache import MetricsCache
from .core.metrics_model import Sample
from .daemon_counters import counters
from .daemon_counters.counter_rows import Row
from .daemon_counters.families import DAEMON_UP, FETCH_ERRORS, LAST_SUCCESS, MISSING, UNAVAILABLE
from .daemon_counters.fetch_reasons import REASON_DECODE, REASON_DOWN, REASON_ERROR, REASON_TIMEOUT
from .metric_families import CACHE_AGE, COLLECTIONS, DURATION, LAST_COLLECTION, MODULE_REGISTRY, OSD_NETWORK, POLLED


class Settings(NamedTuple):
    request_timeout: float
    max_in_flight: int
    read_osds: bool = True  # False: the host exporters read the OSDs' counters (daemon_counters_source)


def _age_tail(age: float) -> str:
    return exposition.render(MODULE_REGISTRY, [Sample(CACHE_AGE, "", (), round(age, 3))])


COMMANDS = (counters.PERF_DUMP,)  # what each OSD is asked, in this order (its mempools are in its perf dump)


Answer = Tuple[int, object, float]  # an OSD, its answers (or a call_pool failure), when they came (monotonic)


def _hand_over(answers: "queue.Queue[Answer]", osd_id: int, lock: threading.Lock) -> Callable[[object], None]:
    """What the adapter's thread calls with osd_id's answers: puts them in the collecting thread's queue,
    stamped with when they came (an answer is judged late by that, not by when this thread gets to it).
    Stamp and put hold `lock`, as the collecting thread's drain and its reading of the clock do: an answer
    stamped before that reading is in the drained queue, one not in it is stamped after."""

    def put(got: object) -> None:
        with lock:
            answers.put((osd_id, got, time.monotonic()))

    return put


class OsdReading(NamedTuple):
    daemon: str
    row: Optional[Row]  # its counters (counters.OSD_LAYOUT), None when they could not be read
    error: Optional[FetchError]


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
        self.cache = MetricsCache(_age_tail)
        self._renderer = exposition.Renderer(MODULE_REGISTRY)
        self.cycles = 0
        self.errors: Dict[Tuple[str, str], int] = {}
        self.last_success: Dict[str, float] = {}
        self._latest: Dict[str, Row] = {}  # daemon -> its counters of the last cycle
        self.unavailable: Dict[str, Tuple[str, ...]] = {}  # daemon -> counters its release lacks (counters.py)
        self._lock = threading.Lock()  # one cycle at a time
        self._warned_missing: Dict[str, bool] = {}

    @property
    def latest(self) -> Dict[str, Dict[str, float]]:
        """Daemon -> family+labels key -> value of the last cycle, for tables: flattened when asked, not
        each cycle (0.5 s of a cycle at 10,000 OSDs)."""
        layout = counters.OSD_LAYOUT
        return {daemon: table_values(layout.samples(row, daemon)) for daemon, row in self._latest.items()}

    def _count_error(self, daemon: str, reason: str) -> None:
        key = (daemon, reason)
        self.errors[key] = self.errors.get(key, 0) + 1

    @staticmethod
    def _parse_osd(daemon: str, fetched: object) -> OsdReading:
        """An OSD's reading from its answers (the adapter's [perf dump] texts), or from the
        failure its request ended with (in the collecting thread)."""
        try:
            error = failure(fetched)
            if error is not None:
                if not isinstance(error, Exception):  # SystemExit and the like: this OSD's read failed
                    raise FetchError(REASON_ERROR, repr(error))
                raise error
            if not isinstance(fetched, (list, tuple)) or len(fetched) != len(COMMANDS):
                raise FetchError(REASON_ERROR, "the adapter answered {!r}".format(type(fetched).__name__))
            (text,) = fetched
            try:  # of the perf dump, only the loggers the table reads are decoded (json_members)
                dump = json_members.loads(text, counters.OSD_LOGGERS)
            except ValueError as exc:
                raise FetchError(REASON_DECODE, "{}: {}".format(daemon, exc)) from exc
            try:  # not an object, or a value that is no number (null, a list, 10**400): as the exporter counts it
                row = counters.osd_row(dump)
            except (TypeError, ValueError, OverflowError) as exc:  # NotAnObject is a ValueError
                detail = str(exc) if isinstance(exc, counters.NotAnObject) else "{}: {!r}".format(daemon, exc)
                raise FetchError(REASON_DECODE, detail) from exc
            return OsdReading(daemon, row, None)
        except FetchError as exc:
            return OsdReading(daemon, None, exc)
        except Exception as exc:  # a bug or surprise in one OSD's data must not end the cycle
            return OsdReading(daemon, None, FetchError(REASON_ERROR, repr(exc)))

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

    def collect(self, settings: Settings) -> None:
        with self._lock:
            self._collect(settings)

    def _collect(self, settings: Settings) -> None:
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
        readings = self._read_osds(up, settings)
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
        items.extend(self._self_samples(status, time.monotonic() - t0, ended))
        self.cache.put(self._renderer.render(items), ended)
        self.log.debug("collection of %d daemons took %.3f s", len(status), ended - started)

    def _read_osds(self, up: List[int], settings: Settings) -> List[OsdReading]:
        """Every up OSD read, at most max_in_flight at a time: each is asked COMMANDS by the adapter's
        own thread, which hands the answers to this thread; this one decodes them as they come
        (decoding is CPU, which more threads would only contend for). An OSD that has not answered them all
        within request_timeout each is a timeout, and its place goes to the next OSD."""
        todo = collections.deque(up)
        answers = queue.Queue()  # type: queue.Queue[Answer]
        handing_over = threading.Lock()
        due: Dict[int, float] = {}  # OSDs asked and not yet answered -> when they time out
        readings: Dict[int, OsdReading] = {}
        allowed = settings.request_timeout * len(COMMANDS)
        late = FetchError(REASON_TIMEOUT, "no answer in {:.0f} s".format(allowed))
        while todo or due:
            while todo and len(due) < max(1, settings.max_in_flight):
                osd_id = todo.popleft()
                try:
                    self.adapter.submit_osd_texts(
                        osd_id, COMMANDS, settings.request_timeout, _hand_over(answers, osd_id, handing_over)
                    )
                except FetchError as exc:  # busy: an earlier request to it is still out
                    readings[osd_id] = OsdReading("osd.{}".format(osd_id), None, exc)
                    continue
                except Exception as exc:  # an adapter's bug ends this OSD's read, not the cycle
                    readings[osd_id] = OsdReading("osd.{}".format(osd_id), None, FetchError(REASON_ERROR, repr(exc)))
                    continue
                due[osd_id] = time.monotonic() + allowed
            if not due:
                continue
            got: List[Answer] = []
            with contextlib.suppress(queue.Empty):
                got.append(answers.get(timeout=max(0.0, min(due.values()) - time.monotonic())))
            with handing_over, contextlib.suppress(queue.Empty):  # all handed over, none behind the deadlines
                now = time.monotonic()
                while True:
                    got.append(answers.get_nowait())
            for osd_id, fetched, came in got:
                at = due.pop(osd_id, None)
                if at is None:  # an answer to a request already counted as a timeout
                    continue
                daemon = "osd.{}".format(osd_id)
                readings[osd_id] = self._parse_osd(daemon, fetched) if came <= at else OsdReading(daemon, None, late)
            for osd_id in [o for o, at in due.items() if at < now]:  # any answer still to come is later
                del due[osd_id]
                readings[osd_id] = OsdReading("osd.{}".format(osd_id), None, late)
        return [readings[osd_id] for osd_id in sorted(up)]

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

    def _self_samples(self, status: List[Tuple[str, bool]], duration: float, ended: float) -> List[Sample]:
        out = [
            Sample(DURATION, "", (), round(duration, 6)),
            Sample(LAST_COLLECTION, "", (), round(ended, 3)),
            Sample(COLLECTIONS, "", (), float(self.cycles)),
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
