"""The background collection: ask every up OSD for its counters, a bounded number at a time, and put
the rendered text in a cache that scrapes read without ever waiting for Ceph."""

import concurrent.futures
import logging
import threading
import time
from typing import Callable, Dict, List, NamedTuple, Optional, Tuple

from . import counters, exposition
from .adapter import CephAdapter, FetchError
from .fetch_reasons import REASON_DECODE, REASON_DOWN, REASON_ERROR, REASON_TIMEOUT
from .metric_families import (
    CACHE_AGE,
    COLLECTIONS,
    DAEMON_UP,
    DURATION,
    FETCH_ERRORS,
    LAST_COLLECTION,
    LAST_SUCCESS,
    MISSING,
    MODULE_REGISTRY,
    OSD_NETWORK,
    POLLED,
    UNAVAILABLE,
)
from .metrics_cache import MetricsCache
from .metrics_model import Sample


class Settings(NamedTuple):
    request_timeout: float
    max_in_flight: int
    read_osds: bool = True  # False: the host exporters read the OSDs' counters (daemon_counters_source)


def _age_tail(age: float) -> str:
    return exposition.render(MODULE_REGISTRY, [Sample(CACHE_AGE, "", (), round(age, 3))])


class OsdReading(NamedTuple):
    daemon: str
    samples: List[Sample]
    missing: List[str]
    error: Optional[FetchError]
    unavailable: Tuple[str, ...] = ()  # release-dependent counters this daemon's release lacks


