"""`ceph perfwatch status` and `ceph perfwatch metrics`: the options in force, the serve loop, the
collection and the endpoint (status_report.py builds the report), and the per-OSD summary
(metrics_table.py)."""

import os
import time
from typing import Any, Dict

from mgr_module import HandleCommandResult

from ..ceph import mgr_compat
from ..common.version import __version__
from . import metrics_table, status_report
from .host import CommandHost
from .output import OutputFormat, render

# The folder this mgr loaded perfwatch from (the package, above commands/): /usr/share/ceph/mgr/perfwatch
# from a package or an image, else wherever mgr_module_path points.
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class StatusCommands(CommandHost):
    @mgr_compat.read_command("perfwatch status")
    def cmd_status(self, format: OutputFormat = OutputFormat.plain) -> HandleCommandResult:
        """Show the perfwatch version, this mgr's role, the endpoint and the effective options"""
        report = status_report.build(
            version=__version__,
            mgr_id=self.get_mgr_id(),
            active=self.is_active_mgr(),
            ceph_version=self.version,
            options=self.config_in_force.redacted(),
            started_at=self.serve_started_at,
            loop_passes=self.serve_passes,
            last_pass_at=self.serve_last_pass_at,
            config_errors=dict(self.config_errors),
        )
        report["loaded_from"] = PACKAGE_DIR
        collector = self.collector
        endpoint = self.metrics_endpoint

        def budget(c: Any) -> Dict[str, Any]:
            percent = self.config_in_force.collect_cpu_budget_percent
            return status_report.cpu_budget(c.budget, c.cpu_seconds, percent, time.monotonic())

        report["endpoint"] = {
            "url": endpoint.url if endpoint is not None else None,
            "error": endpoint.error if endpoint is not None else None,
            "security": endpoint.security.describe() if endpoint is not None else None,
        }
        report["collection"] = {
            "cycles": collector.cycles if collector else 0,
            "cache_generated_at": collector.cache.get().generated_at if collector else None,
            **(budget(collector) if collector else {}),
            # Counters only some releases have, absent from this cluster's daemons (counters.py): their
            # families are empty for those daemons on purpose, e.g. RGW list latency before Tentacle.
            "counters_unavailable": status_report.unavailable_report(collector.unavailable) if collector else {},
        }
        return HandleCommandResult(stdout=render(report, format, status_report.render_plain))

    @mgr_compat.read_command("perfwatch metrics")
    def cmd_metrics(self, format: OutputFormat = OutputFormat.plain) -> HandleCommandResult:
        """Per OSD: onode and buffer cache hit ratios, compaction queue, write stalls, RocksDB spill-over"""
        collector = self.collector
        table = metrics_table.rows(collector.latest, collector.last_success, time.time()) if collector else []
        return HandleCommandResult(stdout=render(table, format, metrics_table.render_plain))
