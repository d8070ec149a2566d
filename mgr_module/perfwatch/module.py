"""The ceph-mgr entry points: options, commands and the serve loops. Logic lives in the plain modules."""

import threading
import time
from typing import Any, ClassVar, Dict, List, Optional, Tuple

from mgr_module import CLIReadCommand, HandleCommandResult, MgrModule, MgrStandbyModule, Option

from . import options, osd_table, status
from .collector import Collector, Settings
from .mgr_adapter import MgrAdapter
from .output import OutputFormat, render
from .server import HttpServer
from .version import __version__
from .web import active_app, standby_app

MODULE_OPTIONS = [Option(**spec) for spec in options.OPTIONS]


def _endpoint(mod: Any) -> Dict[str, Any]:
    """server_addr/server_port, honouring per-mgr overrides (mgr/perfwatch/<id>/server_port)."""
    return {
        "addr": str(mod.get_localized_module_option("server_addr", options.defaults()["server_addr"])),
        "port": options.coerce("server_port", mod.get_localized_module_option("server_port")),
    }


class Module(MgrModule):
    MODULE_OPTIONS: ClassVar[List[Option]] = MODULE_OPTIONS
    NOTIFY_TYPES: ClassVar[List[Any]] = []  # we poll on our own interval; no mgr notifications wanted

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # No cluster accessors here: the mgr is not ready for them until serve().
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._started_at = time.time()
        self._passes = 0
        self._last_pass_at: Optional[float] = None
        self._config: Dict[str, Any] = options.defaults()
        self._endpoint: Dict[str, Any] = {}
        self._url: Optional[str] = None
        self._server_error: Optional[str] = None
        self.collector: Optional[Collector] = None

    def config_notify(self) -> None:
        """Re-read our options; called by the mgr whenever `ceph config set mgr mgr/perfwatch/...` changes."""
        for name in options.defaults():
            self._config[name] = options.coerce(name, self.get_module_option(name))
        self.log.debug("options now %s", self._config)
        self._wake.set()  # a new interval or endpoint takes effect now, not after the old interval

    def is_active_mgr(self) -> bool:
        mgr_map = self.get("mgr_map")
        return bool(mgr_map) and mgr_map.get("active_name") == self.get_mgr_id()

    def _settings(self) -> Settings:
        return Settings(
            request_timeout=float(self._config["request_timeout"]),
            max_in_flight=int(self._config["max_requests_in_flight"]),
        )

    def _ensure_server(self, server: Optional[HttpServer], collector: Collector) -> Optional[HttpServer]:
        """(Re)start the endpoint when it is not running or its address changed; never raises."""
        wanted = _endpoint(self)
        if server is not None and wanted == self._endpoint:
            return server
        if server is not None:
            server.stop()
        new = HttpServer(active_app(collector.cache, self.get_mgr_id()), wanted["addr"], wanted["port"], self.log)
        try:
            new.start()
        except OSError as exc:
            self._server_error = "cannot listen on {}:{}: {}".format(wanted["addr"], wanted["port"], exc)
            self.log.error("%s", self._server_error)
            self._endpoint = {}
            self._url = None
            return None
        self._server_error = None
        self._endpoint = wanted
        host = self.get_mgr_ip() if wanted["addr"] in ("::", "0.0.0.0") else wanted["addr"]
        self._url = "http://{}:{}/".format(host if ":" not in host else "[" + host + "]", wanted["port"])
        self.set_uri(self._url)
        return new

    def serve(self) -> None:
        self.log.info("perfwatch %s starting on mgr.%s", __version__, self.get_mgr_id())
        self.config_notify()
        self._wake.clear()
        collector = Collector(MgrAdapter(self), log=self.log)
        self.collector = collector
        server: Optional[HttpServer] = None
        try:
            while not self._stop.is_set():
                server = self._ensure_server(server, collector)
                self._passes += 1
                self._last_pass_at = time.time()
                try:
                    collector.collect(self._settings())
                except Exception:
                    self.log.exception("collection failed; trying again next interval")
                self._wake.wait(float(self._config["collect_interval"]))
                self._wake.clear()
        finally:
            if server is not None:
                server.stop()
        self.log.info("perfwatch serve loop stopped")

    def shutdown(self) -> None:
        self._stop.set()
        self._wake.set()

    @CLIReadCommand("perfwatch status")
    def cmd_status(self, format: OutputFormat = OutputFormat.plain) -> HandleCommandResult:
        """Show the perfwatch version, this mgr's role, the endpoint and the effective options"""
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
        collector = self.collector
        report["endpoint"] = {
            "url": self._url,
            "error": self._server_error,
        }
        report["collection"] = {
            "cycles": collector.cycles if collector else 0,
            "cache_generated_at": collector.cache.get().generated_at if collector else None,
        }
        return HandleCommandResult(stdout=render(report, format, status.render_plain))

    @CLIReadCommand("perfwatch metrics")
    def cmd_metrics(self, format: OutputFormat = OutputFormat.plain) -> HandleCommandResult:
        """Per OSD: onode and buffer cache hit ratios, compaction queue, write stalls, RocksDB spill-over"""
        collector = self.collector
        table = osd_table.rows(collector.latest, collector.last_success, time.time()) if collector else []
        return HandleCommandResult(stdout=render(table, format, osd_table.render_plain))


class StandbyModule(MgrStandbyModule):
    """On a standby mgr: answer the endpoint so scrapes of every mgr see who is active."""

    MODULE_OPTIONS: ClassVar[List[Option]] = MODULE_OPTIONS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._stop = threading.Event()

    def _behaviour(self) -> Tuple[str, int]:
        mode = str(self.get_module_option("standby_behaviour"))
        code = options.coerce("standby_error_status_code", self.get_module_option("standby_error_status_code"))
        return mode, code

    def serve(self) -> None:
        endpoint = _endpoint(self)
        app = standby_app(self.get_mgr_id(), self._behaviour, self.get_active_uri)
        server = HttpServer(app, endpoint["addr"], endpoint["port"], self.log)
        try:
            server.start()
        except OSError as exc:
            self.log.error("standby cannot listen on %s:%s: %s", endpoint["addr"], endpoint["port"], exc)
            return
        self._stop.wait()
        server.stop()

    def shutdown(self) -> None:
        self._stop.set()
