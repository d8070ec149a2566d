"""From a path (an OSD's `block`, `block.db`, `block.wal`) to the kernel block devices beneath it.

Device names are the kernel's, as /proc/diskstats and node_exporter's node_disk_* have them (sda,
nvme0n1, dm-0, loop3). A partition is reported as its disk with `partition` set, because
node_exporter leaves partitions out by default: the disk name is what joins.
"""

import os
import posixpath
import stat
from typing import List, NamedTuple, Optional, Set, Tuple

from .fsroot import Root

MAX_DEPTH = 4  # levels followed beneath the first device (loop -> its file's disk -> dm -> slaves ...)
_DELETED = " (deleted)"


class DeviceRow(NamedTuple):
    role: str  # block | db | wal
    device: str  # the disk, as in /proc/diskstats
    partition: str  # the partition on it ("sda1"), or ""
    via: str  # direct | file | loop | dm (| md for an md RAID's members, multipath for a dm-multipath's paths)


class Node(NamedTuple):
    disk: str
    partition: str
    disk_dir: str  # the disk's sysfs directory (in the host view)


class DeviceError(Exception):
    pass


class DeviceResolver:
    """Resolves in two views: the daemon's own root (its paths) and the host's (/sys, loop files)."""

    def __init__(self, host: Root) -> None:
        self.host = host
        # What could not be followed below the first device in the last rows() call: those branches
        # are left out, the rows found are kept (a loop's backing file may be gone or hidden from us).
        self.problems: List[str] = []

    def rows(self, daemon_root: Root, path: str, role: str) -> List[DeviceRow]:
        """Rows for one BlueStore device path (in the daemon's view): the first "direct" or "file", then
        what lies beneath it. Raises DeviceError (or OSError) when the path cannot be resolved."""
        self.problems = []
        target = daemon_root.resolve(path)
        st = daemon_root.stat(target)
        if stat.S_ISBLK(st.mode):
            node = self._by_name(posixpath.basename(target), st.rdev)
            if node is None:
                node = self._by_devnum(st.rdev)
            if node is None:
                raise DeviceError("{}: block device {} not in /sys".format(path, target))
            via = "direct"
        elif stat.S_ISREG(st.mode):
            node = self._by_devnum(st.dev)  # the filesystem holding the file
            if node is None:
                return []  # tmpfs, overlay, btrfs subvolume...: an anonymous device no disk stands for
            via = "file"
        else:
            raise DeviceError("{} -> {} is neither a block device nor a file".format(path, target))
        rows = [DeviceRow(role, node.disk, node.partition, via)]
        self._beneath(node, role, 1, rows, {node.disk})
        return rows

    def _beneath(self, node: Node, role: str, depth: int, rows: List[DeviceRow], seen: Set[str]) -> None:
        if depth > MAX_DEPTH:
            return
        below: List[Tuple[Node, str]] = []  # (node, via)
        backing = posixpath.join(node.disk_dir, "loop", "backing_file")
        if self.host.exists(backing):
            name = self.host.read_text(backing).strip()
            if name.endswith(_DELETED):
                name = name[: -len(_DELETED)]
            if name:
                try:
                    st = self.host.stat(self.host.resolve(name))
                    # a loop device over a block device (one loop stacked on another): that device itself;
                    # over a file: the disk holding the file
                    below_node = self._by_devnum(st.rdev if stat.S_ISBLK(st.mode) else st.dev)
                except OSError as exc:
                    self.problems.append("{}: backing file {}: {}".format(node.disk, name, exc))
                    below_node = None
                if below_node is not None:
                    below.append((below_node, "loop"))
        slaves = posixpath.join(node.disk_dir, "slaves")
        if self.host.exists(slaves):
            # md RAID members are "slaves" too; the paths of a dm-multipath device are "multipath": the
            # device above them is the one disk they all lead to
            via = "dm"
            if node.disk.startswith("md"):
                via = "md"
            elif is_multipath(self.host, node.disk_dir):
                via = "multipath"
            for slave in self.host.listdir(slaves):
                below_node = self._from_sysdir(self.host.resolve(posixpath.join(slaves, slave)))
                below.append((below_node, via))
        for below_node, via in below:
            row = DeviceRow(role, below_node.disk, below_node.partition, via)
            if row not in rows:
                rows.append(row)
            if below_node.disk not in seen:
                seen.add(below_node.disk)
                self._beneath(below_node, role, depth + 1, rows, seen)

    def _from_sysdir(self, sysdir: str) -> Node:
        """A device's sysfs directory (resolved) -> its disk: a partition's parent directory is the disk's."""
        if self.host.exists(posixpath.join(sysdir, "partition")):
            disk_dir = posixpath.dirname(sysdir)
            return Node(posixpath.basename(disk_dir), posixpath.basename(sysdir), disk_dir)
        return Node(posixpath.basename(sysdir), "", sysdir)

    def _by_name(self, name: str, rdev: int) -> Optional[Node]:
        """/sys/class/block/<name>, unless its `dev` says it is another device than the node's rdev
        (a container's /dev may name things differently)."""
        entry = "/sys/class/block/" + name
        if not name or not self.host.lexists(entry):
            return None
        sysdir = self.host.resolve(entry)
        dev_file = posixpath.join(sysdir, "dev")
        number = "{}:{}".format(os.major(rdev), os.minor(rdev))
        if rdev and self.host.exists(dev_file) and self.host.read_text(dev_file).strip() != number:
            return None
        return self._from_sysdir(sysdir)

    def _by_devnum(self, dev: int) -> Optional[Node]:
        """/sys/dev/block/MAJOR:MINOR; None for anonymous devices (major 0) and numbers sysfs lacks."""
        major, minor = os.major(dev), os.minor(dev)
        entry = "/sys/dev/block/{}:{}".format(major, minor)
        if major == 0 or not self.host.lexists(entry):
            return None
        return self._from_sysdir(self.host.resolve(entry))


def is_multipath(host: Root, disk_dir: str) -> bool:
    """A dm-multipath device: its dm/uuid starts with "mpath-" (as multipathd names them)."""
    uuid = posixpath.join(disk_dir, "dm", "uuid")
    try:
        return host.exists(uuid) and host.read_text(uuid).startswith("mpath-")
    except OSError:
        return False
