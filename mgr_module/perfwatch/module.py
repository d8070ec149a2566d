"""The active mgr's entry point: the options declared to the mgr, the command groups Module inherits
(commands/), and the serve loop that puts the collector, the benchmark runner and result board, the load
attribution and the metrics endpoint together. What they do is in their rooms; this file wires them."""

import functools
import threading
import time
from typing import Any, ClassVar, Dict, List, Optional

from mgr_module import MgrModule, Option

from .benchmarks.engine import rados_io
from .benchmarks.judging import health
from .benchmarks.records.common import entry_max_for
from .benchmarks.records.store import BenchStore
from .benchmarks.result_board import ResultBoard
from .benchmarks.run import Run
from .benchmarks.runner import Runner
from .ceph import mgr_compat, mgr_logging
from .ceph.mgr_adapter import MgrAdapter, MgrProgress
from .collection.collector import Collector, Settings
from .commands import secret_store
from .commands.bench import BenchCommands
from .commands.secrets import SecretsCommands
from .commands.status import StatusCommands
from .commands.top import TopCommands
from .common.version import __version__
from .endpoint import tls_auth
from .endpoint.pages import active_app
from .endpoint.serving import Endpoint
from .load.attribution import LoadAttribution
from .load.owner import QueryOwner
from .options import config, declared, validation

MODULE_OPTIONS = [Option(**spec) for spec in declared.OPTIONS]


