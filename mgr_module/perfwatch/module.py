"""The ceph-mgr entry points: the options and commands declared to the mgr, and the serve loops that put
the collector, the benchmark runner and result board, and the HTTP endpoint together. What they do is in
those plain modules; this one only wires them and answers the mgr."""

import threading
import time
from typing import Any, ClassVar, Dict, List, Optional

from mgr_module import HandleCommandResult, MgrModule, Option

from .benchmarks import replies as commands
from .benchmarks.judging import health
from .benchmarks.records.common import entry_max_for
from .benchmarks.records.store import BenchStore
from .benchmarks.result_board import ResultBoard
from .benchmarks.run import Run
from .benchmarks.runner import Runner
from .ceph import mgr_compat, mgr_logging
from .ceph.mgr_adapter import MgrAdapter, MgrProgress
from .collection.collector import Collector, Settings
from .commands import secret_files as secrets_commands
from .commands.bench import with_runner
from .commands.output import OutputFormat
from .commands.secrets import SecretsCommands
from .commands.status import StatusCommands
from .commands.top import LoadCommands
from .common.version import __version__
from .endpoint import security as endpoint_security
from .endpoint.listener import Endpoint
from .endpoint.pages import active_app
from .options import config, validation
from .options import declared as options

MODULE_OPTIONS = [Option(**spec) for spec in options.OPTIONS]


