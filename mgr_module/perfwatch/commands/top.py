"""`ceph perfwatch top`: the busiest pools or clients of the last window, from the load attribution the
active mgr runs (load/; load/top_rows.py builds the rows)."""

import enum
import errno
from typing import Any, Dict, Optional

from mgr_module import HandleCommandResult

from ..ceph import mgr_compat
from ..load import top_rows
from ..load.queries import TOMBSTONE
from ..load.tally import EMPTY
from .host import CommandHost
from .output import OutputFormat, render


class LoadBy(enum.Enum):
    pool = "pool"
    client = "client"


class TopCommands(CommandHost):
    @mgr_compat.read_command("perfwatch top")
    def cmd_top(
        self,
        osd: Optional[int] = None,
        pool: Optional[str] = None,
        by: LoadBy = LoadBy.pool,
        format: OutputFormat = OutputFormat.plain,
    ) -> HandleCommandResult:
        """Busiest pools or clients over the last window, cluster-wide or on one OSD / in one pool"""
        load = self.load
        if load is None:
            return HandleCommandResult(-errno.EAGAIN, "", "perfwatch is starting on this mgr: try again in a moment")
        by_name = by.value if isinstance(by, LoadBy) else str(by)
        last, names = load.snapshot()  # one window and the pool names of that window
        note = ""
        if not set(load.owner.registered) - {TOMBSTONE}:
            note = "no load query registered (load_attribution is off, or refused: see the mgr log)"
        elif last is EMPTY:
            note = "no window yet: the queries are asked every collect_interval, after 15 s at least"
        try:
            if note:  # the arguments are still checked; a pool or client query cannot be judged yet
                report: Dict[str, Any] = dict(
                    top_rows.rows(EMPTY, {}, by_name, osd, None, need_clients=False), pool=pool
                )
                report["note"] = note
            else:
                report = top_rows.rows(last, names, by_name, osd, pool)
        except top_rows.TopError as exc:
            return HandleCommandResult(-errno.EINVAL, "", str(exc))
        return HandleCommandResult(stdout=render(report, format, top_rows.render_plain))
