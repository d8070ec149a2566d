"""`perfwatch status` and `perfwatch metrics`, declared to the mgr as module.py declares the others; Module
inherits them (its options, loop counters, collector and endpoint are what they show)."""

import os
import time
from typing import Any

from mgr_module import HandleCommandResult

from ..ceph import mgr_compat
from ..common.version import __version__
from . import metrics_table as osd_table
from . import status_report as status
from .output import OutputFormat, render


class StatusCommands:
    """Mixed into Module."""

    @mgr_compat.read_command("perfwatch status")
    def cmd_status(self, format: OutputFormat = OutputFormat.plain) -> HandleCommandResult:
        """Show the perfwatch version, this mgr's role, the endpoint and the effective options"""
        me: Any = self  # the Module
        report = status.build(
            version=__version__,
            mgr_id=me.get_mgr_id(),
            active=me.is_active_mgr(),
            ceph_version=me.version,
            options=me._config.redacted(),
            started_at=me._started_at,
            loop_passes=me._passes,
            last_pass_at=me._last_pass_at,
            config_errors=dict(me._config_errors),
        )
        # The folder this mgr loaded perfwatch from: /usr/share/ceph/mgr/perfwatch from a package or an
        # image, else wherever mgr_module_path points.
        report["loaded_from"] = os.path.dirname(os.path.abspath(__file__))
        collector = me.collector
        endpoint = me._endpoint

        def budget(c: Any) -> Any:
            return status.cpu_budget(c.budget, c.cpu_seconds, me._config.collect_cpu_budget_percent, time.monotonic())

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
            "counters_unavailable": status.unavailable_report(collector.unavailable) if collector else {},
        }
        return HandleCommandResult(stdout=render(report, format, status.render_plain))

    @mgr_compat.read_command("perfwatch metrics")
    def cmd_metrics(self, format: OutputFormat = OutputFormat.plain) -> HandleCommandResult:
        """Per OSD: onode and buffer cache hit ratios, compaction queue, write stalls, RocksDB spill-over"""
        me: Any = self
        collector = me.collector
        table = osd_table.rows(collector.latest, collector.last_success, time.time()) if collector else []
        return HandleCommandResult(stdout=render(table, format, osd_table.render_plain))