class Module(SecretsCommands, LoadCommands, StatusCommands, MgrModule):
    MODULE_OPTIONS: List[Option] = MODULE_OPTIONS
    NOTIFY_TYPES: ClassVar[List[Any]] = []  # we poll on our own interval; no mgr notifications wanted
    CLICommand = mgr_compat.CLICommand  # the registry the mgr lists and dispatches our commands from

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # No cluster accessors here: the mgr is not ready for them until serve().
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._started_at = time.time()
        self._passes = 0
        self._last_pass_at: Optional[float] = None
        self._config = config.defaults()  # the options in force: refused values replaced
        self._config_errors: Dict[str, str] = {}  # option -> why its value is refused (validation.py)
        self._endpoint: Optional[Endpoint] = None  # built in serve(), with the collector it serves
        self._security = endpoint_security.build(endpoint_security.Inputs(False, None, None, None, None))
        self.collector: Optional[Collector] = None
        self.runner: Optional[Runner] = None
        self.board: Optional[ResultBoard] = None

    def config_notify(self) -> None:
        """Re-read our options; called by the mgr whenever `ceph config set mgr mgr/perfwatch/...` changes.
        A value validation.py refuses is not used (see validation.effective): it is logged once per
        change and reported in `ceph perfwatch status` and as PERFWATCH_CONFIG_INVALID."""
        new, refused = config.read(self.get_module_option, self.get_localized_module_option)
        stored = secrets_commands.stored_s3_credentials(self.get_store)  # set-s3-credentials wins
        if stored is not None:
            new = new._replace(rgw_s3_access_key=stored[0], rgw_s3_secret_key=stored[1])
        for name, message in sorted(validation.newly_refused(self._config_errors, refused).items()):
            self.log.error("option %s refused, not used: %s", name, message)
        for name in sorted(set(self._config_errors) - set(refused)):
            self.log.info("option %s is valid again", name)
        changed = refused != self._config_errors
        self._config = new
        self._config_errors = refused
        self.log.debug("options now %s", new.redacted())
        if changed:
            self._update_health()
        self._wake.set()  # a new interval or endpoint takes effect now, not after the old interval

    def is_active_mgr(self) -> bool:
        mgr_map = self.get("mgr_map")
        return bool(mgr_map) and mgr_map.get("active_name") == self.get_mgr_id()

    def secrets_changed(self) -> None:
        self.config_notify()  # S3 keys into the Config; wakes the loop, which takes the endpoint's

    def _ensure_endpoint(self, endpoint: Endpoint) -> None:
        wanted = config.listen_endpoint(self.get_localized_module_option)
        given = endpoint_security.inputs(self._config.ssl, self.get_localized_store, self.get_store)
        if given.fingerprint() != self._security.fingerprint:  # built again only when the store changed
            self._security = endpoint_security.build(given)
        if endpoint.ensure(wanted["addr"], wanted["port"], self._security):
            self._update_health()

    def serve(self) -> None:
        self.log.info("perfwatch %s starting on mgr.%s", __version__, self.get_mgr_id())
        self.config_notify()
        self._wake.clear()
        # Two adapters: each keeps its own "one outstanding request per OSD" registry, so a benchmark's
        # long `bench` tell never makes the collector's `perf dump` of that OSD count as busy, or back.
        adapter = MgrAdapter(self, lambda: self._config.request_timeout)
        bench_adapter = MgrAdapter(self, lambda: self._config.request_timeout)
        cfg = self._config
        store = BenchStore(
            self.get_store,
            self.set_store,
            cfg.history_limit,
            cfg.baseline_window,
            self.log,
            entry_max=entry_max_for(bench_adapter.store_entry_limit()),
            keys=bench_adapter.store_keys,
        )
        self.board = board = ResultBoard(
            store, device_classes=lambda: {o.id: o.device_class for o in bench_adapter.osd_infos()}
        )
        self.runner = runner = Runner(
            bench_adapter,
            bench_adapter.open_io,
            store,
            lambda: self._config.as_dict(),  # the kinds read the options they need by name
            self.log,
            MgrProgress(self),
            self._bench_finished,
        )
        self._update_health()
        load = self.start_load()  # whose load: the module's OSD perf queries, registered at its first tick
        collector = Collector(
            adapter,
            log=self.log,
            extra_samples=lambda: [
                *board.exposition(
                    runner.outcomes(), self._config.baseline_min_results, self._config.bench_export_baselines
                ),
                *runner.coverage_samples(time.time()),
                *load.samples(),
            ],
        )
        self.collector = collector
        app = active_app(collector.cache, self.get_mgr_id(), http_refusals=lambda: endpoint.refusals())
        self._endpoint = endpoint = Endpoint(app, self.get_mgr_id(), self.get_mgr_ip, self.set_uri, self.log)
        try:
            while not self._stop.is_set():
                restored = mgr_logging.ensure_logging(self)
                if restored:
                    self.log.warning("log handlers %s were off the root logger; re-attached", ", ".join(restored))
                try:
                    self._ensure_endpoint(endpoint)
                except Exception:  # the loop goes on; the endpoint is looked at again next pass
                    self.log.exception("metrics endpoint update failed; trying again next interval")
                self._passes += 1
                self._last_pass_at = time.time()
                for step, what in (
                    (runner.cleanup_orphans_in_background, "scratch cleanup"),
                    (lambda: runner.tick(time.time()), "benchmark schedule"),
                    (lambda: load.tick(self._config.as_dict()), "load attribution"),
                    (lambda: collector.collect(self._collector_settings()), "collection"),
                ):
                    try:
                        step()
                    except Exception:
                        self.log.exception("%s failed; trying again next interval", what)
                self._wake.wait(self._config.collect_interval)
                self._wake.clear()
        finally:
            endpoint.stop()
            load.close()  # no perf query of ours stays registered on this mgr
            # Let benchmark threads finish their in-flight I/O before the mgr drops its rados handle.
            runner.wait(runner.shutdown(), timeout=15.0)
        self.log.info("perfwatch serve loop stopped")

    def _collector_settings(self) -> Settings:
        return Settings(
            request_timeout=self._config.request_timeout,
            max_in_flight=self._config.max_requests_in_flight,
            read_osds=self._config.daemon_counters_source == "module",
            cpu_budget_percent=self._config.collect_cpu_budget_percent,
        )

    def shutdown(self) -> None:
        self._stop.set()
        self._wake.set()
        if self.runner is not None:
            self.runner.shutdown()
        if self.load is not None:
            self.load.close()

    def _bench_finished(self, run: Run) -> None:
        if self.board is not None:
            self.board.on_finished(run)
        self._update_health()

    def _update_health(self) -> None:
        """Every PERFWATCH_ check at once: set_health_checks replaces the module's whole set."""
        checks = validation.health_checks(dict(self._config_errors))
        regressions = self.board.regressions() if self.board is not None else {}
        checks.update(health.regression_checks(regressions, self._config.regression_fraction))
        checks.update(self._endpoint.health_checks() if self._endpoint is not None else {})
        self.set_health_checks(checks)

    # ----- commands -----------------------------------------------------------------------------

    @mgr_compat.write_command("perfwatch bench run")
    @with_runner
    def cmd_bench_run(
        self,
        runner: Runner,
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
        params = dict(seconds=seconds, queue_depth=queue_depth, writes_4k=writes_4k, mib_4m=mib_4m, keys=keys)
        params.update(shards=shards, image_mib=image_mib)
        return HandleCommandResult(*commands.run(runner, kind, osd, params, format))

    @mgr_compat.read_command("perfwatch bench status")
    @with_runner
    def cmd_bench_status(self, runner: Runner, format: OutputFormat = OutputFormat.plain) -> HandleCommandResult:
        """Show running and recent benchmark runs, regressions and scratch data awaiting cleanup"""
        return HandleCommandResult(*commands.status(runner, format))

    @mgr_compat.write_command("perfwatch bench cancel")
    @with_runner
    def cmd_bench_cancel(
        self, runner: Runner, run_id: Optional[str] = None, format: OutputFormat = OutputFormat.plain
    ) -> HandleCommandResult:
        """Cancel one running benchmark, or all of them; their scratch data is removed"""
        return HandleCommandResult(*commands.cancel(runner, run_id, format))

    @mgr_compat.read_command("perfwatch bench history")
    @with_runner
    def cmd_bench_history(
        self,
        runner: Runner,
        kind: Optional[str] = None,
        osd: Optional[int] = None,
        limit: int = 10,
        format: OutputFormat = OutputFormat.plain,
    ) -> HandleCommandResult:
        """Show past benchmark runs and their results, newest last"""
        return HandleCommandResult(*commands.history(runner, kind, osd, limit, format))

    @mgr_compat.write_command("perfwatch bench reset-baseline")
    @with_runner
    def cmd_bench_reset_baseline(
        self,
        runner: Runner,
        kind: Optional[str] = None,
        osd: Optional[int] = None,
        format: OutputFormat = OutputFormat.plain,
    ) -> HandleCommandResult:
        """Forget baselines and regressions (all, or of a kind and/or OSD), e.g. after replacing a device"""
        result = commands.reset_baseline(runner, kind, osd, format)
        self._update_health()
        return HandleCommandResult(*result)

    @mgr_compat.read_command("perfwatch bench schedule")
    @with_runner
    def cmd_bench_schedule(self, runner: Runner, format: OutputFormat = OutputFormat.plain) -> HandleCommandResult:
        """Show each benchmark kind, its interval option, window and last run"""
        return HandleCommandResult(*commands.schedule(runner, format))
