"""The lab's OSD devices: which loop devices each host gets, how they are split, what each OSD stores on.
Pure data derived from a LabConfig and its Topology, so every layout is unit-tested without the machine.

- The classic layout (the defaults): one loop device per OSD, over a sparse file (the media knob throttles
  the disk under the file).
- The campaigns' layouts (`--osds-per-device N`, `--db-device shared`, or `--media flash` with either): per
  host, N OSDs to a data device, one partition each; with a shared DB device, every OSD of the host keeps its
  block.db on a partition of one more device. Each such device is a loop device over another loop device: the
  media knob throttles the lower one, so the device the OSDs use shows busy and queued, and a data device and
  a DB device are throttled apart.
- `--media flash`: every OSD device says it does not rotate (queue/rotational 0, BlueStore's
  bluestore_bdev_rotational "0"), and the host exporter classifies it as ssd.
"""

from __future__ import annotations

import dataclasses

from .config import GIB, LabConfig
from .topology import Topology


@dataclasses.dataclass(frozen=True)
class Part:
    """One OSD's share of a device: its whole (number 0) or a partition (1-based)."""

    osd_id: int
    role: str  # block | db
    number: int
    size_bytes: int


@dataclasses.dataclass(frozen=True)
class Device:
    key: str  # its name in the lab state and its image file: "0" (osd.0's own), "h2-data1", "h2-db"
    host_index: int
    size_bytes: int
    parts: tuple[Part, ...]
    stacked: bool  # a loop device over a loop device of its own (the knob's device), else over the file
    rotational: bool

    @property
    def partitioned(self) -> bool:
        return any(p.number for p in self.parts)


def plan(config: LabConfig, topo: Topology) -> list[Device]:
    """Every loop device the lab attaches, lower ones implied by `stacked`, in the order they are made."""
    if config.osd_backing != "loop":
        return []
    rotational = config.media == "disk"
    size = config.osd_size_bytes
    if config.classic_devices:  # one plain loop device per OSD: the lab as it always was
        return [Device(str(o.id), o.host.index, size, (Part(o.id, "block", 0, size),), False, True) for o in topo.osds]
    devices: list[Device] = []
    n = config.osds_per_device
    db_size = int(config.db_size_gib * GIB)
    for host in topo.hosts:
        osds = topo.osds_on(host)
        for index, start in enumerate(range(0, len(osds), n)):
            group = osds[start : start + n]
            split = len(group) > 1
            parts = tuple(Part(osd, "block", i + 1 if split else 0, size) for i, osd in enumerate(group))
            devices.append(Device(f"h{host.index}-data{index}", host.index, size * len(group), parts, True, rotational))
        if config.db_device == "shared" and osds:
            parts = tuple(Part(osd, "db", i + 1, db_size) for i, osd in enumerate(osds))
            devices.append(Device(f"h{host.index}-db", host.index, db_size * len(osds), parts, True, rotational))
    return devices


LOWER_SUFFIX = "-disk"


def lower_key(key: str) -> str:
    """The state key of the loop device beneath a stacked one (over the image file)."""
    return key + LOWER_SUFFIX


# Partitions start 1 MiB into the device and are 1 MiB aligned, as partitioning tools make them.
SECTOR = 512
ALIGN_SECTORS = 2048


def partition_table(parts: tuple[Part, ...]) -> list[tuple[int, int, int]]:
    """(number, start sector, sectors) of each partition, in order, aligned."""
    table = []
    start = ALIGN_SECTORS
    for part in sorted(parts, key=lambda p: p.number):
        sectors = part.size_bytes // SECTOR // ALIGN_SECTORS * ALIGN_SECTORS
        table.append((part.number, start, sectors))
        start += sectors
    return table


def image_size(device: Device) -> int:
    """Bytes of the device's image file: its partitions after the first aligned MiB, or its size."""
    if not device.partitioned:
        return device.size_bytes
    _number, start, sectors = partition_table(device.parts)[-1]
    return (start + sectors) * SECTOR
