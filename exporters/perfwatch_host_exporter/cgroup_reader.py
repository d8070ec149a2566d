"""A daemon's cgroup CPU limit and throttling, read from the host's cgroup mounts (v1 or v2).

In the host's cgroup namespace (systemd, cephadm's --cgroupns=host) /proc/PID/cgroup paths and the cgroup
mounts name the same tree. An unprivileged Kubernetes container has a private cgroup namespace: other
processes' paths then read "/../../kubepods/...", relative to the exporter's own cgroup, and the host's
tree is seen through a bind mount of it whose root reads "/../../..". To place such paths the reader finds
its own cgroup in that tree (the folder whose cgroup.procs lists its PID; a search done once and checked
at each collection), which is where its namespace's root is.
"""

import collections
import os
import posixpath
import time
from typing import Dict, List, NamedTuple, Optional

from . import cgroups
from .fsroot import MOUNTINFO_LIMIT, Root


class CgroupCpu(NamedTuple):
    version: str  # "1" | "2"
    path: str  # the cgroup as /proc/PID/cgroup names it
    limit_cores: Optional[float]  # the smallest quota over the group and its ancestors; None: no limit
    throttling: Optional[cgroups.Throttling]


class CgroupError(Exception):
    pass


def _ancestry(directory: str, top: str) -> List[str]:
    """directory, its parent, ... up to and including top (the mount point)."""
    chain = [directory]
    while directory != top and directory.startswith(top.rstrip("/") + "/"):
        directory = posixpath.dirname(directory)
        chain.append(directory)
    return chain


MAX_SEARCHED = 100000  # cgroup folders looked at to find the exporter's own (a busy node has thousands)
SEARCH_SECONDS = 5.0  # and for at most this long
RETRY_SECONDS = 300.0  # a search that found nothing is not done again before this


