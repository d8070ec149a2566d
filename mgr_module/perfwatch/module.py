"""The ceph-mgr entry points: options, commands and the serve loops. Logic lives in the plain modules."""

import threading
import time
from typing import Any, ClassVar, Dict, List, Optional, Tuple

from mgr_module import CLIReadCommand, CLIWriteCommand, HandleCommandResult, MgrModule, MgrStandbyModule, Option

from . import bench_commands, mgr_logging, options, osd_table, status, validation
from .benchmarks.metrics import ProbeHistograms, result_samples
from .benchmarks.run import Run
from .benchmarks.runner import Runner
from .benchmarks.store import BenchStore
from .collector import Collector, Settings
from .counters import Sample
from .mgr_adapter import MgrAdapter
from .output import OutputFormat, render
from .server import HttpServer
from .version import __version__
from .web import active_app, standby_app

MODULE_OPTIONS = [Option(**spec) for spec in options.OPTIONS]

BENCH_REGRESSION = "PERFWATCH_BENCH_REGRESSION"


def _endpoint(mod: Any) -> Dict[str, Any]:
    """server_addr/server_port, honouring per-mgr overrides (mgr/perfwatch/<id>/server_port)."""
    return {
        "addr": str(mod.get_localized_module_option("server_addr", options.defaults()["server_addr"])),
        "port": options.coerce("server_port", mod.get_localized_module_option("server_port")),
    }


