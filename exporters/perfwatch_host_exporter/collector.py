"""One collection: find the trusted daemons, read what the host knows of each, as samples. The
collection loop (collection_loop.py) runs it in the background; scrapes never wait for it. What it asks
the daemons' admin sockets it asks side by side first (side_by_side.py), so hung daemons delay the
collection by about one timeout, not one each.

Over 300 lines: one collection's steps in the order they run (trust, scan, ask ahead, select, each
daemon's parts, the host's); each daemon's part is a few lines that read the collector's caches.
"""

import logging
import os
import re
import threading
import time
from functools import partial
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Set, Tuple

from perfwatch.common.exposition import render
from perfwatch.common.metrics_model import Labels, Sample

from . import asok, daemon_counters, network, nic_map, rgw, side_by_side, trust
from . import families as f
from .cgroup_reader import CgroupError, CgroupReader
from .clusters import ClusterIds
from .device_kind import DeviceKinds
from .discovery import Daemon, Found, Scanner
from .errors import ErrorCounter
from .fsroot import Root
from .osd_map import Key, OsdDeviceMap
from .procfs import ProcStat
from .sockets import DaemonSockets


class HostSettings(NamedTuple):
    hostname: str
    cluster: Optional[str] = None  # only daemons of this cluster name; None: all
    cluster_fsid: Optional[str] = None  # only daemons of the cluster with this fsid (canonical form); None: all
    same_netns: bool = False  # only daemons in the exporter's network namespace
    asok_dirs: Tuple[str, ...] = ()
    asok_timeout: float = 2.0
    net_device_exclude: str = network.DEFAULT_EXCLUDE  # interfaces without a capacity row (regex)
    daemon_users: Tuple[trust.User, ...] = ()  # trusted besides root, ceph and cephadm's cluster dirs' owners
    daemon_counters: bool = False  # the OSDs' counters from their admin sockets (daemon_counters.py)


