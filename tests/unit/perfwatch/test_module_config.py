"""module.py's wiring of validation: config_notify with refused values, `perfwatch status` and the health
checks. module.py needs ceph-mgr's `mgr_module`; a minimal stand-in is enough to construct the Module."""

import json
import logging
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

import perfwatch as perfwatch_package
from perfwatch.benchmarks.result_board import ResultBoard
from perfwatch.options import declared as options


def _fake_mgr_module() -> types.ModuleType:
    fake = types.ModuleType("mgr_module")

    class Option(dict):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)

    class MgrModule:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            pass

    class HandleCommandResult(tuple):
        def __new__(cls, retval: int = 0, stdout: str = "", stderr: str = "") -> "HandleCommandResult":
            return super().__new__(cls, (retval, stdout, stderr))

    def command(prefix: str) -> Any:
        return lambda f: f

    class CLICommand:  # the mgr-wide registry of Pacific; the decorators above leave it empty
        COMMANDS: ClassVar[dict] = {}

    fake.Option = Option  # type: ignore[attr-defined]
    fake.MgrModule = MgrModule  # type: ignore[attr-defined]
    fake.MgrStandbyModule = type("MgrStandbyModule", (MgrModule,), {})  # type: ignore[attr-defined]
    fake.CommandResult = object  # type: ignore[attr-defined]
    fake.HandleCommandResult = HandleCommandResult  # type: ignore[attr-defined]
    fake.CLIReadCommand = fake.CLIWriteCommand = command  # type: ignore[attr-defined]
    fake.CLICommand = CLICommand  # type: ignore[attr-defined]
    return fake


# the modules that import mgr_module: imported again with the stand-in
MGR_IMPORTERS = (
    "perfwatch.ceph.mgr_compat",
    "perfwatch.module",
    "perfwatch.ceph.mgr_adapter",
    "perfwatch.commands.secrets",
    "perfwatch.commands.bench",
)


@pytest.fixture
def module_class(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setitem(sys.modules, "mgr_module", _fake_mgr_module())
    for name in MGR_IMPORTERS:
        monkeypatch.delitem(sys.modules, name, raising=False)
        monkeypatch.delattr(perfwatch_package, name.split(".", 1)[1], raising=False)  # `from . import x` reads it
    import perfwatch.module

    yield perfwatch.module.Module
    for name in MGR_IMPORTERS:
        sys.modules.pop(name, None)


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.levelname + " " + record.getMessage())


def make(module_class: Any, **values: Any) -> Any:
    mod = module_class()
    mod.values = dict(values)
    mod.health = []
    mod.get_module_option = lambda name, default=None: mod.values.get(name)
    mod.get_localized_module_option = lambda name, default=None: mod.values.get(name, default)
    mod.set_health_checks = mod.health.append
    mod.kv = {}  # the mgr store (mgr/perfwatch/...); tests may put get_store/set_store of their own
    mod.get_store = lambda key, default=None: mod.kv.get(key, default)
    mod.set_store = lambda key, value: mod.kv.__setitem__(key, value) if value is not None else mod.kv.pop(key, None)
    mod.get_localized_store = lambda key, default=None: mod.get_store("x/" + key) or mod.get_store(key) or default
    mod.get_mgr_id = lambda: "x"
    mod.is_active_mgr = lambda: True
    mod.version = "ceph version 16.2.15"
    mod.log = logging.getLogger("test_module_config")
    mod.log.setLevel(logging.DEBUG)
    mod.records = Records()
    mod.log.handlers = [mod.records]
    return mod


def status(mod: Any) -> dict:
    from perfwatch.commands.output import OutputFormat

    return json.loads(mod.cmd_status(format=OutputFormat.json)[1])


def test_valid_options_are_used_and_raise_nothing(module_class: Any) -> None:
    mod = make(module_class, rgw_s3_endpoint="http://10.0.0.5:7480", heavy_bench_window="22:00-06:00")
    mod.config_notify()
    assert mod.config_in_force.rgw_s3_endpoint == "http://10.0.0.5:7480"
    assert mod.config_in_force.heavy_bench_window == "22:00-06:00"
    assert status(mod)["config_errors"] == {}
    assert mod.health == []  # nothing changed: no call needed (serve() sets the checks at start)


def test_status_says_the_package_folder_the_mgr_loaded_perfwatch_from(module_class: Any) -> None:
    """`loaded_from` is the perfwatch package's folder (what the deploy tests compare with
    /usr/share/ceph/mgr/perfwatch), not the folder of the file that builds the report."""
    import perfwatch

    mod = make(module_class)
    mod.config_notify()
    assert status(mod)["loaded_from"] == str(Path(perfwatch.__file__).resolve().parent)


