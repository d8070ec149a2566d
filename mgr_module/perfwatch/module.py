"""The ceph-mgr entry point: options, commands and the serve loop. Logic lives in the plain modules."""

import threading
import time
from typing import Any, ClassVar, Dict, List, Optional

from mgr_module import CLIReadCommand, HandleCommandResult, MgrModule, Option

from . import options, status
from .output import OutputFormat, render
from .version import __version__


class Module(MgrModule):
    MODULE_OPTIONS: ClassVar[List[Option]] = [Option(**spec) for spec in options.OPTIONS]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # No cluster accessors here: the mgr is not ready for them until serve().
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._started_at = time.time()
        self._passes = 0
        self._last_pass_at: Optional[float] = None
        self._config: Dict[str, Any] = options.defaults()

    def config_notify(self) -> None:
        """Re-read our options; called by the mgr whenever `ceph config set mgr mgr/perfwatch/...` changes."""
        for name in options.defaults():
            self._config[name] = options.coerce(name, self.get_module_option(name))
        self.log.debug("options now %s", self._config)
        self._wake.set()  # a new interval takes effect now, not after the old one runs out

    def is_active_mgr(self) -> bool:
        mgr_map = self.get("mgr_map")
        return bool(mgr_map) and mgr_map.get("active_name") == self.get_mgr_id()

    def serve(self) -> None:
        self.log.info("perfwatch %s starting on mgr.%s", __version__, self.get_mgr_id())
        self.config_notify()
        self._wake.clear()
        while not self._stop.is_set():
            self._passes += 1
            self._last_pass_at = time.time()
            self._wake.wait(float(self._config["collect_interval"]))
            self._wake.clear()
        self.log.info("perfwatch serve loop stopped")

    def shutdown(self) -> None:
        self._stop.set()
        self._wake.set()

    @CLIReadCommand("perfwatch status")
    def cmd_status(self, format: OutputFormat = OutputFormat.plain) -> HandleCommandResult:
        """Show the perfwatch version, this mgr's role and the effective options"""
        report = status.build(
            version=__version__,
            mgr_id=self.get_mgr_id(),
            active=self.is_active_mgr(),
            ceph_version=self.version,
            options=dict(self._config),
            started_at=self._started_at,
            loop_passes=self._passes,
            last_pass_at=self._last_pass_at,
        )
        return HandleCommandResult(stdout=render(report, format, status.render_plain))
