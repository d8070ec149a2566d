"""One row per disk beneath an OSD (what the OSD devices part found this collection): its kind, HDD, SSD
or NVMe, its rotational flag and transport (device_kind.py), whichever OSDs share it."""

from typing import List

from perfwatch.common.metrics_model import Labels, Sample

from .. import families as f
from .registry import HOST, PARTS, Part, Run


@PARTS.register("device_kinds", HOST)
class DeviceKinds(Part):
    def host(self, run: Run, host: Labels) -> List[Sample]:
        disks = sorted(run.disks)
        kinds = self.c.device_kinds
        kinds.keep_only(disks)
        rows = []
        for disk in disks:
            k = kinds.kind(disk)
            labels = (*host, ("device", disk), ("kind", k.kind), ("rotational", k.rotational))
            rows.append(Sample(f.DEVICE_INFO, "", (*labels, ("transport", k.transport)), 1))
        return rows
