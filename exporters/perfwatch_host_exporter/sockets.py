"""Asking a daemon found on this host through its admin socket.

Within one collection (begin() to end()) a daemon that did not answer in time is not asked again: each
later command fails at once with AsokTimeout, so a hung OSD costs a collection one timeout, not one per
command. And a collection can ask its daemons side by side first (prefetch, side_by_side.py):
the answers wait here, and ask() hands them out to the code that asks one daemon after another."""

import json
import os
import threading
from typing import Any, Dict, FrozenSet, List, Optional, Set, Tuple

from .asok import (
    UNTRUSTED_SOCKET,
    AsokCall,
    AsokError,
    AsokListener,
    AsokTimeout,
    Listener,
    UntrustedSocket,
    candidates,
)
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
        self._lock = threading.Lock()
        # this collection's: answers asked ahead, by (pid, command); why each daemon that timed out did
        self._answers: Dict[Tuple[int, str], Tuple[Any, Optional[Exception]]] = {}
        self._silent: Dict[int, str] = {}

    def begin(self) -> None:
        """A new collection: nothing asked ahead, no daemon silent yet."""
        with self._lock:
            self._answers = {}
            self._silent = {}

    end = begin  # a collection's end: the answers it did not take are dropped (perf dumps are large)

    def prefetch(self, daemon: Daemon, commands: List[Dict[str, Any]]) -> None:
        """Ask the daemon these commands now, one after another (a thread of side_by_side.run_all), and
        keep each outcome for ask() in this collection (only this one's: a worker that outlives it writes
        into what the next collection no longer reads)."""
        with self._lock:
            answers = self._answers
        for command in commands:
            try:
                outcome: Tuple[Any, Optional[Exception]] = (self._ask(daemon, command), None)
            except Exception as exc:  # AsokError, OSError, or a bug: handed to the asker as it came
                outcome = (None, exc)
            with self._lock:
                answers[(daemon.pid, _key(command))] = outcome

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
        refused (counted) and never sent anything. An answer asked ahead in this collection is handed
        out instead."""
        with self._lock:  # handed out once: a large reply is not held to the collection's end
            ahead = self._answers.pop((daemon.pid, _key(command)), None)
        if ahead is not None:
            value, error = ahead
            if error is not None:
                raise error
            return value
        return self._ask(daemon, command)

    def _ask(self, daemon: Daemon, command: Dict[str, Any]) -> Any:
        with self._lock:
            silent = self._silent.get(daemon.pid)
        if silent is not None:
            raise AsokTimeout("not asked: {} earlier in this collection".format(silent))
        try:
            return self._each_path(daemon, command)
        except AsokTimeout:
            with self._lock:
                self._silent[daemon.pid] = "did not answer {} within {:g} s".format(_what(command), self.timeout)
            raise

    def _each_path(self, daemon: Daemon, command: Dict[str, Any]) -> Any:
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


def _key(command: Dict[str, Any]) -> str:
    return json.dumps(command, sort_keys=True)


def _what(command: Dict[str, Any]) -> str:
    """A command as a person would type it: `perf dump`, `config get osd_data`."""
    return " ".join(str(command[k]) for k in ("prefix", "var") if k in command)