class CgroupReader:
    def __init__(self, root: Root, own_pid: Optional[int] = None) -> None:
        self.root = root
        self.own_pid = own_pid if own_pid is not None else os.getpid()
        self.v1: Optional[cgroups.Mount] = None
        self.v2: Optional[cgroups.Mount] = None
        self._own: Dict[str, cgroups.Membership] = {}  # "1" | "2" -> the exporter's own membership
        self._ns_roots: Dict[str, str] = {}  # mountpoint -> its namespace root, relative to the mount's top
        self._not_found: Dict[str, float] = {}  # mountpoint -> when a search there found nothing

    def refresh_mounts(self) -> None:
        """Read where the cgroup hierarchies are mounted (once per collection). The exporter must see
        the host's cgroup tree: in its cgroup namespace, or through a bind mount (see the README)."""
        mounts = cgroups.parse_mountinfo(self.root.read_text("/proc/self/mountinfo", MOUNTINFO_LIMIT))
        self.v1, self.v2 = cgroups.cgroup_mounts(mounts)
        try:  # needed only in a private cgroup namespace (_ns_root says so when it is missing)
            own = cgroups.parse_proc_cgroup(self.root.read_text("/proc/self/cgroup"))
        except OSError:
            own = []
        self._own = {}
        v1_own = next((m for m in own if "cpu" in m.controllers), None)
        v2_own = next((m for m in own if m.hierarchy == "0" and not m.controllers), None)
        if v1_own is not None:
            self._own["1"] = v1_own
        if v2_own is not None:
            self._own["2"] = v2_own

    def read(self, pid: int) -> Optional[CgroupCpu]:
        """The daemon's CPU cgroup; None when no cgroup hierarchy with CPU control is mounted."""
        members = cgroups.parse_proc_cgroup(self.root.read_text("/proc/{}/cgroup".format(pid)))
        v1_member = next((m for m in members if "cpu" in m.controllers), None)
        v2_member = next((m for m in members if m.hierarchy == "0" and not m.controllers), None)
        if self.v1 is not None and v1_member is not None:
            return self._read("1", self.v1, v1_member.path)
        if self.v2 is not None and v2_member is not None:
            return self._read("2", self.v2, v2_member.path)
        return None

    def _read(self, version: str, mount: cgroups.Mount, path: str) -> CgroupCpu:
        ns_root = None
        if cgroups.outside_namespace(path) or cgroups.outside_namespace(mount.root):
            ns_root = self._ns_root(version, mount)
        directory = cgroups.cgroup_dir(mount, path, ns_root)
        if directory is None or not self.root.exists(directory):
            raise CgroupError("cgroup {} not found under {}".format(path, mount.mountpoint))
        limits = [(x, d) for d in _ancestry(directory, mount.mountpoint) for x in [self._limit(version, d)] if x]
        limit, limiting = min(limits) if limits else (None, directory)
        # Throttling is counted on the group whose quota bites: when that is an ancestor (a slice), the
        # daemon's own group shows none. Read it where the limit comes from, so the two figures agree.
        stat_path = posixpath.join(limiting, "cpu.stat")
        throttled = None
        if self.root.exists(stat_path):
            throttled = cgroups.throttling(version, cgroups.parse_cpu_stat(self.root.read_text(stat_path)))
        return CgroupCpu(version, path, limit, throttled)

    def _ns_root(self, version: str, mount: cgroups.Mount) -> str:
        """Where the exporter's cgroup namespace's root is, relative to the top of `mount`: its own
        cgroup's folder (found by its PID in cgroup.procs), less the path /proc/self/cgroup gives it.
        Raises CgroupError when it cannot be found."""
        own = self._own.get(version)
        if own is None:
            raise CgroupError("private cgroup namespace, and no cgroup v{} of the exporter's own".format(version))
        cached = self._ns_roots.get(mount.mountpoint)
        if cached is not None and self._lists_me(posixpath.join(mount.mountpoint, cached, own.path.lstrip("/"))):
            return cached
        failed = self._not_found.get(mount.mountpoint)
        found = None
        if failed is None or time.monotonic() - failed >= RETRY_SECONDS:
            found = self._find_me(mount.mountpoint)
            if found is None:
                self._not_found[mount.mountpoint] = time.monotonic()
        if found is None:
            raise CgroupError(
                "private cgroup namespace: the exporter's own cgroup (pid {}) is not under {}; mount the "
                "host's cgroup tree there".format(self.own_pid, mount.mountpoint)
            )
        depth = len([part for part in own.path.split("/") if part])
        rel = posixpath.relpath(found, mount.mountpoint)
        parts = [] if rel == "." else rel.split("/")
        if depth > len(parts):
            raise CgroupError("private cgroup namespace: own cgroup {} does not fit {}".format(own.path, found))
        ns_root = "/".join(parts[: len(parts) - depth]) or "."
        self._ns_roots[mount.mountpoint] = ns_root
        return ns_root

    def _lists_me(self, directory: str) -> bool:
        try:
            procs = self.root.read_text(posixpath.join(directory, "cgroup.procs"), 4 << 20).split()
        except OSError:
            return False
        return str(self.own_pid) in procs

    def _find_me(self, top: str) -> Optional[str]:
        """The folder under `top` whose cgroup.procs lists the exporter, breadth first, bounded."""
        pending = collections.deque([top])
        searched = 0
        deadline = time.monotonic() + SEARCH_SECONDS
        while pending and searched < MAX_SEARCHED and time.monotonic() < deadline:
            directory = pending.popleft()
            searched += 1
            if self._lists_me(directory):
                return directory
            try:
                names = self.root.listdir(directory)
            except OSError:
                continue
            pending.extend(
                posixpath.join(directory, name)
                for name in names
                if self.root.exists(posixpath.join(directory, name, "cgroup.procs"))  # a cgroup, not a file
            )
        return None

    def _limit(self, version: str, directory: str) -> Optional[float]:
        if version == "1":
            quota = posixpath.join(directory, "cpu.cfs_quota_us")
            period = posixpath.join(directory, "cpu.cfs_period_us")
            if not (self.root.exists(quota) and self.root.exists(period)):
                return None
            return cgroups.limit_v1(self.root.read_text(quota), self.root.read_text(period))
        cpu_max = posixpath.join(directory, "cpu.max")
        if not self.root.exists(cpu_max):  # the root group, or the cpu controller not enabled here
            return None
        return cgroups.limit_v2(self.root.read_text(cpu_max))
