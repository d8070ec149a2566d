"""Each OSD's BlueStore devices, mapped to kernel block devices; cached per process for a minute."""

import posixpath
from typing import Callable, Dict, List, Optional, Set, Tuple

from .asok import AsokError, config_get
from .devices import DeviceError, DeviceResolver, DeviceRow
from .discovery import Daemon, OnError
from .fsroot import Root
from .sockets import DaemonSockets

REFRESH_SECONDS = 60.0
ROLES = (("block", "block"), ("db", "block.db"), ("wal", "block.wal"))

Key = Tuple[int, int]  # (pid, start time in ticks): one process, even if the PID is reused


class OsdDeviceMap:
    def __init__(self, root: Root, sockets: DaemonSockets, on_error: OnError, clock: Callable[[], float]) -> None:
        self.root = root
        self.sockets = sockets
        self.on_error = on_error
        self.clock = clock
        self.resolver = DeviceResolver(root)
        self._cache: Dict[Key, Tuple[float, List[DeviceRow]]] = {}

    def rows(self, daemon: Daemon, start_ticks: int, now: Optional[float] = None) -> List[DeviceRow]:
        """now: the collection's time, as due() was asked with (so a map that falls due during the collection
        waits for the next: its osd_data was not asked ahead); the clock's when not given."""
        key = (daemon.pid, start_ticks)
        now = self.clock() if now is None else now
        if not self.due(daemon, start_ticks, now):
            return self._cache[key][1]
        rows = self._resolve(daemon)
        self._cache[key] = (now, rows)  # failures too: the next try is a minute away
        return rows

    def due(self, daemon: Daemon, start_ticks: int, now: Optional[float] = None) -> bool:
        """Whether rows(..., now) will look again (and ask the daemon for its osd_data)."""
        cached = self._cache.get((daemon.pid, start_ticks))
        return cached is None or (self.clock() if now is None else now) - cached[0] >= REFRESH_SECONDS

    def keep_only(self, live: Set[Key]) -> None:
        """Forget the processes that are gone."""
        for key in [k for k in self._cache if k not in live]:
            del self._cache[key]

    def data_dir(self, daemon: Daemon) -> str:
        """osd_data from the admin socket; else --osd-data in argv; else /var/lib/ceph/osd/$cluster-$id."""
        try:
            reply = self.sockets.ask(daemon, config_get("osd_data"))
            value = reply.get("osd_data") if isinstance(reply, dict) else None
            if isinstance(value, str) and value:
                return value
            raise AsokError("config get osd_data: unexpected reply {!r}".format(reply))
        except (AsokError, OSError) as exc:
            self.on_error("asok", "{}: {}".format(daemon.ident.label, exc))
        if daemon.ident.osd_data:
            return daemon.ident.osd_data
        osd_id = daemon.ident.entity.partition(".")[2]
        return "/var/lib/ceph/osd/{}-{}".format(daemon.ident.cluster, osd_id)

    def _resolve(self, daemon: Daemon) -> List[DeviceRow]:
        """The data dir in the daemon's own root; else, with its fsid known, cephadm's host directory
        /var/lib/ceph/<fsid>/osd.N (bind-mounted as the container's data dir: the way in when the
        daemon's root cannot be read). Its block links are followed in the view it was found in."""
        label = daemon.ident.label
        data_dir = self.data_dir(daemon)
        places = [(self.root.view("/proc/{}/root".format(daemon.pid)), data_dir)]
        if daemon.fsid:
            places.append((self.root, "/var/lib/ceph/{}/{}".format(daemon.fsid, daemon.ident.entity)))
        problems: List[str] = []
        found: Optional[Tuple[Root, str]] = None
        for view, directory in places:
            try:
                resolved = view.resolve(directory)
                if view.exists(resolved):
                    found = (view, resolved)
                    break
                problems.append("data dir {} not found".format(directory))
            except OSError as exc:
                problems.append("{}: {}".format(directory, exc))
        if found is None:
            self.on_error("device", "{}: {}".format(label, "; ".join(problems)))
            return []
        daemon_root, resolved_dir = found
        try:  # an unreadable dir (no permission) must be an error, not an OSD without devices
            entries = set(daemon_root.listdir(resolved_dir))
        except OSError as exc:
            self.on_error("device", "{}: data dir {}: {}".format(label, data_dir, exc.strerror or exc))
            return []
        if "block" not in entries:
            self.on_error("device", "{}: no block in its data dir {}".format(label, data_dir))
        rows: List[DeviceRow] = []
        for role, entry in ROLES:
            path = posixpath.join(resolved_dir, entry)
            if entry not in entries:
                continue
            try:
                rows.extend(self.resolver.rows(daemon_root, path, role))
            except (DeviceError, OSError, ValueError) as exc:
                self.on_error("device", "{} {}: {}".format(label, entry, exc))
            for problem in self.resolver.problems:
                self.on_error("device", "{} {}: {}".format(label, entry, problem))
        return rows
