"""The Debian packages: packaging/build-debs builds them once per module (dpkg-buildpackage + lintian, about
15 s), then each test reads them with dpkg-deb. Needs debhelper, dpkg-dev and lintian (`make deps` installs them).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

from perfwatch.common.version import __version__
from perfwatch_host_exporter.cli import parser
from tests import paths
from tests.tools import shared_module_files

REPO = paths.REPO
BUILD_DEBS = REPO / "packaging" / "build-debs"
MGR = "ceph-mgr-perfwatch"
EXPORTER = "perfwatch-host-exporter"
MGR_DIR = "./usr/share/ceph/mgr/perfwatch/"
PRIVATE = "./usr/lib/perfwatch-host-exporter/"
UNIT = "./lib/systemd/system/perfwatch-host-exporter.service"
DEFAULTS = "./etc/default/perfwatch-host-exporter"
LAUNCHER = "./usr/bin/perfwatch-host-exporter"
MAN_PAGE = "./usr/share/man/man8/perfwatch-host-exporter.8.gz"
TOOLS = ("git", "dpkg-buildpackage", "dpkg-deb", "dh", "lintian")


def build_debs() -> ModuleType:
    """packaging/build-debs as a module (it has no .py suffix)."""
    loader = importlib.machinery.SourceFileLoader("build_debs", str(BUILD_DEBS))
    spec = importlib.util.spec_from_loader("build_debs", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def git_files(*paths: str, untracked: bool) -> list[str]:
    command = ["git", "-C", str(REPO), "ls-files", "--cached"]
    if untracked:
        command += ["--others", "--exclude-standard"]
    out = subprocess.run([*command, "--", *paths], check=True, stdout=subprocess.PIPE, text=True).stdout
    return sorted(set(out.split()))


def packaging_is_untracked() -> bool:
    """True while debian/ or packaging/ hold files git does not track yet (before they are added): the
    build then exports untracked files too, so what is being written gets built and tested."""
    return bool(
        subprocess.run(
            ["git", "-C", str(REPO), "ls-files", "--others", "--exclude-standard", "--", "debian", "packaging"],
            check=True,
            stdout=subprocess.PIPE,
            text=True,
        ).stdout.strip()
    )


@dataclass(frozen=True)
class Build:
    out: Path
    returncode: int
    output: str
    seconds: float
    untracked: bool

    def deb(self, package: str) -> Path:
        path = self.out / f"{package}_{__version__}_all.deb"
        if not path.is_file():
            pytest.fail(f"{path.name} was not built; build-debs said:\n{self.output[-3000:]}")
        return path


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Build:
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"{', '.join(missing)} not found: apt-get install -y debhelper dpkg-dev lintian git")
    out = tmp_path_factory.mktemp("deb")
    untracked = packaging_is_untracked()
    command = [str(BUILD_DEBS), "--out", str(out), *(["--include-untracked"] if untracked else [])]
    started = time.monotonic()
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    return Build(out, done.returncode, done.stdout, time.monotonic() - started, untracked)


def field(deb: Path, name: str) -> str:
    return subprocess.run(
        ["dpkg-deb", "--field", str(deb), name], check=True, stdout=subprocess.PIPE, text=True
    ).stdout.strip()


def contents(deb: Path) -> dict[str, str]:
    """Path -> mode string (drwxr-xr-x, -rw-r--r--, ...) of every entry in the package."""
    listing = subprocess.run(["dpkg-deb", "--contents", str(deb)], check=True, stdout=subprocess.PIPE, text=True).stdout
    entries = {}
    for line in listing.splitlines():
        mode, _owner, _size, _date, _time, path = line.split(None, 5)
        entries[path.split(" -> ")[0]] = mode
    return entries


def files(deb: Path) -> set[str]:
    return {path for path, mode in contents(deb).items() if not mode.startswith("d")}


def extract(deb: Path, into: Path) -> Path:
    subprocess.run(["dpkg-deb", "-x", str(deb), str(into)], check=True)
    return into


# versions


def test_the_changelogs_top_entry_carries_the_modules_version() -> None:
    first = (REPO / "debian" / "changelog").read_text().splitlines()[0]
    match = re.match(r"^ceph-perfwatch \(([^)]+)\) \S+; urgency=\S+$", first)
    assert match, first
    assert match.group(1) == __version__, "add a debian/changelog entry for the version in version.py"


def test_pyproject_carries_the_modules_version() -> None:
    match = re.search(r'^version = "([^"]+)"$', (REPO / "pyproject.toml").read_text(), flags=re.MULTILINE)
    assert match and match.group(1) == __version__


def test_build_debs_refuses_a_changelog_that_is_not_the_modules_version(tmp_path: Path) -> None:
    script = build_debs()
    (tmp_path / "mgr_module/perfwatch/common").mkdir(parents=True)
    (tmp_path / "debian").mkdir()
    (tmp_path / "mgr_module/perfwatch/common/version.py").write_text('"""v"""\n\n__version__ = "0.2.0"\n')
    (tmp_path / "debian/changelog").write_text("ceph-perfwatch (0.1.0) unstable; urgency=medium\n")
    with pytest.raises(script.BuildError, match=r"top entry is 0\.1\.0 but .* says 0\.2\.0"):
        script.checked_version(tmp_path)
    (tmp_path / "debian/changelog").write_text("ceph-perfwatch (0.2.0) unstable; urgency=medium\n")
    assert script.checked_version(tmp_path) == "0.2.0"


def test_build_debs_exports_what_git_tracks_and_never_what_it_ignores(tmp_path: Path) -> None:
    script = build_debs()
    repo = tmp_path / "repo"
    (repo / "pkg" / "__pycache__").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".gitignore").write_text("__pycache__/\n")
    (repo / "pkg" / "tracked.py").write_text("x = 1\n")
    (repo / "pkg" / "run").write_text("#!/bin/sh\n")
    (repo / "pkg" / "run").chmod(0o755)
    (repo / "pkg" / "junk.py").write_text("scratch\n")
    (repo / "pkg" / "__pycache__" / "tracked.cpython-311.pyc").write_bytes(b"\0")
    subprocess.run(["git", "-C", str(repo), "add", ".gitignore", "pkg/tracked.py", "pkg/run"], check=True)

    tracked = script.source_files(repo, include_untracked=False)
    assert tracked == [".gitignore", "pkg/run", "pkg/tracked.py"]
    assert script.export(repo, tracked, tmp_path / "tree") == 3
    exported = sorted(str(p.relative_to(tmp_path / "tree")) for p in (tmp_path / "tree").rglob("*") if p.is_file())
    assert exported == [".gitignore", "pkg/run", "pkg/tracked.py"]
    assert os.access(tmp_path / "tree" / "pkg" / "run", os.X_OK)  # modes survive: the launcher stays executable
    assert script.source_files(repo, include_untracked=True) == [
        ".gitignore",
        "pkg/junk.py",
        "pkg/run",
        "pkg/tracked.py",
    ]


# the build


@pytest.mark.host_tools
def test_the_build_succeeds_lintian_passes_and_each_deb_is_listed_with_its_size(build: Build) -> None:
    assert build.returncode == 0, build.output[-4000:]
    assert "+ lintian --fail-on error,warning" in build.output
    assert "lintian: passed" in build.output
    tags = [line for line in build.output.splitlines() if re.match(r"^[EW]: ", line)]
    assert tags == []
    for package in (MGR, EXPORTER):
        deb = build.deb(package)
        assert f"{deb}  {deb.stat().st_size} bytes" in build.output
    print(f"build + lintian: {build.seconds:.1f} s")


@pytest.mark.parametrize(
    ("package", "depends"),
    [(MGR, "ceph-mgr (>= 16.2)"), (EXPORTER, "python3 (>= 3.6)")],
)
@pytest.mark.host_tools
def test_each_package_has_its_name_version_architecture_and_depends(build: Build, package: str, depends: str) -> None:
    deb = build.deb(package)
    assert field(deb, "Package") == package
    assert field(deb, "Source") == "ceph-perfwatch"
    assert field(deb, "Version") == __version__
    assert field(deb, "Architecture") == "all"
    assert field(deb, "Depends") == depends


@pytest.mark.host_tools
def test_the_exporter_never_pulls_in_ceph(build: Build) -> None:
    deb = build.deb(EXPORTER)
    relations = " ".join(field(deb, name) for name in ("Depends", "Pre-Depends", "Recommends"))
    assert "ceph" not in relations


@pytest.mark.host_tools
def test_the_mgr_package_holds_every_module_file_under_usr_share_ceph_mgr_and_nothing_else(
    build: Build, tmp_path: Path
) -> None:
    deb = build.deb(MGR)
    module = [
        path.removeprefix("mgr_module/perfwatch/")
        for path in git_files("mgr_module/perfwatch", untracked=build.untracked)
        if path.endswith(".py") and (REPO / path).is_file()
    ]
    assert {"__init__.py", "module.py", "benchmarks/__init__.py", "common/server/__init__.py"} <= set(module)
    shipped = files(deb)
    assert {path.removeprefix(MGR_DIR) for path in shipped if path.startswith(MGR_DIR)} == set(module)
    others = {path for path in shipped if not path.startswith(MGR_DIR)}
    assert others and all(path.startswith(f"./usr/share/doc/{MGR}/") for path in others), others
    assert not any("__pycache__" in path or path.endswith(".pyc") for path in contents(deb))
    root = extract(deb, tmp_path)
    for path in module:  # the working tree's files, unchanged
        assert (root / MGR_DIR / path).read_bytes() == (REPO / "mgr_module/perfwatch" / path).read_bytes(), path


@pytest.mark.host_tools
def test_the_exporter_package_holds_launcher_unit_defaults_man_page_and_the_private_tree(build: Build) -> None:
    deb = build.deb(EXPORTER)
    entries = contents(deb)
    assert entries[LAUNCHER] == "-rwxr-xr-x"
    for path in (UNIT, DEFAULTS, MAN_PAGE):
        assert entries[path] == "-rw-r--r--", path
    private = {path.removeprefix(PRIVATE) for path in files(deb) if path.startswith(PRIVATE)}
    expected = {
        path.removeprefix("exporters/")
        for path in git_files("exporters/perfwatch_host_exporter", untracked=build.untracked)
        if path.endswith(".py") and (REPO / path).is_file()
    } | {path.removeprefix("mgr_module/") for path in shared_module_files()}
    assert {
        "perfwatch_host_exporter/__main__.py",
        "perfwatch/common/exposition.py",
        "perfwatch/common/server/__init__.py",
    } <= expected
    assert private == expected, "the exporter and the modules it imports, nothing of the mgr module's own"
    assert "perfwatch/module.py" not in private
    assert not any("__pycache__" in path for path in entries)


@pytest.mark.host_tools
def test_the_defaults_file_is_a_conffile_and_the_unit_is_the_repositorys_own(build: Build, tmp_path: Path) -> None:
    deb = build.deb(EXPORTER)
    subprocess.run(["dpkg-deb", "--control", str(deb), str(tmp_path / "DEBIAN")], check=True)
    assert (tmp_path / "DEBIAN" / "conffiles").read_text().split() == ["/etc/default/perfwatch-host-exporter"]
    root = extract(deb, tmp_path / "root")
    assert (root / UNIT).read_bytes() == (REPO / "exporters" / "perfwatch-host-exporter.service").read_bytes()
    defaults = (root / DEFAULTS).read_text()
    assert re.search(r'^PERFWATCH_EXPORTER_ARGS=""$', defaults, flags=re.MULTILINE)  # active, empty: no options
    # installing enables the service and starts it (restarts it on upgrade) where systemd runs
    postinst = (tmp_path / "DEBIAN" / "postinst").read_text()
    assert "deb-systemd-helper enable 'perfwatch-host-exporter.service'" in postinst
    assert "deb-systemd-invoke $_dh_action 'perfwatch-host-exporter.service'" in postinst
    assert "stop 'perfwatch-host-exporter.service'" in (tmp_path / "DEBIAN" / "prerm").read_text()


@pytest.mark.host_tools
def test_the_units_execstart_and_environment_file_are_in_the_package(build: Build, tmp_path: Path) -> None:
    root = extract(build.deb(EXPORTER), tmp_path)
    unit = (root / UNIT).read_text()
    exec_start = re.findall(r"^ExecStart=(.*)$", unit, flags=re.MULTILINE)
    assert len(exec_start) == 1
    argv = shlex.split(exec_start[0])
    assert argv == ["/usr/bin/perfwatch-host-exporter", "$PERFWATCH_EXPORTER_ARGS"]
    launcher = root / argv[0].lstrip("/")
    assert launcher.is_file() and os.access(launcher, os.X_OK)
    assert re.findall(r"^EnvironmentFile=-(.*)$", unit, flags=re.MULTILINE) == ["/etc/default/perfwatch-host-exporter"]
    assert (root / DEFAULTS).is_file()
    # the launcher runs the private tree the package ships, isolated
    text = launcher.read_text()
    subprocess.run(["sh", "-n", str(launcher)], check=True)
    assert "exec /usr/bin/python3 -I -c" in text and 'sys.path.insert(0, "/usr/lib/perfwatch-host-exporter")' in text
    assert (root / "usr/lib/perfwatch-host-exporter/perfwatch_host_exporter/__main__.py").is_file()


@pytest.mark.host_tools
def test_the_launcher_is_immune_to_its_working_directory_and_environment(build: Build, tmp_path: Path) -> None:
    """A perfwatch_host_exporter (or perfwatch) package in the directory it is started from, or on
    PYTHONPATH, never runs: Python runs isolated and the private tree comes first."""
    root = extract(build.deb(EXPORTER), tmp_path / "root")
    private = root / "usr/lib/perfwatch-host-exporter"
    launcher = tmp_path / "launcher"
    launcher.write_text((root / LAUNCHER).read_text().replace("/usr/lib/perfwatch-host-exporter", str(private)))
    launcher.chmod(0o755)
    evil = tmp_path / "evil"
    for package in ("perfwatch_host_exporter", "perfwatch"):
        (evil / package).mkdir(parents=True)
        (evil / package / "__init__.py").write_text("raise SystemExit('HIJACKED')\n")
        (evil / package / "cli.py").write_text("raise SystemExit('HIJACKED')\n")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(evil), "PYTHONSTARTUP": str(evil / "perfwatch/cli.py")}
    run = subprocess.run([str(launcher), "--help"], cwd=evil, env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and "HIJACKED" not in run.stdout + run.stderr, run.stderr
    assert run.stdout.startswith("usage: perfwatch-host-exporter")


@pytest.mark.host_tools
def test_the_private_tree_alone_runs_the_exporter(build: Build, tmp_path: Path) -> None:
    root = extract(build.deb(EXPORTER), tmp_path / "root")
    private = root / "usr" / "lib" / "perfwatch-host-exporter"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(private)}
    python = shutil.which("python3", path="/usr/bin") or sys.executable
    run = subprocess.run(
        [python, "-m", "perfwatch_host_exporter", "--help"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("usage: perfwatch-host-exporter")
    where = subprocess.run(
        [
            python,
            "-c",
            "import perfwatch, perfwatch.common.server, perfwatch_host_exporter.cli as cli; "
            "print(perfwatch.__file__, perfwatch.common.server.__file__, cli.__file__)",
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        check=True,
    ).stdout.split()
    assert all(path.startswith(str(private) + "/") for path in where), where


# the exporter's documentation in the package


def exporter_options() -> set[str]:
    return {option for action in parser()._actions for option in action.option_strings if option.startswith("--")}


def test_every_exporter_option_is_in_the_man_page_and_the_defaults_file() -> None:
    options = exporter_options()
    assert "--listen-address" in options
    man = (REPO / "packaging" / "perfwatch-host-exporter.8").read_text().replace("\\-", "-")
    defaults = (REPO / "debian" / "perfwatch-host-exporter.default").read_text()
    undocumented = {
        option for option in options if not re.search(rf"^\.B[IR]? (.*\s)?{re.escape(option)}(\s|$)", man, re.MULTILINE)
    }
    assert undocumented == set()
    assert {option for option in options - {"--help", "--version"} if f"#   {option}" not in defaults} == set()
