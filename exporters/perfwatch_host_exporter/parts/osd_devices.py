"""Each OSD's BlueStore devices: the kernel block devices beneath its block, block.db and block.wal
(osd_map.py), as rows that join with node_exporter's node_disk_*; the disks found go to the device
kinds part."""

from typing import TYPE_CHECKING, List

from perfwatch.common.metrics_model import Labels, Sample

from .. import families as f
from .registry import PARTS, Part, Run

if TYPE_CHECKING:  # pragma: no cover
    from ..discovery import Daemon
    from ..procfs import ProcStat


@PARTS.register("osd_devices")
class OsdDevices(Part):
    def daemon(self, run: Run, daemon: "Daemon", st: "ProcStat", base: Labels) -> List[Sample]:
        if daemon.ident.kind != "osd":
            return []
        samples = []
        for row in self.c.osd_map.rows(daemon, st.start_ticks, run.started):
            labels = (*base, ("role", row.role), ("device", row.device), ("partition", row.partition))
            samples.append(Sample(f.OSD_DEVICE, "", (*labels, ("via", row.via)), 1))
            run.disks.add(row.device)
        return samples
