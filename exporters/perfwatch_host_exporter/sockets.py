"""Asking a daemon found on this host through its admin socket."""

import os
from typing import Any, Dict, FrozenSet, List, Optional, Set, Tuple

from .asok import UNTRUSTED_SOCKET, AsokCall, AsokError, AsokListener, Listener, UntrustedSocket, candidates
from .asok import listener as asok_listener
from .discovery import Daemon, OnRefused
from .fsroot import Root


class DaemonSockets:
    def __init__(
        self,
        root: Root,
        call: AsokCall,
        asok_dirs: List[str],
        timeout: float,
        on_refused: OnRefused,
        listener: AsokListener = asok_listener,
    ) -> None:
        self.root = root
        self.call = call
        self.listener = listener
        self.asok_dirs = asok_dirs
        self.timeout = timeout
        self.on_refused = on_refused
        self.trusted_uids: FrozenSet[int] = frozenset({0})  # the collector sets the users it trusts now

    def paths(self, daemon: Daemon) -> List[str]:
        """The candidate sockets that exist, in order, as paths in the exporter's filesystem. The daemon's
        paths are resolved inside its own root (/proc/PID/root), symlinks like /var/run -> /run included.
        A root that cannot be read (no ptrace access to the daemon) just leaves out those candidates. One
        socket found at two paths (a packaged daemon's, in its root and in --asok-dir /var/run/ceph) is one
        candidate: a hung daemon asked at both would cost each command two timeouts."""
        daemon_root = self.root.view("/proc/{}/root".format(daemon.pid))
        tried: List[str] = []
        found: List[str] = []
        seen: Set[Tuple[int, int]] = set()
        for view, path in candidates(daemon.ident, self.asok_dirs, daemon.fsid):
            where = daemon_root if view == "daemon" else self.root
            tried.append(path)
            try:
                resolved = where.resolve(path)
            except OSError:
                continue
            if where.exists(resolved):
                real = where.real(resolved)
                try:
                    st = os.stat(real)
                except OSError:  # gone meanwhile: asking it says so
                    found.append(real)
                    continue
                if (st.st_dev, st.st_ino) not in seen:
                    seen.add((st.st_dev, st.st_ino))
                    found.append(real)
        if not found:
            raise AsokError("no admin socket found (tried {})".format(", ".join(tried)))
        return found

    def listens(self, daemon: Daemon) -> Optional[bool]:
        """Whether the daemon's process listens on the first of its sockets that has a listener (nothing is
        sent); None when none has one, or its listener has no PID in our namespace."""
        try:
            paths = self.paths(daemon)
        except AsokError:
            return None
        for path in paths:
            try:
                pid, _uid = self.listener(path, self.timeout)
            except (AsokError, OSError):
                continue
            return None if pid == 0 else pid == daemon.pid
        return None

    def ask(self, daemon: Daemon, command: Dict[str, Any]) -> Any:
        """Ask through the first socket that answers and belongs to the daemon's process: a stale socket
        file (a daemon of that name that is gone), or another cluster's daemon of the same name, must
        not hide the daemon's own socket further down the list. A socket another user listens on is
        refused (counted) and never sent anything."""
        last: Exception = AsokError("no admin socket")
        expected = Listener(daemon.pid, self.trusted_uids)
        for path in self.paths(daemon):
            try:
                return self.call(path, command, self.timeout, expected)
            except UntrustedSocket as exc:
                self.on_refused(UNTRUSTED_SOCKET, "{}: {}".format(daemon.ident.label, exc))
                last = exc
            except (AsokError, OSError) as exc:
                last = exc
        raise last