# Every command group is a base of Module: a new group's class goes here (commands/__init__.py).
class Module(BenchCommands, StatusCommands, TopCommands, SecretsCommands, MgrModule):
    MODULE_OPTIONS: List[Option] = MODULE_OPTIONS
    NOTIFY_TYPES: ClassVar[List[Any]] = []  # we poll on our own interval; no mgr notifications wanted
    CLICommand = mgr_compat.CLICommand  # the registry the mgr lists and dispatches our commands from

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # No cluster accessors here: the mgr is not ready for them until serve().
        self._stop = threading.Event()
        self._wake = threading.Event()
        self.serve_started_at = time.time()
        self.serve_passes = 0
        self.serve_last_pass_at: Optional[float] = None
        self.config_in_force = config.defaults()  # refused values replaced
        self.config_errors: Dict[str, str] = {}  # option -> why its value is refused (validation.py)
        self.metrics_endpoint: Optional[Endpoint] = None  # built in serve(), with the collector it serves
        self._security = tls_auth.build(tls_auth.Inputs(False, None, None, None, None))
        self.collector: Optional[Collector] = None
        self.runner: Optional[Runner] = None
        self.board: Optional[ResultBoard] = None
        self.load: Optional[LoadAttribution] = None

    def config_notify(self) -> None:
        """Re-read our options; called by the mgr whenever `ceph config set mgr mgr/perfwatch/...` changes.
        A value validation.py refuses is not used (see validation.effective): it is logged once per
        change and reported in `ceph perfwatch status` and as PERFWATCH_CONFIG_INVALID."""
        new, refused = config.read(self.get_module_option, self.get_localized_module_option)
        stored = secret_store.stored_s3_credentials(self.get_store)  # set-s3-credentials wins
        if stored is not None:
            new = new._replace(rgw_s3_access_key=stored[0], rgw_s3_secret_key=stored[1])
        for name, message in sorted(validation.newly_refused(self.config_errors, refused).items()):
            self.log.error("option %s refused, not used: %s", name, message)
        for name in sorted(set(self.config_errors) - set(refused)):
            self.log.info("option %s is valid again", name)
        changed = refused != self.config_errors
        self.config_in_force = new
        self.config_errors = refused
        self.log.debug("options now %s", new.redacted())
        if changed:
            self.update_health()
        self._wake.set()  # a new interval or endpoint takes effect now, not after the old interval

    def is_active_mgr(self) -> bool:
        mgr_map = self.get("mgr_map")
        return bool(mgr_map) and mgr_map.get("active_name") == self.get_mgr_id()

    def secrets_changed(self) -> None:
        self.config_notify()  # S3 keys into the Config; wakes the loop, which takes the endpoint's

    def _ensure_endpoint(self, endpoint: Endpoint) -> None:
        wanted = config.listen_endpoint(self.get_localized_module_option)
        given = tls_auth.inputs(self.config_in_force.ssl, self.get_localized_store, self.get_store)
        if given.fingerprint() != self._security.fingerprint:  # built again only when the store changed
            self._security = tls_auth.build(given)
        if endpoint.ensure(wanted["addr"], wanted["port"], self._security):
            self.update_health()

    def serve(self) -> None:
        self.log.info("perfwatch %s starting on mgr.%s", __version__, self.get_mgr_id())
        self.config_notify()
        self._wake.clear()
        # Two adapters: each keeps its own "one outstanding request per OSD" registry, so a benchmark's
        # long `bench` tell never makes the collector's `perf dump` of that OSD count as busy, or back.
        adapter = MgrAdapter(self, lambda: self.config_in_force.request_timeout)
        bench_adapter = MgrAdapter(self, lambda: self.config_in_force.request_timeout)
        cfg = self.config_in_force
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
            functools.partial(rados_io.open_io, bench_adapter, lambda: self.config_in_force.request_timeout),
            store,
            lambda: self.config_in_force.as_dict(),  # the kinds read the options they need by name
            self.log,
            MgrProgress(self),
            self._bench_finished,
        )
        self.update_health()
        # Whose load: the module's OSD perf queries, registered at its first tick.
        self.load = load = LoadAttribution(QueryOwner(self, self.log), self._pool_names, self.log)
        collector = Collector(
            adapter,
            log=self.log,
            extra_samples=lambda: [
                *board.exposition(
                    runner.outcomes(),
                    self.config_in_force.baseline_min_results,
                    self.config_in_force.bench_export_baselines,
                ),
                *runner.coverage_samples(time.time()),
                *load.samples(),
            ],
        )
        self.collector = collector
        app = active_app(collector.cache, self.get_mgr_id(), http_refusals=lambda: endpoint.refusals())
        self.metrics_endpoint = endpoint = Endpoint(app, self.get_mgr_id(), self.get_mgr_ip, self.set_uri, self.log)
        try:
            while not self._stop.is_set():
                restored = mgr_logging.ensure_logging(self)
                if restored:
                    self.log.warning("log handlers %s were off the root logger; re-attached", ", ".join(restored))
                try:
                    self._ensure_endpoint(endpoint)
                except Exception:  # the loop goes on; the endpoint is looked at again next pass
                    self.log.exception("metrics endpoint update failed; trying again next interval")
                self.serve_passes += 1
                self.serve_last_pass_at = time.time()
                for step, what in (
                    (runner.cleanup_orphans_in_background, "scratch cleanup"),
                    (lambda: runner.tick(time.time()), "benchmark schedule"),
                    (lambda: load.tick(self.config_in_force.as_dict()), "load attribution"),
                    (lambda: collector.collect(self._collector_settings()), "collection"),
                ):
                    try:
                        step()
                    except Exception:
                        self.log.exception("%s failed; trying again next interval", what)
                self._wake.wait(self.config_in_force.collect_interval)
                self._wake.clear()
        finally:
            endpoint.stop()
            load.close()  # no perf query of ours stays registered on this mgr
            # Let benchmark threads finish their in-flight I/O before the mgr drops its rados handle.
            runner.wait(runner.shutdown(), timeout=15.0)
        self.log.info("perfwatch serve loop stopped")

    def _collector_settings(self) -> Settings:
        return Settings(
            request_timeout=self.config_in_force.request_timeout,
            max_in_flight=self.config_in_force.max_requests_in_flight,
            read_osds=self.config_in_force.daemon_counters_source == "module",
            cpu_budget_percent=self.config_in_force.collect_cpu_budget_percent,
        )

    def _pool_names(self) -> Dict[int, str]:
        pools = (self.get("osd_map") or {}).get("pools", [])
        return {int(p["pool"]): str(p["pool_name"]) for p in pools if "pool" in p and "pool_name" in p}

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
        self.update_health()

    def update_health(self) -> None:
        """Every PERFWATCH_ check at once: set_health_checks replaces the module's whole set."""
        checks = validation.health_checks(dict(self.config_errors))
        regressions = self.board.regressions() if self.board is not None else {}
        checks.update(health.regression_checks(regressions, self.config_in_force.regression_fraction))
        checks.update(self.metrics_endpoint.health_checks() if self.metrics_endpoint is not None else {})
        self.set_health_checks(checks)
