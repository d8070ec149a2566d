"""One collection: find the trusted daemons, run the exporter's parts (parts/: one file each) on each
daemon and on the host, as samples, with each part's duration and success. The collection loop
(collection_loop.py) runs it in the background; scrapes never wait for it. What it asks the daemons'
admin sockets it asks side by side first (side_by_side.py), so hung daemons delay the collection by about
one timeout, not one each."""

import logging
import os
import re
import threading
import time
from functools import partial
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Set, Tuple

from perfwatch.common.exposition import render
from perfwatch.common.metrics_model import Labels, Sample

from . import asok, daemon_counters, network, nic_map, side_by_side, trust
from . import families as f
from .cgroup_reader import CgroupReader
from .clusters import ClusterIds
from .device_kind import DeviceKinds
from .discovery import Daemon, Found, Scanner
from .errors import ErrorCounter
from .fsroot import Root
from .osd_map import Key, OsdDeviceMap
from .parts import PARTS
from .parts.registry import DAEMON, HOST, Part, Run
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
        self.net_exclude = re.compile(settings.net_device_exclude)
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
        self.parts: List[Part] = PARTS.build(self)
        self._lock = threading.Lock()

    def part(self, name: str) -> Part:
        """This collector's part of that name (parts/)."""
        return next(p for p in self.parts if p.name == name)

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
        run = Run(started, cgroups_readable)
        parts = [p for p in self.parts if p.enabled()]
        for daemon, st in selected:
            try:
                samples.extend(self._daemon(run, [p for p in parts if p.scope == DAEMON], daemon, st))
            except Exception as exc:  # one bad daemon never breaks a scrape
                self.log.debug("%s", daemon, exc_info=True)
                self.errors("proc", "{}: {}: {}".format(daemon.ident.label, type(exc).__name__, exc))
        self.osd_map.keep_only(live)
        self.clusters.keep_only(live)
        reported = {(d.fsid, d.ident.label) for d, _ in selected}
        for part in self.parts:
            part.keep_only(reported)
        for part in parts:
            if part.scope == HOST:
                samples.extend(self._timed(run, part, partial(part.host, run, host)))
        for part in parts:
            labels = (*host, ("part", part.name))
            samples.append(Sample(f.PART_DURATION, "", labels, run.seconds.get(part.name, 0.0)))
            samples.append(Sample(f.PART_SUCCESS, "", labels, 0.0 if part.name in run.failed else 1.0))
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

    def _daemon(self, run: Run, parts: List[Part], daemon: Daemon, st: ProcStat) -> List[Sample]:
        """The daemon parts' samples, in the parts' order; a part that raises ends the daemon's samples (the
        caller counts it as a proc error and goes on with the next daemon)."""
        labels: Labels = (("ceph_daemon", daemon.ident.label), ("cluster", daemon.fsid))
        base: Labels = (*labels, ("hostname", self.settings.hostname))
        samples: List[Sample] = []
        for part in parts:
            samples.extend(self._timed(run, part, partial(part.daemon, run, daemon, st, base)))
        return samples

    def _timed(self, run: Run, part: Part, call: Callable[[], List[Sample]]) -> List[Sample]:
        """call(), its seconds added to the part's; a part that raises is marked failed, and the exception
        goes on."""
        began = self.clock()
        try:
            return call()
        except Exception:
            run.failed.add(part.name)
            raise
        finally:
            run.seconds[part.name] = run.seconds.get(part.name, 0.0) + (self.clock() - began)
