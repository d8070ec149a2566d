"""module.py's commands as ceph-mgr sees them: the arguments the mgr's CLICommand reads from each (the
bench commands are wrapped by a guard that hands them the runner), and what they answer through the
mgr's own dispatch before and after serve() built the runner. Uses the real mgr_module.py of the host's
Ceph (/usr/share/ceph/mgr: Pacific on Debian 12) with a stand-in for ceph_module, the C++ side; skipped
where Ceph is not installed. PERFWATCH_MGR_DIRS (folders separated by ':') adds the mgr_module.py of
other releases, e.g. `<rootfs>/usr/share/ceph/mgr` of a Reef or Tentacle rootfs (lab/ builds them):
Reef reads a command's arguments through __wrapped__, Tentacle has a command registry per module."""

import errno
import importlib
import importlib.machinery
import json
import os
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import perfwatch  # noqa: F401 - imported before the stand-in for ceph_module: it then imports no mgr class

MGR_DIR = Path("/usr/share/ceph/mgr")
MGR_DIRS = [MGR_DIR] + [Path(d) for d in os.environ.get("PERFWATCH_MGR_DIRS", "").split(":") if d]
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
    "perfwatch top": "name=osd,req=false,type=CephInt name=pool,req=false,type=CephString "
    "name=by,req=false,strings=pool|client,type=CephChoices " + FORMAT,
    # secrets come in files (-i): the mgr hands them over as inbuf, never as an argument
    "perfwatch set-ssl-certificate": "name=mgr_id,req=false,type=CephString",
    "perfwatch set-ssl-certificate-key": "name=mgr_id,req=false,type=CephString",
    "perfwatch set-ssl-client-ca": "",
    "perfwatch clear-ssl-client-ca": "",
    "perfwatch set-basic-auth": "name=username,type=CephString",
    "perfwatch clear-basic-auth": "name=username,req=false,type=CephString",
    "perfwatch set-s3-credentials": "",
    "perfwatch clear-s3-credentials": "",
}


@pytest.fixture(params=MGR_DIRS, ids=str)
def mgr_module(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Any]:
    mgr_dir = request.param
    if not (mgr_dir / "mgr_module.py").exists():
        pytest.skip(f"no Ceph mgr_module.py in {mgr_dir}")
    ceph_module = types.ModuleType("ceph_module")
    ceph_module.__spec__ = importlib.machinery.ModuleSpec("ceph_module", None)
    for name in ("BasePyOSDMap", "BasePyOSDMapIncremental", "BasePyCRUSH", "BaseMgrModule", "BaseMgrStandbyModule"):
        setattr(ceph_module, name, type(name, (), {}))
    monkeypatch.setitem(sys.modules, "ceph_module", ceph_module)
    monkeypatch.syspath_prepend(str(mgr_dir))
    # A release's own pure-Python helpers (ceph_argparse, the `ceph` package) beside its mgr_module.py;
    # its compiled bindings (rados) are built for its Python, so the host's stay in use.
    site = mgr_dir.parents[2] / "lib" / "python3" / "dist-packages"
    if mgr_dir != MGR_DIR and site.is_dir():
        helpers = tmp_path / "helpers"
        helpers.mkdir()
        for name in ("ceph", "ceph_argparse.py"):
            if (site / name).exists():
                (helpers / name).symlink_to(site / name)
        monkeypatch.syspath_prepend(str(helpers))
        for name in [m for m in sys.modules if m in ("ceph", "ceph_argparse") or m.startswith("ceph.")]:
            monkeypatch.delitem(sys.modules, name)
    ours = (
        "mgr_module",
        "mgr_util",
        "perfwatch.ceph.mgr_compat",
        "perfwatch.module",
        "perfwatch.ceph.mgr_adapter",
        "perfwatch.commands.secrets",
        "perfwatch.commands.status",
        "perfwatch.commands.top",
        "perfwatch.commands.bench",
    )
    for name in ours:
        monkeypatch.delitem(sys.modules, name, raising=False)
        parent, _, child = name.rpartition(".")
        if parent in sys.modules:  # `from . import x` reads the attribute of its package
            monkeypatch.delattr(sys.modules[parent], child, raising=False)
    try:
        import mgr_module
    except ImportError as exc:
        pytest.skip(f"Ceph's mgr_module.py does not import here: {exc}")
    importlib.import_module("perfwatch.module")  # registers its commands in the registry of this mgr_module

    yield mgr_module
    for name in ours:
        sys.modules.pop(name, None)