class HostCollector:
    def __init__(
        self,
        settings: HostSettings,
        root: Optional[Root] = None,
        asok_call: asok.AsokCall = asok.call,
        asok_listener: asok.AsokListener = asok.listener,
        tc: Optional[network.TcRunner] = None,
        ip: Optional[nic_map.IpRunner] = None,
        clk_tck: Optional[int] = None,
        page_size: Optional[int] = None,
        clock: Callable[[], float] = time.monotonic,
        log: Optional[logging.Logger] = None,
    ) -> None:
        self.settings = settings
        self._net_exclude = re.compile(settings.net_device_exclude)
        self.tc = tc
        self.ip = ip
        self.clk_tck = clk_tck or os.sysconf("SC_CLK_TCK")
        self.page_size = page_size or os.sysconf("SC_PAGE_SIZE")
        self.clock = clock
        self.log = log or logging.getLogger(__name__)
        self.errors = ErrorCounter(f.ERROR_SOURCES, self.log)
        self.refusals = ErrorCounter(f.REFUSAL_REASONS, self.log)
        self.root = (root if root is not None else Root("/")).reporting_to(self.refusals)
        self.trusted = trust.Trusted(frozenset({0}), ((0, "root"),))
        self.scanner = Scanner(self.root, self.errors, self.refusals)
        self.sockets = DaemonSockets(
            self.root, asok_call, list(settings.asok_dirs), settings.asok_timeout, self.refusals, asok_listener
        )
        self.cgroups = CgroupReader(self.root)
        self.osd_map = OsdDeviceMap(self.root, self.sockets, self.errors, clock)
        self.device_kinds = DeviceKinds(self.root, lambda message: self.errors("device", message), clock)
        self.clusters = ClusterIds(self.root, self.sockets, clock, self.log)
        # per (cluster, OSD) whose counters are read here: when last read (wall clock), failures by reason
        self._counters_read: Dict[Tuple[str, str], float] = {}
        self._counter_errors: Dict[Tuple[str, str], Dict[str, int]] = {}
        self._lock = threading.Lock()

    def render(self) -> str:
        """One collection, rendered (tests and tools; the exporter serves the collection loop's cache)."""
        return render(f.EXPORTER_REGISTRY, self.collect())

    def collect(self) -> List[Sample]:
        with self._lock:
            self.sockets.begin()
            try:
                return self._collect()
            finally:
                self.sockets.end()

    def _collect(self) -> List[Sample]:
        started = self.clock()
        host: Labels = (("hostname", self.settings.hostname),)
        self._trust()
        try:
            daemons = self.scanner.scan(self.trusted, self.settings.cluster, self.settings.same_netns)
        except OSError as exc:
            self.errors("proc", "scanning /proc: {}".format(exc))
            daemons = []
        live: Set[Key] = set()  # every daemon process seen, reported or not: the caches keep these
        # the clusters not known yet, side by side (a lookup may ask the daemon's socket); _select then
        # finds them cached, and looks again, one by one, only where a lookup failed. Whether a lookup or a
        # device map is due is judged at the collection's start throughout (one that falls due meanwhile
        # waits for the next collection rather than be asked in turn)
        side_by_side.run_all(
            [
                partial(self.clusters.find, d, st.start_ticks, started)
                for d, st in daemons
                if self.clusters.due(d, st.start_ticks, started)
            ],
            log=self.log,
        )
        selected, unknown = self._select(daemons, live, started)
        side_by_side.run_all(
            [
                partial(self.sockets.prefetch, d, asks)
                for d, st in selected
                for asks in [self._asks(d, st, started)]
                if asks
            ],
            log=self.log,
        )
        try:
            self.cgroups.refresh_mounts()
            cgroups_readable = True
            if selected and self.cgroups.v1 is None and self.cgroups.v2 is None:
                # Daemons to report but no CPU hierarchy in sight: say so, don't just go quiet.
                self.errors("cgroup", "no cgroup hierarchy with the cpu controller is mounted here")
                cgroups_readable = False
        except (OSError, ValueError) as exc:
            self.errors("cgroup", "reading /proc/self/mountinfo: {}".format(exc))
            cgroups_readable = False
        samples: List[Sample] = []
        disks: Set[str] = set()  # the disks beneath the OSDs reported
        for daemon, st in selected:
            try:
                samples.extend(self._daemon(daemon, st, cgroups_readable, disks, started))
            except Exception as exc:  # one bad daemon never breaks a scrape
                self.log.debug("%s", daemon, exc_info=True)
                self.errors("proc", "{}: {}: {}".format(daemon.ident.label, type(exc).__name__, exc))
        self.osd_map.keep_only(live)
        self.clusters.keep_only(live)
        reported = {(d.fsid, d.ident.label) for d, _ in selected}
        self._counters_read = {k: t for k, t in self._counters_read.items() if k in reported}
        self._counter_errors = {k: e for k, e in self._counter_errors.items() if k in reported}
        samples.extend(self._device_kinds(host, sorted(disks)))
        samples.extend(self._network(host))
        samples.append(Sample(f.COLLECTION_DURATION, "", host, self.clock() - started))
        for source in f.ERROR_SOURCES:
            samples.append(Sample(f.COLLECTION_ERRORS, "", (*host, ("source", source)), self.errors.counts[source]))
        for reason in f.REFUSAL_REASONS:
            samples.append(Sample(f.REFUSED, "", (*host, ("reason", reason)), self.refusals.counts[reason]))
        samples.append(Sample(f.DAEMONS, "", host, len(selected)))
        samples.append(Sample(f.DAEMONS_UNKNOWN_CLUSTER, "", host, unknown))
        return samples

    def _trust(self) -> None:
        """The users whose processes are daemons, as the host shows them now (trust.py)."""
        trusted, problems = trust.users(self.root, self.settings.daemon_users)
        for problem in problems:
            self.errors("proc", problem)
        if trusted != self.trusted:
            self.log.info("daemons are trusted when they run as uid %s", trusted.describe())
        self.trusted = trusted
        self.sockets.trusted_uids = trusted.uids

    def _select(self, daemons: List[Found], live: Set[Key], now: float) -> Tuple[List[Tuple[Daemon, ProcStat]], int]:
        """The daemons to report, each with its fsid and its stat, and how many had no known fsid.
        With --cluster-fsid only that cluster's (a daemon whose fsid is unknown is left out: it cannot
        be told apart). Of processes claiming one (cluster, ceph_daemon), one is kept, the others left out
        and counted (duplicate series would make the whole exposition invalid): the one that listens on the
        daemon's admin socket (a one-off `ceph-osd -i 0 --flush-journal` or a leftover container beside the
        real osd.0 does not), else the first by PID."""
        claims: Dict[Tuple[str, str], List[Tuple[Daemon, ProcStat]]] = {}
        unknown = 0
        for daemon, st in daemons:
            label = daemon.ident.label
            live.add((daemon.pid, st.start_ticks))
            try:
                fsid = self.clusters.find(daemon, st.start_ticks, now).fsid
            except Exception as exc:  # a bug in one lookup must not hide the daemon
                self.log.debug("%s", daemon, exc_info=True)
                self.errors("proc", "{}: cluster fsid: {}: {}".format(label, type(exc).__name__, exc))
                fsid = ""
            if not fsid:
                unknown += 1
            wanted = self.settings.cluster_fsid
            if wanted is not None and fsid != wanted:
                continue
            claims.setdefault((fsid, label), []).append((daemon._replace(fsid=fsid), st))
        selected: List[Tuple[Daemon, ProcStat]] = []
        for (fsid, label), claimants in claims.items():
            kept = claimants[0]
            if len(claimants) > 1:
                kept = next((c for c in claimants if self.sockets.listens(c[0]) is True), kept)
            for daemon, _st in claimants:
                if daemon is not kept[0]:
                    what = "cluster " + fsid if fsid else "an unknown cluster"
                    message = "pid {}: {} of {} is already taken by pid {}; left out"
                    self.errors("proc", message.format(daemon.pid, label, what, kept[0].pid))
            selected.append(kept)
        return selected, unknown

    def _asks(self, daemon: Daemon, st: ProcStat, now: float) -> List[Dict[str, Any]]:
        """What this collection will ask the daemon's socket, to be asked side by side first."""
        asks: List[Dict[str, Any]] = []
        if daemon.ident.kind == "osd":
            if self.osd_map.due(daemon, st.start_ticks, now):
                asks.append(asok.config_get("osd_data"))
            if self.settings.daemon_counters:
                asks.append(daemon_counters.PERF_DUMP)
        elif daemon.ident.kind == "rgw":
            asks.append(daemon_counters.PERF_DUMP)
        return asks

    def _daemon(
        self, daemon: Daemon, st: ProcStat, cgroups_readable: bool, disks: Set[str], now: float
    ) -> List[Sample]:
        labels: Labels = (("ceph_daemon", daemon.ident.label), ("cluster", daemon.fsid))
        base: Labels = (*labels, ("hostname", self.settings.hostname))
        samples = self._process(st, base)
        if cgroups_readable:
            samples.extend(self._cgroup(daemon, base))
        if daemon.ident.kind == "osd":
            for row in self.osd_map.rows(daemon, st.start_ticks, now):
                labels = (*base, ("role", row.role), ("device", row.device), ("partition", row.partition))
                samples.append(Sample(f.OSD_DEVICE, "", (*labels, ("via", row.via)), 1))
                disks.add(row.device)
            if self.settings.daemon_counters:
                samples.extend(self._osd_counters(daemon))
        if daemon.ident.kind == "rgw":
            samples.extend(self._rgw(daemon, base))
        return samples

    def _osd_counters(self, daemon: Daemon) -> List[Sample]:
        """The OSD's counters as the module would export them, read through its admin socket; a failure is
        counted for the OSD by reason (and as an asok collection error) and says daemon_up 0."""
        label, key = daemon.ident.label, (daemon.fsid, daemon.ident.label)
        errors = self._counter_errors.setdefault(key, {})
        try:
            got = daemon_counters.read(lambda command: self.sockets.ask(daemon, command), label)
        except Exception as exc:  # Failure, or a bug: the OSD's other samples must stay
            reason = exc.reason if isinstance(exc, daemon_counters.Failure) else daemon_counters.REASON_ERROR
            errors[reason] = errors.get(reason, 0) + 1
            self.errors("asok", "{}: counters: {}".format(label, exc))
            got, ok = daemon_counters.counters.Extracted([], [], []), False
        else:
            self._counters_read[key] = time.time()
            ok = True
        status = daemon_counters.status_samples(label, got, ok, self._counters_read.get(key, 0.0), errors)
        return daemon_counters.placed(got.samples + status, daemon.fsid, self.settings.hostname)

    def _device_kinds(self, host: Labels, disks: List[str]) -> List[Sample]:
        """One row per disk beneath an OSD: its kind (device_kind.py), whichever OSDs share it."""
        self.device_kinds.keep_only(disks)
        rows = []
        for disk in disks:
            k = self.device_kinds.kind(disk)
            labels = (*host, ("device", disk), ("kind", k.kind), ("rotational", k.rotational))
            rows.append(Sample(f.DEVICE_INFO, "", (*labels, ("transport", k.transport)), 1))
        return rows

    def _process(self, st: ProcStat, base: Labels) -> List[Sample]:
        return [
            Sample(f.CPU_SECONDS, "", (*base, ("mode", "user")), st.utime_ticks / self.clk_tck),
            Sample(f.CPU_SECONDS, "", (*base, ("mode", "system")), st.stime_ticks / self.clk_tck),
            Sample(f.THREADS, "", base, st.threads),
            Sample(f.RSS, "", base, st.rss_pages * self.page_size),
        ]

    def _cgroup(self, daemon: Daemon, base: Labels) -> List[Sample]:
        try:
            cg = self.cgroups.read(daemon.pid)
        except (OSError, ValueError, CgroupError) as exc:
            self.errors("cgroup", "{}: {}".format(daemon.ident.label, exc))
            return []
        if cg is None:
            return []
        info = (*base, ("cgroup_version", cg.version), ("cgroup", cg.path))
        samples = [Sample(f.CGROUP_INFO, "", info, 1)]
        if cg.limit_cores is not None:
            samples.append(Sample(f.CPU_LIMIT, "", base, cg.limit_cores))
        if cg.throttling is not None:
            samples.append(Sample(f.CPU_PERIODS, "", base, cg.throttling.periods))
            samples.append(Sample(f.CPU_THROTTLED_PERIODS, "", base, cg.throttling.throttled_periods))
            samples.append(Sample(f.CPU_THROTTLED_SECONDS, "", base, cg.throttling.throttled_seconds))
        return samples

    def _rgw(self, daemon: Daemon, base: Labels) -> List[Sample]:
        try:
            dump = self.sockets.ask(daemon, daemon_counters.PERF_DUMP)
        except (asok.AsokError, OSError) as exc:
            self.errors("asok", "{}: perf dump: {}".format(daemon.ident.label, exc))
            return []
        ops = rgw.objecter_ops(dump) if isinstance(dump, dict) else {}
        return [Sample(f.RGW_OBJECTER_OPS, "", (*base, ("op", op)), ops[op]) for op, _ in rgw.OPS if op in ops]

    def _network(self, host: Labels) -> List[Sample]:
        try:
            links = network.capacities(
                self.root, self.tc, lambda message: self.errors("network", message), self._net_exclude
            )
        except OSError as exc:
            self.errors("network", "listing /sys/class/net: {}".format(exc))
            return []
        rows = []
        for link in links:
            labels = (*host, ("device", link.device), ("source", link.source))
            rows.append(Sample(f.LINK_CAPACITY, "", labels, link.bytes_per_second))
        if self.ip is not None:
            for held in nic_map.carried_addresses(self.root, self.ip, lambda message: self.errors("network", message)):
                labels = (*host, ("address", held.address), ("device", held.device), ("carrier", held.carrier))
                rows.append(Sample(f.ADDRESS_INFO, "", labels, 1.0))
        return rows