def test_a_refused_endpoint_keeps_s3_off_and_is_reported(module_class: Any) -> None:
    mod = make(module_class, rgw_s3_endpoint="file:///etc/passwd#", osd_bench_interval=3600)
    mod.config_notify()
    assert mod.config_in_force.rgw_s3_endpoint == ""  # the rgw probe sees no endpoint: omap only
    report = status(mod)
    assert "not an http:// or https:// URL" in report["config_errors"]["rgw_s3_endpoint"]
    assert report["options"]["rgw_s3_endpoint"] == ""
    check = mod.health[-1]["PERFWATCH_CONFIG_INVALID"]
    assert check["severity"] == "warning" and "rgw_s3_endpoint" in check["summary"]
    assert check["detail"][0].startswith("rgw_s3_endpoint: 'file:///etc/passwd#'")
    plain = mod.cmd_status()[1]
    assert "config_errors" in plain and "rgw_s3_endpoint" in plain


def test_a_refused_window_stops_scheduled_heavy_rounds(module_class: Any) -> None:
    mod = make(module_class, heavy_bench_window="25:00-99:99", osd_bench_interval=3600, rbd_bench_interval=7200)
    mod.config_notify()
    assert mod.config_in_force.osd_bench_interval == 0 and mod.config_in_force.rbd_bench_interval == 0
    assert mod.config_in_force.heavy_bench_window == ""
    assert "heavy_bench_window" in status(mod)["config_errors"]
    assert "heavy_bench_window" in mod.health[-1]["PERFWATCH_CONFIG_INVALID"]["summary"]


def test_an_error_is_logged_once_per_change_and_cleared_when_fixed(module_class: Any) -> None:
    mod = make(module_class, heavy_bench_window="garbage")
    for _ in range(3):
        mod.config_notify()
    errors = [line for line in mod.records.lines if line.startswith("ERROR")]
    assert len(errors) == 1 and "heavy_bench_window" in errors[0]
    assert len(mod.health) == 1
    mod.values["heavy_bench_window"] = "bad again"
    mod.config_notify()
    assert len([line for line in mod.records.lines if line.startswith("ERROR")]) == 2
    mod.values["heavy_bench_window"] = "01:00-05:00"
    mod.config_notify()
    assert mod.health[-1] == {} and status(mod)["config_errors"] == {}
    assert mod.config_in_force.heavy_bench_window == "01:00-05:00"


def test_config_and_regression_checks_coexist(module_class: Any) -> None:
    mod = make(module_class, rgw_s3_region="US EAST")
    regression = {"value": 10.0, "unit": "iops", "reason": "below baseline", "run_id": "osd-1"}
    regressions = {"osd/write_4k_iops/osd.3": regression}
    records = types.SimpleNamespace(load=lambda name, clean, default: default())
    store = types.SimpleNamespace(regressions=lambda: dict(regressions), history=lambda kind: [], records=records)
    mod.board = ResultBoard(store)  # type: ignore[arg-type]
    mod.config_notify()
    checks = mod.health[-1]
    assert set(checks) == {"PERFWATCH_CONFIG_INVALID", "PERFWATCH_BENCH_REGRESSION"}
    assert "osd.3" in checks["PERFWATCH_BENCH_REGRESSION"]["summary"]
    mod.values["rgw_s3_region"] = "us-east-1"
    mod.config_notify()
    assert set(mod.health[-1]) == {"PERFWATCH_BENCH_REGRESSION"}
    regressions.clear()
    mod.update_health()
    assert mod.health[-1] == {}


def test_a_refused_server_addr_is_not_listened_on(module_class: Any) -> None:
    from perfwatch.endpoint.serving import Endpoint

    def never(*args: Any) -> Any:
        raise AssertionError("a refused server_addr reached HttpServer")

    mod = make(module_class, server_addr="localhost")
    mod.config_notify()
    assert "server_addr" in status(mod)["config_errors"]
    mod.metrics_endpoint = Endpoint(lambda path, gz: None, "x", lambda: "", lambda url: None, mod.log, never)
    mod._ensure_endpoint(mod.metrics_endpoint)
    assert status(mod)["endpoint"]["error"].startswith("server_addr refused")
    assert status(mod)["endpoint"]["url"] is None


def test_secrets_stay_out_of_status_and_health(module_class: Any) -> None:
    secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
    mod = make(
        module_class,
        rgw_s3_endpoint="http://admin:" + secret + "@rgw:7480/",
        rgw_s3_access_key="AK",
        rgw_s3_secret_key=secret,
    )
    mod.config_notify()
    assert secret not in mod.cmd_status()[1] and secret not in json.dumps(mod.health)
    assert secret not in "\n".join(mod.records.lines)


def test_defaults_are_all_valid(module_class: Any) -> None:
    mod = make(module_class)
    mod.config_notify()
    assert mod.config_in_force.as_dict() == options.defaults() and mod.config_errors == {}
