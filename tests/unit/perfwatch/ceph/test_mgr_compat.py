"""Feature detection of the mgr APIs that differ between releases, against stand-ins shaped like each
release's mgr_module (test_module_commands.py runs the real ones): the command registry (mgr_compat.py)
and the perf-counter calls (mgr_adapter.py)."""

import importlib
import logging
import sys
import types
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

import perfwatch


class Registry:
    """Enough of a command registry class: `Read`/`Write` factories and a COMMANDS dict."""

    COMMANDS: ClassVar[dict[str, Any]] = {}

    def __init__(self, prefix: str, perm: str) -> None:
        self.prefix, self.perm = prefix, perm

    def __call__(self, func: Any) -> Any:
        self.COMMANDS[self.prefix] = self
        return func

    @classmethod
    def Read(cls, prefix: str) -> "Registry":
        return cls(prefix, "r")

    @classmethod
    def Write(cls, prefix: str) -> "Registry":
        return cls(prefix, "w")


def pacific_like() -> types.ModuleType:
    """Pacific .. Squid: one registry for the whole mgr, CLIReadCommand/CLIWriteCommand."""
    mgr = types.ModuleType("mgr_module")
    shared = type("CLICommand", (Registry,), {"COMMANDS": {}})
    mgr.CLICommand = shared  # type: ignore[attr-defined]
    mgr.CLIReadCommand = shared.Read  # type: ignore[attr-defined]
    mgr.CLIWriteCommand = shared.Write  # type: ignore[attr-defined]
    return mgr


def tentacle_like() -> types.ModuleType:
    """Tentacle: no CLIReadCommand; CLICommandBase.make_registry_subtype gives each module its own."""
    mgr = types.ModuleType("mgr_module")

    class CLICommandBase(Registry):
        @classmethod
        def make_registry_subtype(cls, name: str) -> type:
            return type(name, (cls,), {"COMMANDS": {}})

    mgr.CLICommandBase = CLICommandBase  # type: ignore[attr-defined]
    return mgr


