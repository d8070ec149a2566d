"""Each RGW's RADOS operations by kind (its objecter's counters, read through its admin socket: rgw.py)."""

from typing import TYPE_CHECKING, List

from perfwatch.common.metrics_model import Labels, Sample

from .. import asok, daemon_counters, rgw
from .. import families as f
from .registry import PARTS, Part, Run

if TYPE_CHECKING:  # pragma: no cover
    from ..discovery import Daemon
    from ..procfs import ProcStat


@PARTS.register("rgw_objecter")
class RgwObjecter(Part):
    def daemon(self, run: Run, daemon: "Daemon", st: "ProcStat", base: Labels) -> List[Sample]:
        if daemon.ident.kind != "rgw":
            return []
        try:
            dump = self.c.sockets.ask(daemon, daemon_counters.PERF_DUMP)
        except (asok.AsokError, OSError) as exc:
            self.error(run, "asok", "{}: perf dump: {}".format(daemon.ident.label, exc))
            return []
        ops = rgw.objecter_ops(dump) if isinstance(dump, dict) else {}
        return [Sample(f.RGW_OBJECTER_OPS, "", (*base, ("op", op)), ops[op]) for op, _ in rgw.OPS if op in ops]