class Module(MgrModule):
    MODULE_OPTIONS: List[Option] = MODULE_OPTIONS
    NOTIFY_TYPES: ClassVar[List[Any]] = []  # we poll on our own interval; no mgr notifications wanted

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # No cluster accessors here: the mgr is not ready for them until serve().
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._started_at = time.time()
        self._passes = 0
        self._last_pass_at: Optional[float] = None
        self._config: Dict[str, Any] = options.defaults()  # effective values: refused ones replaced
        self._config_errors: Dict[str, str] = {}  # option -> why its value is refused (validation.py)
        self._endpoint: Dict[str, Any] = {}
        self._url: Optional[str] = None
        self._server_error: Optional[str] = None
        self.collector: Optional[Collector] = None
        self.runner: Optional[Runner] = None
        self._histograms = ProbeHistograms()
        self._last_results: Dict[str, Any] = {}  # key -> (value, unit) of the latest result

    def config_notify(self) -> None:
        """Re-read our options; called by the mgr whenever `ceph config set mgr mgr/perfwatch/...` changes.
        A value validation.py refuses is not used (see validation.effective): it is logged once per
        change and reported in `ceph perfwatch status` and as PERFWATCH_CONFIG_INVALID."""
        raw = {name: options.coerce(name, self.get_module_option(name)) for name in options.defaults()}
        # The address this mgr listens on may be set per mgr (mgr/perfwatch/<id>/server_addr).
        raw["server_addr"] = str(self.get_localized_module_option("server_addr", raw["server_addr"]))
        config, refused = validation.effective(raw, options.defaults())
        for name, message in sorted(validation.newly_refused(self._config_errors, refused).items()):
            self.log.error("option %s refused, not used: %s", name, message)
        for name in sorted(set(self._config_errors) - set(refused)):
            self.log.info("option %s is valid again", name)
        changed = refused != self._config_errors
        self._config = config
        self._config_errors = refused
        self.log.debug("options now %s", options.redacted(self._config))
        if changed:
            self._update_health()
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
            self._server_error = None
            return server
        refused = validation.check("server_addr", wanted["addr"])
        if refused:  # keep listening where we are, if anywhere; never on a refused address
            self._server_error = "server_addr refused: " + refused
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
        # Two adapters: each keeps its own "one outstanding request per OSD" registry, so a benchmark's
        # long `bench` tell never makes the collector's `perf dump` of that OSD count as busy, or back.
        adapter = MgrAdapter(self, lambda: float(self._config["request_timeout"]))
        bench_adapter = MgrAdapter(self, lambda: float(self._config["request_timeout"]))
        store = BenchStore(
            self.get_store,
            self.set_store,
            int(self._config["history_limit"]),
            int(self._config["baseline_window"]),
            self.log,
        )
        self.runner = Runner(
            bench_adapter,
            bench_adapter.open_io,
            store,
            lambda: dict(self._config),
            self.log,
            _Progress(self),
            self._bench_finished,
        )
        self._load_last_results(store)
        self._update_health()
        collector = Collector(adapter, log=self.log, extra_samples=self._bench_samples)
        self.collector = collector
        server: Optional[HttpServer] = None
        try:
            while not self._stop.is_set():
                restored = mgr_logging.ensure_logging(self)
                if restored:
                    self.log.warning("log handlers %s were off the root logger; re-attached", ", ".join(restored))
                server = self._ensure_server(server, collector)
                self._passes += 1
                self._last_pass_at = time.time()
                for step, what in (
                    (self.runner.cleanup_orphans_in_background, "scratch cleanup"),
                    (lambda: self.runner.tick(time.time()), "benchmark schedule"),
                    (lambda: collector.collect(self._settings()), "collection"),
                ):
                    try:
                        step()
                    except Exception:
                        self.log.exception("%s failed; trying again next interval", what)
                self._wake.wait(float(self._config["collect_interval"]))
                self._wake.clear()
        finally:
            if server is not None:
                server.stop()
            # Let benchmark threads finish their in-flight I/O before the mgr drops its rados handle.
            if self.runner is not None:
                self.runner.wait(self.runner.shutdown(), timeout=15.0)
        self.log.info("perfwatch serve loop stopped")

    def shutdown(self) -> None:
        self._stop.set()
        self._wake.set()
        if self.runner is not None:
            self.runner.shutdown()

    # ----- benchmarks ---------------------------------------------------------------------------

    def _load_last_results(self, store: BenchStore) -> None:
        for kind in ("osd", "rados", "rbd", "rgw", "net"):
            for record in store.history(kind)[-1:]:
                for raw in record.get("results", []):
                    self._record_result(raw)

    def _record_result(self, raw: Dict[str, Any]) -> None:
        from .benchmarks.results import Measurement

        m = Measurement.from_dict(raw)
        self._last_results[m.key] = (m.value, m.unit)

    def _bench_finished(self, run: Run) -> None:
        for m in run.measurements:
            self._last_results[m.key] = (m.value, m.unit)
        if not run.heavy:
            self._histograms.observe(run.measurements)
        self._update_health()

    def _bench_samples(self) -> List[Sample]:
        runner = self.runner
        if runner is None:
            return []
        store = runner.store
        baselines = {key: store.baseline(key, int(self._config["baseline_min_results"])) for key in self._last_results}
        return (
            result_samples(
                dict(self._last_results),
                baselines,
                list(store.regressions()),
                store.last_runs(),
                runner.outcomes(),
            )
            + self._histograms.samples()
        )

    def _update_health(self) -> None:
        """Every PERFWATCH_ check at once: set_health_checks replaces the module's whole set."""
        checks = validation.health_checks(dict(self._config_errors))
        checks.update(self._regression_check())
        self.set_health_checks(checks)

    def _regression_check(self) -> Dict[str, Dict[str, Any]]:
        runner = self.runner
        regressions = runner.store.regressions() if runner else {}
        if not regressions:
            return {}
        detail = []
        for key, v in sorted(regressions.items()):
            detail.append(
                "{}: {:.6g} {} is {} (threshold {}; run {})".format(
                    key, v["value"], v["unit"], v["reason"], self._config["regression_fraction"], v.get("run_id")
                )
            )
        osds = sorted({k.split("/")[2] for k in regressions if k.split("/")[2] != "-"})
        summary = "{} benchmark result(s) far below baseline{}".format(
            len(regressions), ": " + ", ".join(osds) if osds else ""
        )
        return {
            BENCH_REGRESSION: {
                "severity": "warning",
                "summary": summary,
                "count": len(regressions),
                "detail": detail,
            }
        }

    @CLIWriteCommand("perfwatch bench run")
    def cmd_bench_run(
        self,
        kind: str = "osd",
        osd: Optional[List[int]] = None,
        seconds: Optional[int] = None,
        queue_depth: Optional[int] = None,
        writes_4k: Optional[int] = None,
        mib_4m: Optional[int] = None,
        keys: Optional[int] = None,
        shards: Optional[int] = None,
        image_mib: Optional[int] = None,
        format: OutputFormat = OutputFormat.plain,
    ) -> HandleCommandResult:
        """Start a benchmark run now (kinds: osd, rados, rbd, rgw, net); returns its run id at once"""
        if self.runner is None:
            return HandleCommandResult(*bench_commands.not_ready())
        params = {
            "seconds": seconds,
            "queue_depth": queue_depth,
            "writes_4k": writes_4k,
            "mib_4m": mib_4m,
            "keys": keys,
            "shards": shards,
            "image_mib": image_mib,
        }
        return HandleCommandResult(*bench_commands.run(self.runner, kind, osd, params, format))

    @CLIReadCommand("perfwatch bench status")
    def cmd_bench_status(self, format: OutputFormat = OutputFormat.plain) -> HandleCommandResult:
        """Show running and recent benchmark runs, regressions and scratch data awaiting cleanup"""
        if self.runner is None:
            return HandleCommandResult(*bench_commands.not_ready())
        return HandleCommandResult(*bench_commands.status(self.runner, format))

    @CLIWriteCommand("perfwatch bench cancel")
    def cmd_bench_cancel(
        self, run_id: Optional[str] = None, format: OutputFormat = OutputFormat.plain
    ) -> HandleCommandResult:
        """Cancel one running benchmark, or all of them; their scratch data is removed"""
        if self.runner is None:
            return HandleCommandResult(*bench_commands.not_ready())
        return HandleCommandResult(*bench_commands.cancel(self.runner, run_id, format))

    @CLIReadCommand("perfwatch bench history")
    def cmd_bench_history(
        self,
        kind: Optional[str] = None,
        osd: Optional[int] = None,
        limit: int = 10,
        format: OutputFormat = OutputFormat.plain,
    ) -> HandleCommandResult:
        """Show past benchmark runs and their results, newest last"""
        if self.runner is None:
            return HandleCommandResult(*bench_commands.not_ready())
        return HandleCommandResult(*bench_commands.history(self.runner, kind, osd, limit, format))

    @CLIWriteCommand("perfwatch bench reset-baseline")
    def cmd_bench_reset_baseline(
        self, kind: Optional[str] = None, osd: Optional[int] = None, format: OutputFormat = OutputFormat.plain
    ) -> HandleCommandResult:
        """Forget baselines and regressions (all, or of a kind and/or OSD), e.g. after replacing a device"""
        if self.runner is None:
            return HandleCommandResult(*bench_commands.not_ready())
        result = bench_commands.reset_baseline(self.runner, kind, osd, format)
        self._update_health()
        return HandleCommandResult(*result)

    @CLIReadCommand("perfwatch bench schedule")
    def cmd_bench_schedule(self, format: OutputFormat = OutputFormat.plain) -> HandleCommandResult:
        """Show each benchmark kind, its interval option, window and last run"""
        if self.runner is None:
            return HandleCommandResult(*bench_commands.not_ready())
        return HandleCommandResult(*bench_commands.schedule(self.runner, format))

    @CLIReadCommand("perfwatch status")
    def cmd_status(self, format: OutputFormat = OutputFormat.plain) -> HandleCommandResult:
        """Show the perfwatch version, this mgr's role, the endpoint and the effective options"""
        report = status.build(
            version=__version__,
            mgr_id=self.get_mgr_id(),
            active=self.is_active_mgr(),
            ceph_version=self.version,
            options=options.redacted(self._config),
            started_at=self._started_at,
            loop_passes=self._passes,
            last_pass_at=self._last_pass_at,
            config_errors=dict(self._config_errors),
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


class _Progress:
    """Heavy rounds in `ceph progress`; a progress module that is off or failing never stops a run."""

    def __init__(self, module: MgrModule) -> None:
        self.module = module

    def _call(self, method: str, *args: Any) -> None:
        try:
            self.module.remote("progress", method, *args)
        except Exception as exc:
            self.module.log.debug("progress %s failed: %s", method, exc)

    def update(self, ev_id: str, message: str, fraction: float) -> None:
        self._call("update", ev_id, message, fraction)

    def complete(self, ev_id: str) -> None:
        self._call("complete", ev_id)

    def fail(self, ev_id: str, message: str) -> None:
        self._call("fail", ev_id, message)


class StandbyModule(MgrStandbyModule):
    """On a standby mgr: answer the endpoint so scrapes of every mgr see who is active."""

    MODULE_OPTIONS: List[Option] = MODULE_OPTIONS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Its __del__ (run by the garbage collector after a promotion) must not strip the handlers of the
        # active instance that replaces it: both share the interpreter's root logger (mgr_logging.py).
        mgr_logging.retire_standby_logging(self)
        self._stop = threading.Event()

    def _behaviour(self) -> Tuple[str, int]:
        mode = str(self.get_module_option("standby_behaviour"))
        code = options.coerce("standby_error_status_code", self.get_module_option("standby_error_status_code"))
        return mode, code

    def serve(self) -> None:
        endpoint = _endpoint(self)
        refused = validation.check("server_addr", endpoint["addr"])
        if refused:
            self.log.error("standby does not listen: option server_addr refused: %s", refused)
            return
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
