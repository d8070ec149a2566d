"""Asking a daemon found on this host through its admin socket."""

from typing import Any, Dict, List

from .asok import AsokCall, AsokError, candidates
from .discovery import Daemon
from .fsroot import Root


class DaemonSockets:
    def __init__(self, root: Root, call: AsokCall, asok_dirs: List[str], timeout: float) -> None:
        self.root = root
        self.call = call
        self.asok_dirs = asok_dirs
        self.timeout = timeout

    def path(self, daemon: Daemon) -> str:
        """The first candidate socket that exists, as a path in the exporter's filesystem. The daemon's
        paths are resolved inside its own root (/proc/PID/root), symlinks like /var/run -> /run included."""
        daemon_root = self.root.view("/proc/{}/root".format(daemon.pid))
        tried: List[str] = []
        for view, path in candidates(daemon.ident, self.asok_dirs):
            where = daemon_root if view == "daemon" else self.root
            resolved = where.resolve(path)
            if where.exists(resolved):
                return where.real(resolved)
            tried.append(path)
        raise AsokError("no admin socket found (tried {})".format(", ".join(tried)))

    def ask(self, daemon: Daemon, command: Dict[str, Any]) -> Any:
        return self.call(self.path(daemon), command, self.timeout)