@pytest.fixture
def load_compat(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    def load(mgr: types.ModuleType) -> Any:
        monkeypatch.setitem(sys.modules, "mgr_module", mgr)
        monkeypatch.delitem(sys.modules, "perfwatch.ceph.mgr_compat", raising=False)
        monkeypatch.delattr(perfwatch, "mgr_compat", raising=False)
        return importlib.import_module("perfwatch.ceph.mgr_compat")

    yield load
    sys.modules.pop("perfwatch.ceph.mgr_compat", None)


def test_pacific_and_reef_use_the_shared_registry_and_its_decorators(load_compat: Any) -> None:
    mgr = pacific_like()
    compat = load_compat(mgr)
    assert compat.CLICommand is mgr.CLICommand
    compat.read_command("perfwatch status")(lambda self: None)
    compat.write_command("perfwatch bench run")(lambda self: None)
    assert {p: c.perm for p, c in mgr.CLICommand.COMMANDS.items()} == {
        "perfwatch status": "r",
        "perfwatch bench run": "w",
    }


def test_tentacle_gets_a_registry_of_its_own(load_compat: Any) -> None:
    mgr = tentacle_like()
    compat = load_compat(mgr)
    assert issubclass(compat.CLICommand, mgr.CLICommandBase) and compat.CLICommand is not mgr.CLICommandBase
    compat.read_command("perfwatch status")(lambda self: None)
    compat.write_command("perfwatch bench cancel")(lambda self: None)
    assert {p: c.perm for p, c in compat.CLICommand.COMMANDS.items()} == {
        "perfwatch status": "r",
        "perfwatch bench cancel": "w",
    }
    assert mgr.CLICommandBase.COMMANDS == {}  # nothing in a registry other modules could share


def test_a_mgr_with_neither_api_fails_the_import_loudly(load_compat: Any) -> None:
    with pytest.raises(ImportError, match="CLIReadCommand"):
        load_compat(types.ModuleType("mgr_module"))


# ----- mgr_adapter.rgw_counters: which perf-counter calls the mgr has ---------------------------------------


@pytest.fixture
def adapter_for(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    fake = types.ModuleType("mgr_module")

    fake.MgrModule = object  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "mgr_module", fake)
    monkeypatch.delitem(sys.modules, "perfwatch.ceph.mgr_adapter", raising=False)
    mgr_adapter = importlib.import_module("perfwatch.ceph.mgr_adapter")

    def make(module: Any) -> Any:
        module.log = logging.getLogger("test_mgr_compat")
        return mgr_adapter.MgrAdapter(module, lambda: 5.0)

    yield make
    sys.modules.pop("perfwatch.ceph.mgr_adapter", None)


RGW_UNLABELED = {"rgw.4160": {"rgw.req": {"value": 3, "type": 10}}, "osd.0": {"osd.op": {"value": 1}}}
RGW_LABELED = {
    "rgw.4160": {
        "rgw_op": [
            {"labels": {}, "counters": {"list_obj_lat": {"type": 5, "value": 2_000_000, "count": 4}}},
            {"labels": {"bucket": "b"}, "counters": {"list_obj_lat": {"type": 5, "value": 1, "count": 1}}},
        ],
    }
}


def test_pacific_reads_get_all_perf_counters(adapter_for: Any) -> None:
    class Pacific:
        def get_all_perf_counters(self, prio_limit: int = 5, services: tuple = ()) -> dict:
            assert services == ("rgw",)
            return RGW_UNLABELED

    assert adapter_for(Pacific()).rgw_counters() == {"rgw.4160": RGW_UNLABELED["rgw.4160"]}


def test_reef_reads_get_unlabeled_perf_counters_and_has_no_labeled_call(adapter_for: Any) -> None:
    class Reef:
        def get_unlabeled_perf_counters(self, prio_limit: int = 5, services: tuple = ()) -> dict:
            return RGW_UNLABELED

    assert adapter_for(Reef()).rgw_counters() == {"rgw.4160": RGW_UNLABELED["rgw.4160"]}


def test_tentacle_adds_the_daemon_wide_labeled_counters(adapter_for: Any) -> None:
    class Tentacle:
        def get_unlabeled_perf_counters(self, prio_limit: int = 5, services: tuple = ()) -> dict:
            return RGW_UNLABELED

        def get_perf_counters(self, prio_limit: int = 5, services: tuple = ()) -> dict:
            assert services == ("rgw",)
            return RGW_LABELED

    got = adapter_for(Tentacle()).rgw_counters()
    assert got["rgw.4160"]["rgw.req"] == {"value": 3, "type": 10}
    assert got["rgw.4160"]["rgw_op.list_obj_lat"] == {"type": 5, "value": 2_000_000, "count": 4}


def test_a_failing_labeled_call_costs_only_its_own_counters(adapter_for: Any, caplog: pytest.LogCaptureFixture) -> None:
    class Broken:
        def get_unlabeled_perf_counters(self, prio_limit: int = 5, services: tuple = ()) -> dict:
            return RGW_UNLABELED

        def get_perf_counters(self, prio_limit: int = 5, services: tuple = ()) -> dict:
            raise KeyError("rgw.4160")

    adapter = adapter_for(Broken())
    with caplog.at_level(logging.DEBUG, logger="test_mgr_compat"):
        assert adapter.rgw_counters() == {"rgw.4160": RGW_UNLABELED["rgw.4160"]}
        adapter.rgw_counters()
    assert [r.levelname for r in caplog.records] == ["WARNING", "DEBUG"]  # warned once, not every cycle


# ----- mgr_adapter.pool_rule_osds: the OSDs a pool's CRUSH rule reaches, as the PG autoscaler finds them ----


def test_a_pools_rule_reaches_the_in_osds_under_its_take(adapter_for: Any) -> None:
    class Crush:
        def get_rule_by_id(self, rule_id: int) -> dict:
            assert rule_id == 1
            return {"rule_name": "ssd", "steps": [{"op": "take", "item": -6, "item_name": "default~ssd"},
                                                  {"op": "chooseleaf_firstn"}, {"op": "emit"}]}  # fmt: skip

        def get_take_weight_osd_map(self, root: int) -> dict:
            return {0: 0.25, 1: 0.25, 2: 0.5, 3: 0.0} if root == -6 else {}

    class Module:
        def get_osdmap(self) -> Any:
            return types.SimpleNamespace(get_crush=Crush)

        def get(self, what: str) -> dict:
            return {
                "osd_map": {"pools": [{"pool_name": "perfwatch", "pool": 7, "crush_rule": 1}],
                            "osds": [{"osd": o, "in": int(o != 1)} for o in range(6)]},
                "osd_stats": {"osd_stats": [{"osd": 0, "num_pgs": 120}, {"osd": 2, "num_pgs": 80}]},
            }[what]  # fmt: skip

    adapter = adapter_for(Module())
    assert adapter.pool_rule_osds("perfwatch") == {0, 2}, "osd.1 is out, osd.3 has no weight, 4 and 5 elsewhere"
    assert adapter.osd_pg_counts() == {0: 120, 2: 80}


def test_acting_primaries_come_from_one_current_osd_map(adapter_for: Any) -> None:
    maps: list[Any] = []

    class Module:
        def get_osdmap(self) -> Any:
            def to_osds(pool_id: int, ps: int) -> dict:
                return {"up_primary": ps % 3, "acting_primary": -1 if ps == 2 else ps % 3, "up": [], "acting": []}

            maps.append(types.SimpleNamespace(pg_to_up_acting_osds=to_osds))
            return maps[-1]

    assert adapter_for(Module()).acting_primaries(7, range(4)) == {0: 0, 1: 1, 3: 0}, "PG 2 maps nowhere"
    assert len(maps) == 1
