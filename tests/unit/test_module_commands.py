"""module.py's commands as ceph-mgr sees them: the arguments Pacific's CLICommand reads from each (the
bench commands are wrapped by a guard that hands them the runner), and what they answer through the
mgr's own dispatch before and after serve() built the runner. Uses the real Pacific mgr_module.py
(/usr/share/ceph/mgr) with a stand-in for ceph_module, the C++ side; skipped where Ceph is not installed."""

import errno
import importlib
import importlib.machinery
import json
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import perfwatch  # noqa: F401  (imported before the stand-in for ceph_module: it then imports no mgr class)

MGR_DIR = Path("/usr/share/ceph/mgr")
FORMAT = "name=format,req=false,strings=plain|json|json-pretty,type=CephChoices"
COMMANDS = {
    "perfwatch bench run": "name=kind,req=false,type=CephString name=osd,req=false,n=N,type=CephInt "
    + " ".join(
        f"name={n},req=false,type=CephInt"
        for n in ("seconds", "queue_depth", "writes_4k", "mib_4m", "keys", "shards", "image_mib")
    )
    + " "
    + FORMAT,
    "perfwatch bench status": FORMAT,
    "perfwatch bench cancel": "name=run_id,req=false,type=CephString " + FORMAT,
    "perfwatch bench history": "name=kind,req=false,type=CephString name=osd,req=false,type=CephInt "
    "name=limit,req=false,type=CephInt " + FORMAT,
    "perfwatch bench reset-baseline": "name=kind,req=false,type=CephString name=osd,req=false,type=CephInt " + FORMAT,
    "perfwatch bench schedule": FORMAT,
    "perfwatch status": FORMAT,
    "perfwatch metrics": FORMAT,
}


@pytest.fixture
def mgr_module(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    if not (MGR_DIR / "mgr_module.py").exists():
        pytest.skip("Ceph's mgr_module.py is not installed")
    ceph_module = types.ModuleType("ceph_module")
    ceph_module.__spec__ = importlib.machinery.ModuleSpec("ceph_module", None)
    for name in ("BasePyOSDMap", "BasePyOSDMapIncremental", "BasePyCRUSH", "BaseMgrModule", "BaseMgrStandbyModule"):
        setattr(ceph_module, name, type(name, (), {}))
    monkeypatch.setitem(sys.modules, "ceph_module", ceph_module)
    monkeypatch.syspath_prepend(str(MGR_DIR))
    ours = ("mgr_module", "perfwatch.module", "perfwatch.mgr_adapter")
    for name in ours:
        monkeypatch.delitem(sys.modules, name, raising=False)
    try:
        import mgr_module
    except ImportError as exc:
        pytest.skip(f"Ceph's mgr_module.py does not import here: {exc}")
    importlib.import_module("perfwatch.module")  # registers its commands with mgr_module.CLICommand

    yield mgr_module
    for name in ours:
        sys.modules.pop(name, None)


def test_every_command_declares_the_arguments_it_always_had(mgr_module: Any) -> None:
    registered = {prefix: cmd for prefix, cmd in mgr_module.CLICommand.COMMANDS.items() if prefix in COMMANDS}
    assert sorted(registered) == sorted(COMMANDS)
    for prefix, args in COMMANDS.items():
        assert registered[prefix].args == args, prefix
        assert "runner" not in registered[prefix].arg_spec
        assert registered[prefix].desc, f"{prefix} has no help text"


class Runner:
    def __init__(self) -> None:
        self.kinds = {"osd": None}

    def schedule(self) -> list:
        return [{"kind": "osd"}]

    def history(self, kind: Any, osd: Any, limit: int) -> list:
        return [{"kind": kind, "osd": osd, "limit": limit}]


def test_bench_commands_wait_for_the_runner_then_get_it(mgr_module: Any) -> None:
    mod = types.SimpleNamespace(runner=None)
    schedule = mgr_module.CLICommand.COMMANDS["perfwatch bench schedule"]
    retval, _out, err = schedule.call(mod, {"prefix": "perfwatch bench schedule"})
    assert retval == -errno.EAGAIN and "starting" in err
    mod.runner = Runner()
    retval, out, _err = schedule.call(mod, {"prefix": "perfwatch bench schedule", "format": "json"})
    assert retval == 0 and json.loads(out) == [{"kind": "osd"}]
    history = mgr_module.CLICommand.COMMANDS["perfwatch bench history"]
    retval, out, _err = history.call(mod, {"prefix": "perfwatch bench history", "osd": 3, "format": "json"})
    assert retval == 0 and json.loads(out) == [{"kind": None, "osd": 3, "limit": 10}]
