"""Finding the Ceph daemons on this host: a scan of /proc."""

from typing import Callable, List, NamedTuple, Optional

from .fsroot import Root
from .identity import COMM_KINDS, Identity, identify
from .procfs import parse_cmdline

OnError = Callable[[str, str], None]  # (source, message)


class Daemon(NamedTuple):
    pid: int
    ident: Identity
    fsid: str = ""  # its cluster's fsid once clusters.py has found it; "" while unknown


def scan(root: Root, cluster: Optional[str], same_netns: bool, on_error: OnError) -> List[Daemon]:
    """Every process whose comm is a Ceph daemon's, in PID order, filtered by cluster name and (with
    same_netns) by the exporter's own network namespace. Two daemons may share a name (osd.0 of two
    clusters): the collector tells them apart by their fsid."""
    own_netns = root.readlink("/proc/self/ns/net") if same_netns else None
    pids = sorted(int(entry) for entry in root.listdir("/proc") if entry.isdigit())
    daemons: List[Daemon] = []
    for pid in pids:
        proc = "/proc/{}".format(pid)
        try:
            comm = root.read_text(proc + "/comm").strip()
        except OSError:
            continue  # gone, or not ours to read: not a daemon we know of yet
        if comm not in COMM_KINDS:
            continue
        try:
            argv = parse_cmdline(root.read_bytes(proc + "/cmdline"))
            netns = root.readlink(proc + "/ns/net") if same_netns else None
        except OSError as exc:
            on_error("proc", "pid {} ({}): {}".format(pid, comm, exc))
            continue
        if not argv:
            continue  # a zombie
        ident = identify(comm, argv, pid)
        if ident is None or (cluster is not None and ident.cluster != cluster):
            continue
        if same_netns and netns != own_netns:
            continue
        daemons.append(Daemon(pid, ident))
    return daemons
