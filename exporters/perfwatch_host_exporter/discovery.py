"""Finding the Ceph daemons on this host: a scan of /proc."""

from typing import Callable, List, NamedTuple, Optional

from .fsroot import Root
from .identity import COMM_KINDS, Identity, identify, kind_of
from .procfs import parse_cmdline

OnError = Callable[[str, str], None]  # (source, message)


class Daemon(NamedTuple):
    pid: int
    ident: Identity
    fsid: str = ""  # its cluster's fsid once clusters.py has found it; "" while unknown


def scan(root: Root, cluster: Optional[str], same_netns: bool, on_error: OnError) -> List[Daemon]:
    """Every process whose comm or program (argv[0]) is a Ceph daemon's, in PID order, filtered by
    cluster name and (with same_netns) by the exporter's own network namespace. Two daemons may share a
    name (osd.0 of two clusters): the collector tells them apart by their fsid. A chrooted or
    containerised daemon is found the same way: its comm and cmdline are what it runs as, wherever its
    binary (/proc/PID/exe) and root (/proc/PID/root) are."""
    own_netns = root.readlink("/proc/self/ns/net") if same_netns else None
    pids = sorted(int(entry) for entry in root.listdir("/proc") if entry.isdigit())
    daemons: List[Daemon] = []
    for pid in pids:
        proc = "/proc/{}".format(pid)
        try:
            comm = root.read_text(proc + "/comm").strip()
        except OSError:
            continue  # gone, or not ours to read: not a daemon we know of yet
        known = comm in COMM_KINDS
        try:
            argv = parse_cmdline(root.read_bytes(proc + "/cmdline"))
        except OSError as exc:
            if known:
                on_error("proc", "pid {} ({}): {}".format(pid, comm, exc))
            continue  # else gone, or not ours to read: not a daemon we know of yet
        if not argv:
            continue  # a zombie, or a kernel thread
        if not known and kind_of(comm, argv) is None:
            continue
        try:
            netns = root.readlink(proc + "/ns/net") if same_netns else None
        except OSError as exc:
            on_error("proc", "pid {} ({}): {}".format(pid, comm, exc))
            continue
        ident = identify(comm, argv, pid)
        if ident is None or (cluster is not None and ident.cluster != cluster):
            continue
        if same_netns and netns != own_netns:
            continue
        daemons.append(Daemon(pid, ident))
    return daemons
