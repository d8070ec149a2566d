"""Parsers for cgroup files: /proc/self/mountinfo, /proc/PID/cgroup, CPU limits and cpu.stat. Pure."""

import posixpath
import re
from typing import Dict, List, NamedTuple, Optional, Tuple

_OCTAL = re.compile(r"\\([0-7]{3})")


class Mount(NamedTuple):
    root: str  # the directory of the filesystem that is mounted here ("/" for a whole hierarchy)
    mountpoint: str
    fstype: str
    super_options: Tuple[str, ...]


class Membership(NamedTuple):
    hierarchy: str  # "0" for the unified (v2) hierarchy
    controllers: Tuple[str, ...]  # empty for v2
    path: str


def _unescape(field: str) -> str:
    """mountinfo escapes space, tab, newline and backslash as \\ooo."""
    return _OCTAL.sub(lambda m: chr(int(m.group(1), 8)), field)


def parse_mountinfo(text: str) -> List[Mount]:
    """/proc/PID/mountinfo: "id parent major:minor root mountpoint opts [optional...] - fstype source super"."""
    mounts: List[Mount] = []
    for line in text.splitlines():
        fields = line.split()
        if "-" not in fields:
            continue
        sep = fields.index("-")
        if sep < 5 or len(fields) < sep + 3:
            continue
        super_options = tuple(fields[sep + 3].split(",")) if len(fields) > sep + 3 else ()
        mounts.append(Mount(_unescape(fields[3]), _unescape(fields[4]), fields[sep + 1], super_options))
    return mounts


def _reach(mount: Mount) -> int:
    """How far up a mount's root reaches out of the reader's cgroup namespace ("/../.." is 2)."""
    parts = [p for p in mount.root.split("/") if p]
    return len(parts) - len([p for p in parts if p != ".."]) if parts[:1] == [".."] else 0


def cgroup_mounts(mounts: List[Mount]) -> Tuple[Optional[Mount], Optional[Mount]]:
    """(the v1 mount carrying the cpu controller, the cgroup2 mount): of several, the one that shows
    the most of the tree (in a container: the host's, bind-mounted, rather than the container's own),
    else the first."""
    v1 = [m for m in mounts if m.fstype == "cgroup" and "cpu" in m.super_options]
    v2 = [m for m in mounts if m.fstype == "cgroup2"]
    widest = lambda found: max(found, key=_reach) if found else None  # noqa: E731  (max keeps the first)
    return widest(v1), widest(v2)


def parse_proc_cgroup(text: str) -> List[Membership]:
    """/proc/PID/cgroup: "hierarchy-id:controller,list:/path" per line ("0::/path" for v2)."""
    found: List[Membership] = []
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        controllers = tuple(c for c in parts[1].split(",") if c)
        found.append(Membership(parts[0], controllers, parts[2]))
    return found


def cgroup_dir(mount: Mount, path: str, ns_root: Optional[str] = None) -> Optional[str]:
    """Where the cgroup `path` (as /proc/PID/cgroup names it) is under `mount`, taking the mount's root
    into account; None when the mount does not show that cgroup (it lies outside the mounted subtree).

    In a private cgroup namespace (a container's), both `path` and the mount's root are relative to the
    namespace's root and may climb out of it ("/../../kubepods/pod1/c2"): `ns_root` is then where that
    root is, relative to the mount's top (found by the reader, see cgroup_reader.py); without it such a
    path cannot be placed."""
    if ns_root is not None:
        rel = posixpath.normpath(posixpath.join(ns_root, path.lstrip("/")))
        if rel == "..":
            return None
        if rel.startswith("../"):
            return None  # above the mounted tree
        return mount.mountpoint if rel == "." else posixpath.join(mount.mountpoint, rel)
    root = mount.root.rstrip("/")
    if root and path != root and not path.startswith(root + "/"):
        return None
    rel = path[len(root) :].lstrip("/")
    if rel == ".." or rel.startswith("../") or "/../" in "/" + rel + "/":
        return None  # climbs out of the namespace: only ns_root can place it
    return posixpath.join(mount.mountpoint, rel) if rel else mount.mountpoint


def outside_namespace(path: str) -> bool:
    """A cgroup path of a private cgroup namespace's reader that climbs out of it ("/../x")."""
    return path == "/.." or path.startswith("/../")


def limit_v1(quota_text: str, period_text: str) -> Optional[float]:
    """cpu.cfs_quota_us / cpu.cfs_period_us in cores; None when unlimited (quota -1)."""
    quota = int(quota_text.strip())
    period = int(period_text.strip())
    if quota < 0 or period <= 0:
        return None
    return quota / period


def limit_v2(cpu_max: str) -> Optional[float]:
    """cpu.max ("max 100000" or "20000 100000") in cores; None when unlimited."""
    parts = cpu_max.split()
    if not parts or parts[0] == "max":
        return None
    period = int(parts[1]) if len(parts) > 1 else 100000
    return int(parts[0]) / period if period > 0 else None


def parse_cpu_stat(text: str) -> Dict[str, int]:
    """cpu.stat: "key value" lines."""
    stats: Dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2:
            try:
                stats[parts[0]] = int(parts[1])
            except ValueError:
                continue
    return stats


class Throttling(NamedTuple):
    periods: int
    throttled_periods: int
    throttled_seconds: float


def throttling(version: str, stats: Dict[str, int]) -> Optional[Throttling]:
    """v1: nr_periods, nr_throttled, throttled_time (ns); v2: nr_periods, nr_throttled, throttled_usec.
    None when the keys are absent (v2 without the cpu controller enabled for the group)."""
    key, scale = ("throttled_time", 1e-9) if version == "1" else ("throttled_usec", 1e-6)
    if "nr_periods" not in stats or "nr_throttled" not in stats or key not in stats:
        return None
    return Throttling(stats["nr_periods"], stats["nr_throttled"], stats[key] * scale)
