"""A daemon's cgroup CPU limit and throttling, read from the host's cgroup mounts (v1 or v2)."""

import posixpath
from typing import List, NamedTuple, Optional

from . import cgroups
from .fsroot import Root


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


class CgroupReader:
    def __init__(self, root: Root) -> None:
        self.root = root
        self.v1: Optional[cgroups.Mount] = None
        self.v2: Optional[cgroups.Mount] = None

    def refresh_mounts(self) -> None:
        """Read where the cgroup hierarchies are mounted (once per scrape). The exporter must see the
        host's /sys/fs/cgroup (see the README for containers)."""
        mounts = cgroups.parse_mountinfo(self.root.read_text("/proc/self/mountinfo"))
        self.v1, self.v2 = cgroups.cgroup_mounts(mounts)

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
        directory = cgroups.cgroup_dir(mount, path)
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