class Collector:
    def __init__(
        self,
        adapter: CephAdapter,
        clock: Callable[[], float] = time.time,
        log: Optional[logging.Logger] = None,
        extra_samples: Optional[Callable[[], List[Sample]]] = None,
    ) -> None:
        self.adapter = adapter
        self.extra_samples = extra_samples  # e.g. benchmark results, rendered with each cycle
        self.clock = clock
        self.log = log or logging.getLogger(__name__)
        self.cache = MetricsCache(_age_tail)
        self.cycles = 0
        self.errors: Dict[Tuple[str, str], int] = {}
        self.last_success: Dict[str, float] = {}
        self._latest: Dict[str, List[Sample]] = {}  # daemon -> its samples of the last cycle
        self.unavailable: Dict[str, Tuple[str, ...]] = {}  # daemon -> counters its release lacks (counters.py)
        self._lock = threading.Lock()  # one cycle at a time
        self._warned_missing: Dict[str, bool] = {}

    @property
    def latest(self) -> Dict[str, Dict[str, float]]:
        """Daemon -> family+labels key -> value of the last cycle, for tables: flattened when asked, not
        each cycle (0.5 s of a cycle at 10,000 OSDs)."""
        return {daemon: table_values(samples) for daemon, samples in self._latest.items()}

    def _count_error(self, daemon: str, reason: str) -> None:
        key = (daemon, reason)
        self.errors[key] = self.errors.get(key, 0) + 1

    def _read_osd(self, osd_id: int, timeout: float) -> OsdReading:
        daemon = "osd.{}".format(osd_id)
        try:
            dump = self.adapter.tell_osd(osd_id, counters.PERF_DUMP, timeout)
            mempools = self.adapter.tell_osd(osd_id, counters.DUMP_MEMPOOLS, timeout)
            got = counters.osd_counters(dump, mempools, daemon)
            return OsdReading(daemon, got.samples, got.missing, None, tuple(got.unavailable))
        except counters.NotAnObject as exc:
            return OsdReading(daemon, [], [], FetchError(REASON_DECODE, str(exc)))
        except FetchError as exc:
            return OsdReading(daemon, [], [], exc)
        except Exception as exc:  # a bug or surprise in one OSD's data must not end the cycle
            return OsdReading(daemon, [], [], FetchError(REASON_ERROR, repr(exc)))

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
        osds = self.adapter.osds() if settings.read_osds else []
        up = [osd_id for osd_id, is_up in osds if is_up]
        for osd_id, is_up in osds:
            if not is_up:
                self._count_error("osd.{}".format(osd_id), REASON_DOWN)
                status.append(("osd.{}".format(osd_id), False))
        readings = self._read_osds(up, settings)
        # New dicts each cycle, published whole at the end: commands read them from other threads.
        latest: Dict[str, List[Sample]] = {}
        unavailable: Dict[str, Tuple[str, ...]] = {}
        last_success = dict(self.last_success)
        for reading in readings:
            if reading.error is not None:
                self._count_error(reading.daemon, reading.error.reason)
                self.log.debug("could not read %s: %s", reading.daemon, reading.error)
                status.append((reading.daemon, False))
                continue
            samples.extend(reading.samples)
            samples.append(Sample(MISSING, "", (("ceph_daemon", reading.daemon),), float(len(reading.missing))))
            if reading.missing and not self._warned_missing.get(reading.daemon):
                self._warned_missing[reading.daemon] = True
                self.log.info("%s lacks counters %s", reading.daemon, ", ".join(reading.missing))
            last_success[reading.daemon] = self.clock()
            latest[reading.daemon] = reading.samples
            unavailable[reading.daemon] = reading.unavailable
            status.append((reading.daemon, True))
        samples.extend(self._read_rgws(status, last_success, unavailable))
        samples.extend(self._osd_networks())
        samples.extend(unavailable_samples(unavailable))
        known = {daemon for daemon, _ in status}
        self.last_success = {d: t for d, t in last_success.items() if d in known}  # forget removed daemons
        self._latest = latest
        self.unavailable = unavailable
        self.cycles += 1
        ended = self.clock()
        if self.extra_samples is not None:
            try:
                samples.extend(self.extra_samples())
            except Exception:
                self.log.exception("extra samples failed; exporting the rest")
        samples.extend(self._self_samples(status, time.monotonic() - t0, ended))
        self.cache.put(exposition.render(MODULE_REGISTRY, samples), ended)
        self.log.debug("collection of %d daemons took %.3f s", len(status), ended - started)

    def _read_osds(self, up: List[int], settings: Settings) -> List[OsdReading]:
        if not up:
            return []
        # Each worker reads one OSD at a time, so at most max_in_flight requests are outstanding.
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(settings.max_in_flight, len(up))))
        futures = {pool.submit(self._read_osd, osd_id, settings.request_timeout): osd_id for osd_id in up}
        # Every request ends within its timeout; this bound only guards against an adapter that does not.
        deadline = settings.request_timeout * 2 * (len(up) / max(1, settings.max_in_flight) + 1) + 5
        done, not_done = concurrent.futures.wait(futures, timeout=deadline)
        pool.shutdown(wait=False)
        readings = [f.result() for f in done]
        for future in not_done:
            future.cancel()
            readings.append(
                OsdReading("osd.{}".format(futures[future]), [], [], FetchError(REASON_TIMEOUT, "cycle deadline"))
            )
        return sorted(readings, key=lambda r: int(r.daemon.split(".")[1]))

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
        for daemon, ok in status:
            out.append(Sample(DAEMON_UP, "", (("ceph_daemon", daemon),), 1.0 if ok else 0.0))
        for daemon, _ok in status:
            if daemon in self.last_success:
                out.append(Sample(LAST_SUCCESS, "", (("ceph_daemon", daemon),), round(self.last_success[daemon], 3)))
        for (daemon, reason), count in sorted(self.errors.items()):
            out.append(Sample(FETCH_ERRORS, "", (("ceph_daemon", daemon), ("reason", reason)), float(count)))
        return out


def unavailable_samples(unavailable: Dict[str, Tuple[str, ...]]) -> List[Sample]:
    return [
        Sample(UNAVAILABLE, "", (("ceph_daemon", daemon), ("counter", name)), 1.0)
        for daemon in sorted(unavailable)
        for name in unavailable[daemon]
    ]


def unavailable_report(unavailable: Dict[str, Tuple[str, ...]]) -> Dict[str, Dict[str, object]]:
    """For `ceph perfwatch status`: each release-dependent counter some daemon lacks, which daemons lack
    it and which releases have it."""
    lacking: Dict[str, List[str]] = {}
    for daemon in sorted(unavailable):
        for name in unavailable[daemon]:
            lacking.setdefault(name, []).append(daemon)
    return {name: {"releases": counters.releases_of(name), "daemons": d} for name, d in sorted(lacking.items())}


def table_values(samples: List[Sample]) -> Dict[str, float]:
    """Flatten one daemon's samples to {"family[label=value]suffix": value} for tables and checks."""
    out: Dict[str, float] = {}
    for s in samples:
        extra = ",".join("{}={}".format(k, v) for k, v in s.labels if k != "ceph_daemon")
        out["{}{}{}".format(s.family, "[" + extra + "]" if extra else "", s.suffix)] = s.value
    return out
