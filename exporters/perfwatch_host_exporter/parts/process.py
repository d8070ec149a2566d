"""The daemon's process: CPU seconds by mode, threads and resident memory, from /proc/PID/stat."""

from typing import TYPE_CHECKING, List

from perfwatch.common.metrics_model import Labels, Sample

from .. import families as f
from .registry import PARTS, Part, Run

if TYPE_CHECKING:  # pragma: no cover
    from ..discovery import Daemon
    from ..procfs import ProcStat


@PARTS.register("process")
class Process(Part):
    def daemon(self, run: Run, daemon: "Daemon", st: "ProcStat", base: Labels) -> List[Sample]:
        clk_tck, page_size = self.c.clk_tck, self.c.page_size
        return [
            Sample(f.CPU_SECONDS, "", (*base, ("mode", "user")), st.utime_ticks / clk_tck),
            Sample(f.CPU_SECONDS, "", (*base, ("mode", "system")), st.stime_ticks / clk_tck),
            Sample(f.THREADS, "", base, st.threads),
            Sample(f.RSS, "", base, st.rss_pages * page_size),
        ]
