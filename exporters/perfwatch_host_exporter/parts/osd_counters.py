"""The OSD's counters as the module would export them, read through its admin socket (with
--daemon-counters: daemon_counters.py). A failure is counted for the OSD by reason (and as an asok
collection error) and says daemon_up 0."""

import time
from typing import TYPE_CHECKING, Any, Dict, List, Set, Tuple

from perfwatch.common.metrics_model import Labels, Sample

from .. import daemon_counters
from .registry import PARTS, Part, Run

if TYPE_CHECKING:  # pragma: no cover
    from ..discovery import Daemon
    from ..procfs import ProcStat


@PARTS.register("osd_counters")
class OsdCounters(Part):
    def __init__(self, collector: Any) -> None:
        super().__init__(collector)
        # per (cluster, OSD) whose counters are read here: when last read (wall clock), failures by reason
        self.last_read: Dict[Tuple[str, str], float] = {}
        self.failures: Dict[Tuple[str, str], Dict[str, int]] = {}

    def enabled(self) -> bool:
        return self.c.settings.daemon_counters

    def daemon(self, run: Run, daemon: "Daemon", st: "ProcStat", base: Labels) -> List[Sample]:
        if daemon.ident.kind != "osd":
            return []
        label, key = daemon.ident.label, (daemon.fsid, daemon.ident.label)
        errors = self.failures.setdefault(key, {})
        try:
            got = daemon_counters.read(lambda command: self.c.sockets.ask(daemon, command), label)
        except Exception as exc:  # Failure, or a bug: the OSD's other samples must stay
            reason = exc.reason if isinstance(exc, daemon_counters.Failure) else daemon_counters.REASON_ERROR
            errors[reason] = errors.get(reason, 0) + 1
            self.error(run, "asok", "{}: counters: {}".format(label, exc))
            got, ok = daemon_counters.counters.Extracted([], [], []), False
        else:
            self.last_read[key] = time.time()
            ok = True
        status = daemon_counters.status_samples(label, got, ok, self.last_read.get(key, 0.0), errors)
        return daemon_counters.placed(got.samples + status, daemon.fsid, self.c.settings.hostname)

    def keep_only(self, reported: Set[Tuple[str, str]]) -> None:
        self.last_read = {k: t for k, t in self.last_read.items() if k in reported}
        self.failures = {k: e for k, e in self.failures.items() if k in reported}
