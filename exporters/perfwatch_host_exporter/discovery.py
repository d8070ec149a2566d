"""Finding the Ceph daemons on this host: a scan of /proc that trusts only the daemons' own users.

Per process, each step only when the one before found a daemon: its comm, else the basename of its exe,
names a Ceph daemon (Reef's radosgw renames its main thread "notif-worker0"); its user ids are all trusted
ones (trust.py; any other is refused and counted); its stat and command line are read, once per process.
Another user's command line is never read: reading /proc/PID/cmdline waits for that process's memory map
lock, which its owner can hold for good (a page fault on a FUSE file that never answers).
"""

import posixpath
from typing import Callable, Dict, List, NamedTuple, Optional, Set, Tuple

from . import trust
from .fsroot import Root
from .identity import COMM_KINDS, Identity, identify
from .procfs import ProcStat, parse_cmdline, parse_stat

OnError = Callable[[str, str], None]  # (source, message)
OnRefused = Callable[..., None]  # (reason, message, once_per=None): ErrorCounter
Key = Tuple[int, int]  # (pid, start time in ticks): one process, even if the PID is reused

UNTRUSTED_PROCESS = "untrusted_process"  # a refusal reason (families.REFUSAL_REASONS)
_DELETED = " (deleted)"  # readlink of /proc/PID/exe when the binary was replaced (an upgrade)


class Daemon(NamedTuple):
    pid: int
    ident: Identity
    fsid: str = ""  # its cluster's fsid once clusters.py has found it; "" while unknown


class Found(NamedTuple):
    daemon: Daemon
    stat: ProcStat  # read during this scan


class Scanner:
    """scan() each collection; identities are kept per process (pid, start time) between scans."""

    def __init__(self, root: Root, on_error: OnError, on_refused: OnRefused) -> None:
        self.root = root
        self.on_error = on_error
        self.on_refused = on_refused
        self._identities: Dict[Key, Identity] = {}

    def scan(self, trusted: trust.Trusted, cluster: Optional[str], same_netns: bool) -> List[Found]:
        """Every trusted daemon process, in PID order, filtered by cluster name and (with same_netns) by
        the exporter's own network namespace. Two daemons may share a name (osd.0 of two clusters): the
        collector tells them apart by their fsid. A chrooted or containerised daemon is found the same
        way: its comm, exe and cmdline are what it runs as, wherever its root is."""
        own_netns = self.root.readlink("/proc/self/ns/net") if same_netns else None
        pids = sorted(int(entry) for entry in self.root.listdir("/proc") if entry.isdigit())
        found: List[Found] = []
        alive: Set[Key] = set()
        for pid in pids:
            got = self._process(pid, trusted, alive)
            if got is None or (cluster is not None and got.daemon.ident.cluster != cluster):
                continue
            if same_netns:
                try:
                    netns = self.root.readlink("/proc/{}/ns/net".format(pid))
                except OSError as exc:
                    self.on_error("proc", "pid {} ({}): {}".format(pid, got.daemon.ident.label, exc))
                    continue
                if netns != own_netns:
                    continue
            found.append(got)
        for key in [k for k in self._identities if k not in alive]:
            del self._identities[key]
        return found

    def _process(self, pid: int, trusted: trust.Trusted, alive: Set[Key]) -> Optional[Found]:
        proc = "/proc/{}".format(pid)
        try:
            comm = self.root.read_text(proc + "/comm", 4096).strip()
        except OSError:
            return None  # gone, or a kernel thread's oddity: not a daemon we know of
        kind = COMM_KINDS.get(comm) or COMM_KINDS.get(self._program(proc))
        if kind is None:
            return None
        try:
            uids = trust.parse_status_uids(self.root.read_text(proc + "/status", 65536))
            st = parse_stat(self.root.read_text(proc + "/stat", 65536))
        except (OSError, ValueError) as exc:
            self.on_error("proc", "pid {} ({}): {}".format(pid, comm, exc))
            return None
        if not trusted.allows(uids):
            users = "/".join(str(u) for u in uids)
            message = "pid {} ({!r}) runs as uid {}, not a Ceph daemon's user (trusted: {}); left alone".format(
                pid, comm, users, trusted.describe()
            )
            self.on_refused(UNTRUSTED_PROCESS, message, once_per="uid " + users)  # one warning per user
            return None
        key = (pid, st.start_ticks)
        alive.add(key)
        ident = self._identities.get(key)
        if ident is None:
            ident = self._identify(pid, comm, kind)  # a failure is tried again at the next scan
            if ident is None or not self._same_process(pid, st.start_ticks):
                return None  # or the PID was taken by another process while its command line was read
            self._identities[key] = ident
        return Found(Daemon(pid, ident), st)

    def _same_process(self, pid: int, start_ticks: int) -> bool:
        """The process at `pid` is still the one that started at `start_ticks` (and so still trusted)."""
        try:
            return parse_stat(self.root.read_text("/proc/{}/stat".format(pid), 65536)).start_ticks == start_ticks
        except (OSError, ValueError):
            return False

    def _program(self, proc: str) -> str:
        """The basename of the binary a process runs; "" when it cannot be told (a kernel thread)."""
        try:
            exe = self.root.readlink(proc + "/exe")
        except OSError:
            return ""
        if exe.endswith(_DELETED):
            exe = exe[: -len(_DELETED)]
        return posixpath.basename(exe)

    def _identify(self, pid: int, comm: str, kind: str) -> Optional[Identity]:
        try:
            argv = parse_cmdline(self.root.read_bytes("/proc/{}/cmdline".format(pid)))
        except OSError as exc:
            self.on_error("proc", "pid {} ({}): {}".format(pid, comm, exc))
            return None
        if not argv:
            return None  # a zombie
        return identify(kind, argv, pid)
