"""Each daemon's cluster fsid, asked of the sources in fsid.py in order; cached per process.

A daemon's fsid cannot change while it runs: once found it is kept for the life of the process (PID and
start time). Not found yet (a daemon still starting, its socket not up) is asked again after a minute.
"""

import logging
from typing import Callable, Dict, NamedTuple, Optional, Set, Tuple

from . import fsid
from .asok import AsokError, config_get
from .cgroups import parse_mountinfo
from .discovery import Daemon
from .fsroot import MOUNTINFO_LIMIT, Root
from .osd_map import Key
from .sockets import DaemonSockets

RETRY_SECONDS = 60.0


class Found(NamedTuple):
    fsid: str  # "" when no source told it
    source: str  # argv | cephadm-mounts | cephadm-unit | asok | conf | ""


UNKNOWN = Found("", "")


class ClusterIds:
    def __init__(
        self, root: Root, sockets: DaemonSockets, clock: Callable[[], float], log: Optional[logging.Logger] = None
    ) -> None:
        self.root = root
        self.sockets = sockets
        self.clock = clock
        self.log = log or logging.getLogger(__name__)
        self._cache: Dict[Key, Tuple[float, Found]] = {}

    def due(self, daemon: Daemon, start_ticks: int, now: Optional[float] = None) -> bool:
        """Whether find(..., now) will look (and may ask the daemon) rather than answer from its cache."""
        cached = self._cache.get((daemon.pid, start_ticks))
        now = self.clock() if now is None else now
        return cached is None or (not cached[1].fsid and now - cached[0] >= RETRY_SECONDS)

    def find(self, daemon: Daemon, start_ticks: int, now: Optional[float] = None) -> Found:
        """now: the collection's time, as due() was asked with (a lookup that falls due during the
        collection waits for the next, not asked in turn); the clock's when not given."""
        key = (daemon.pid, start_ticks)
        now = self.clock() if now is None else now
        if not self.due(daemon, start_ticks, now):
            return self._cache[key][1]
        found = self._find(daemon)
        self._cache[key] = (now, found)
        if found.fsid:
            self.log.debug("%s (pid %d): cluster %s from %s", daemon.ident.label, daemon.pid, found.fsid, found.source)
        else:
            self.log.debug("%s (pid %d): no source tells its cluster fsid", daemon.ident.label, daemon.pid)
        return found

    def keep_only(self, live: Set[Key]) -> None:
        """Forget the processes that are gone."""
        for key in [k for k in self._cache if k not in live]:
            del self._cache[key]

    def _find(self, daemon: Daemon) -> Found:
        ident = daemon.ident
        if ident.fsid:
            value = fsid.normalise(ident.fsid)
            if value:
                return Found(value, "argv")
        proc = "/proc/{}".format(daemon.pid)
        value = self._read(
            lambda: fsid.from_mounts(parse_mountinfo(self.root.read_text(proc + "/mountinfo", MOUNTINFO_LIMIT)))
        )
        if value:
            return Found(value, "cephadm-mounts")
        value = self._read(lambda: fsid.from_cgroup(self.root.read_text(proc + "/cgroup")))
        if value:
            return Found(value, "cephadm-unit")
        value = self._asok(daemon)
        if value:
            return Found(value, "asok")
        value = self._conf(daemon)
        if value:
            return Found(value, "conf")
        return UNKNOWN

    @staticmethod
    def _read(parse: Callable[[], Optional[str]]) -> Optional[str]:
        try:
            return parse()
        except (OSError, ValueError):
            return None  # gone, or unreadable: the next source may still tell

    def _asok(self, daemon: Daemon) -> Optional[str]:
        """`config get fsid`, answered by the daemon's own process (sockets.ask checks the listener)."""
        try:
            reply = self.sockets.ask(daemon, config_get("fsid"))
        except (AsokError, OSError) as exc:
            self.log.debug("%s: config get fsid: %s", daemon.ident.label, exc)
            return None
        value = reply.get("fsid") if isinstance(reply, dict) else None
        return fsid.normalise(value) if isinstance(value, str) else None

    def _conf(self, daemon: Daemon) -> Optional[str]:
        """The first of the daemon's config files that can be read, inside the daemon's own root."""
        proc = "/proc/{}".format(daemon.pid)
        try:
            environ = fsid.parse_environ(self.root.read_bytes(proc + "/environ"))
        except OSError:
            environ = {}
        daemon_root = self.root.view(proc + "/root")
        for path in fsid.conf_paths(daemon.ident, environ):
            try:
                text = daemon_root.read_text(daemon_root.resolve(path))
            except (OSError, ValueError):
                continue
            return fsid.from_conf(text)
        return None
