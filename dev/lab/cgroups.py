"""cgroup v1 groups for the lab's CPU and media knobs: create, fill with a process, remove. And the shell
commands that mount the machine's cgroup hierarchies again inside a network namespace (for an exporter).

A removed group first hands its processes back to the group each came from (else the root group), so a
daemon is never left limited.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import time
from pathlib import Path

from .config import LabError

MOUNTINFO = Path("/proc/self/mountinfo")


def _unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes (\\040)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def _cgroup_mounts(text: str) -> list[tuple[str, str, str]]:
    """(mount point, fstype, super options) of each cgroup and cgroup2 mount in mountinfo text."""
    found = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if sep and len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
            found.append((_unescape(fields[4]), tail[0], tail[2]))
    return found


def find_mount(controller: str, mountinfo: str | None = None) -> Path | None:
    """Where the cgroup v1 hierarchy holding `controller` is mounted, from /proc/self/mountinfo text."""
    for mountpoint, options in v1_hierarchies(mountinfo):
        if controller in options.split(","):
            return mountpoint
    return None


def v1_hierarchies(mountinfo: str | None = None) -> list[tuple[Path, str]]:
    """(mount point, super options) of every cgroup v1 hierarchy, e.g. (/sys/fs/cgroup/cpu, "rw,cpu")."""
    text = MOUNTINFO.read_text() if mountinfo is None else mountinfo
    return [(Path(m), options) for m, fstype, options in _cgroup_mounts(text) if fstype == "cgroup"]


def remount_script(mountinfo: str | None = None) -> str:
    """Shell commands that make /sys/fs/cgroup look as it does here, in a namespace whose /sys is new.

    `ip netns exec` mounts a fresh sysfs (so /sys/class/net shows the namespace's interfaces), which
    hides the cgroup mounts beneath /sys. A program there that reads cgroups (the host exporter) needs
    them back: the same v1 hierarchies, mounted again inside that private mount namespace only.
    """
    import shlex

    text = MOUNTINFO.read_text() if mountinfo is None else mountinfo
    unified = [Path(m) for m, fstype, _ in _cgroup_mounts(text) if fstype == "cgroup2"]
    if Path("/sys/fs/cgroup") in unified:  # a cgroup v2-only machine: one hierarchy, right there
        return "mount -t cgroup2 cgroup2 /sys/fs/cgroup"
    steps = ["mount -t tmpfs -o mode=755 cgroup-views /sys/fs/cgroup"]
    for mountpoint, fstype, options in _cgroup_mounts(text):
        where = shlex.quote(str(mountpoint))
        if fstype == "cgroup":
            steps.append(f"mkdir -p {where} && mount -t cgroup -o {shlex.quote(options)} cgroup {where}")
        else:
            steps.append(f"mkdir -p {where} && mount -t cgroup2 cgroup2 {where}")
    return " && ".join(steps)


def mount_of(controller: str) -> Path:
    mount = find_mount(controller)
    if mount is None:
        raise LabError(
            f"no cgroup v1 `{controller}` hierarchy is mounted on this machine: the lab's CPU and media knobs "
            "need cgroup v1 (cgroup v2-only machines are not supported yet)"
        )
    return mount


def group_path(controller: str, group: str) -> Path:
    return mount_of(controller) / group


def create(controller: str, group: str, settings: dict[str, str]) -> Path:
    """Make (or reuse) the group and write its settings, in order."""
    path = group_path(controller, group)
    path.mkdir(exist_ok=True)
    for name, value in settings.items():
        try:
            (path / name).write_text(value + "\n")
        except OSError as exc:
            raise LabError(f"cannot set {path / name} to {value!r}: {exc.strerror}") from exc
    return path


def group_of(pid: int, controller: str, proc_cgroup: str | None = None) -> str | None:
    """The process's group in the v1 hierarchy holding `controller` ("/user.slice"), from /proc/PID/cgroup."""
    try:
        text = Path(f"/proc/{pid}/cgroup").read_text() if proc_cgroup is None else proc_cgroup
    except OSError:
        return None
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3 and controller in parts[1].split(","):
            return parts[2]
    return None


def add_process(controller: str, group: str, pid: int) -> str | None:
    """Move a process (every thread of it) into the group; returns the group it was in before."""
    origin = group_of(pid, controller)
    try:
        (group_path(controller, group) / "cgroup.procs").write_text(f"{pid}\n")
    except OSError as exc:
        raise LabError(f"cannot move pid {pid} into the {controller} group {group}: {exc.strerror}") from exc
    return origin


def members(controller: str, group: str) -> list[int]:
    path = group_path(controller, group) / "cgroup.procs"
    try:
        return [int(p) for p in path.read_text().split()]
    except FileNotFoundError:
        return []


def remove(controller: str, group: str, origin: str | None = None) -> list[str]:
    """Hand the group's processes back to the group they came from (else the root group) and remove
    it; the problems met (never raises)."""
    mount = find_mount(controller)
    if mount is None:
        return []
    path = mount / group
    if not path.exists():
        return []
    back = mount / origin.lstrip("/") if origin and origin != f"/{group}" else mount
    if not (back / "cgroup.procs").exists():
        back = mount
    for pid in members(controller, group):
        with contextlib.suppress(OSError):  # a process that just exited
            (back / "cgroup.procs").write_text(f"{pid}\n")
    # A process killed a moment ago still holds its group until the kernel has finished its exit.
    deadline = time.monotonic() + 10
    while True:
        try:
            os.rmdir(path)
            return []
        except OSError as exc:
            if exc.errno != errno.EBUSY or time.monotonic() >= deadline:
                return [f"cgroup {path}: {exc.strerror}"]
        time.sleep(0.1)


def existing(prefix: str) -> list[Path]:
    """Groups named with `prefix` in the cpu and blkio hierarchies (for `down` and leak checks)."""
    found: list[Path] = []
    for controller in ("cpu", "blkio"):
        mount = find_mount(controller)
        if mount is not None:
            found += sorted(mount.glob(prefix + "*"))
    return found