def registry() -> Any:
    """The registry the mgr lists and dispatches the module's commands from: its CLICommand attribute
    (Tentacle: its own; before: the mgr-wide mgr_module.CLICommand)."""
    return sys.modules["perfwatch.module"].Module.CLICommand


def test_the_module_uses_the_registry_of_its_mgr(mgr_module: Any) -> None:
    if hasattr(mgr_module, "CLIReadCommand"):
        assert registry() is mgr_module.CLICommand
    else:
        assert issubclass(registry(), mgr_module.CLICommandBase) and registry() is not mgr_module.CLICommandBase
    assert set(COMMANDS) <= set(registry().COMMANDS)


def test_every_command_declares_the_arguments_it_always_had(mgr_module: Any) -> None:
    registered = {prefix: cmd for prefix, cmd in registry().COMMANDS.items() if prefix in COMMANDS}
    assert sorted(registered) == sorted(COMMANDS)
    for prefix, args in COMMANDS.items():
        # Reef and later also say which arguments are not positional (--format and those after it)
        assert registered[prefix].args.replace(",positional=false", "") == args, prefix
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
    schedule = registry().COMMANDS["perfwatch bench schedule"]
    retval, _out, err = schedule.call(mod, {"prefix": "perfwatch bench schedule"})
    assert retval == -errno.EAGAIN and "starting" in err
    mod.runner = Runner()
    retval, out, _err = schedule.call(mod, {"prefix": "perfwatch bench schedule", "format": "json"})
    assert retval == 0 and json.loads(out) == [{"kind": "osd"}]
    history = registry().COMMANDS["perfwatch bench history"]
    retval, out, _err = history.call(mod, {"prefix": "perfwatch bench history", "osd": 3, "format": "json"})
    assert retval == 0 and json.loads(out) == [{"kind": None, "osd": 3, "limit": 10}]


class Store:
    """The mgr store and the module's reaction to it, as the secrets commands use them."""

    def __init__(self) -> None:
        self.kv: dict[str, str] = {}
        self.changes = 0

    def get_store(self, key: str) -> str | None:
        return self.kv.get(key)

    def set_store(self, key: str, value: str | None) -> None:
        if value is None:
            self.kv.pop(key, None)
        else:
            self.kv[key] = value

    def secrets_changed(self) -> None:
        self.changes += 1


def test_secrets_come_from_the_input_file_and_are_never_echoed(mgr_module: Any) -> None:
    mod = Store()
    dispatch = registry().COMMANDS
    module = sys.modules["perfwatch.module"].Module
    for name in ("_store", "_answer"):
        setattr(Store, name, getattr(module, name))
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    given = json.dumps({"keys": [{"user": "probe", "access_key": "AKIAEXAMPLE", "secret_key": secret}]})
    retval, out, err = dispatch["perfwatch set-s3-credentials"].call(
        mod, {"prefix": "perfwatch set-s3-credentials"}, given
    )
    assert retval == 0 and secret not in out + err and mod.changes == 1
    assert json.loads(mod.kv["rgw_s3_credentials"]) == {"access_key": "AKIAEXAMPLE", "secret_key": secret}
    retval, out, err = dispatch["perfwatch set-s3-credentials"].call(mod, {"prefix": "perfwatch set-s3-credentials"})
    assert retval == -errno.EINVAL and "-i FILE" in err, "no file given"
    password = "correct horse battery"
    cmd = {"prefix": "perfwatch set-basic-auth", "username": "prometheus"}
    retval, out, err = dispatch["perfwatch set-basic-auth"].call(mod, cmd, password + "\n")
    assert retval == 0 and password not in out + err
    assert password not in mod.kv["basic_auth_users"] and "$pbkdf2-sha256$" in mod.kv["basic_auth_users"]
