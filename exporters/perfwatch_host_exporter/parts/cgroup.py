"""The daemon's CPU cgroup: its path and version, the quota that limits it (the smallest over its cgroup and
its ancestors) and that cgroup's throttling (cgroup_reader.py reads v1 and v2)."""

from typing import TYPE_CHECKING, List

from perfwatch.common.metrics_model import Labels, Sample

from .. import families as f
from ..cgroup_reader import CgroupError
from .registry import PARTS, Part, Run

if TYPE_CHECKING:  # pragma: no cover
    from ..discovery import Daemon
    from ..procfs import ProcStat


@PARTS.register("cgroup")
class Cgroup(Part):
    def daemon(self, run: Run, daemon: "Daemon", st: "ProcStat", base: Labels) -> List[Sample]:
        if not run.cgroups_readable:
            return []
        try:
            cg = self.c.cgroups.read(daemon.pid)
        except (OSError, ValueError, CgroupError) as exc:
            self.error(run, "cgroup", "{}: {}".format(daemon.ident.label, exc))
            return []
        if cg is None:
            return []
        info = (*base, ("cgroup_version", cg.version), ("cgroup", cg.path))
        samples = [Sample(f.CGROUP_INFO, "", info, 1)]
        if cg.limit_cores is not None:
            samples.append(Sample(f.CPU_LIMIT, "", base, cg.limit_cores))
        if cg.throttling is not None:
            samples.append(Sample(f.CPU_PERIODS, "", base, cg.throttling.periods))
            samples.append(Sample(f.CPU_THROTTLED_PERIODS, "", base, cg.throttling.throttled_periods))
            samples.append(Sample(f.CPU_THROTTLED_SECONDS, "", base, cg.throttling.throttled_seconds))
        return samples
