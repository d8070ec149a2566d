"""The lab's releases: names and versions resolved, rootfs builds planned and cached by suite and exact
version, commands wrapped into the lab's mount namespace, and Reef's bcrypt import made optional."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from lab import bootstrap, cephcli, mountns, releases, rootfs
from lab.cli import env_line
from lab.config import LabConfig, LabError
from lab.daemons import Catalogue
from lab.procs import ProcRef
from lab.topology import plan


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("pacific", "pacific"),
        ("Reef", "reef"),
        ("18.2", "reef"),
        ("18", "reef"),
        ("18.2.7", "reef"),
        (" tentacle ", "tentacle"),
        ("20.2.4", "tentacle"),
        ("16.2.15", "pacific"),
    ],
)
def test_a_release_is_found_by_name_series_major_or_version(text: str, name: str) -> None:
    assert releases.resolve(text).name == name


@pytest.mark.parametrize("text", ["squid", "19.2", "18.20", "1", "", "reef; rm -rf /", "latest"])
def test_an_unknown_release_is_one_line_naming_the_choices(text: str) -> None:
    with pytest.raises(LabError, match=r"the lab runs pacific \(16\.2\), reef \(18\.2\), tentacle \(20\.2\)"):
        releases.resolve(text)


def test_only_pacific_runs_from_this_machines_packages() -> None:
    assert [r.name for r in releases.RELEASES if not r.from_rootfs] == [releases.DEFAULT] == ["pacific"]
    assert {r.name: r.suite for r in releases.RELEASES if r.from_rootfs} == {"reef": "trixie", "tentacle": "forky"}


def test_a_suite_that_moved_on_to_another_release_is_refused() -> None:
    reef = releases.resolve("reef")
    reef.check_version("18.2.7+ds-1+deb13u1", "x")
    reef.check_version("1:18.2.8-1", "x")  # an epoch is not part of the release
    with pytest.raises(LabError, match=r"Debian trixie has Ceph 19\.2\.1-1, not reef 18\.2"):
        reef.check_version("19.2.1-1", "Debian trixie")
    with pytest.raises(LabError):
        reef.check_version("18.20.1", "x")


def test_an_exact_version_asked_for_must_be_the_one_the_lab_would_run() -> None:
    assert [releases.exact_version(t) for t in ("18.2.7", " 20.2.4 ", "18.2", "reef", "18")] == [
        "18.2.7",
        "20.2.4",
        "",
        "",
        "",
    ]
    reef = releases.resolve("18.2.7")
    reef.check_exact("18.2.7", "18.2.7+ds-1+deb13u1", "x")
    reef.check_exact("18.2.7", "18.2.7", "x")
    with pytest.raises(LabError, match=r"the rootfs has Ceph 18\.2\.7\+ds-1, not 18\.2\.4: ask for reef"):
        reef.check_exact("18.2.4", "18.2.7+ds-1", "the rootfs")
    with pytest.raises(LabError):
        reef.check_exact("18.2.7", "18.2.70-1", "x")  # 18.2.70 is not 18.2.7


# ----- rootfs ------------------------------------------------------------------------------------------


def test_the_mirror_is_the_one_apt_uses_and_never_the_security_archive() -> None:
    deb822 = (
        "Types: deb\nURIs: http://deb.debian.org/debian-security\n\nTypes: deb\nURIs: http://mirror.example/debian/\n"
    )
    assert rootfs.mirror_from_sources([deb822]) == "http://mirror.example/debian"
    one_line = "# comment\ndeb [arch=amd64] http://ftp.example/debian bookworm main\n"
    assert rootfs.mirror_from_sources(["", one_line]) == "http://ftp.example/debian"
    assert rootfs.mirror_from_sources([]) == rootfs.DEFAULT_MIRROR


@pytest.mark.parametrize(
    "text",
    [
        "Types: deb\nURIs: http://off.example/debian\nEnabled: no\n\nTypes: deb\nURIs: http://good.example/debian\n",
        "Types: deb-src\nURIs: http://src.example/debian\n\nTypes: deb\nURIs: http://good.example/debian\n",
        "deb [signed-by=/k.gpg] https://download.ceph.com/debian-pacific bookworm main\n"
        "deb cdrom:[Debian 12]/ bookworm main\ndeb http://good.example/debian bookworm main\n",
    ],
)
def test_disabled_source_only_third_party_and_cdrom_entries_are_not_the_mirror(text: str) -> None:
    assert rootfs.mirror_from_sources([text]) == "http://good.example/debian"


def test_a_build_is_never_removed_through_its_mounts(tmp_path: Path) -> None:
    work = tmp_path / ".building-forky-1"
    info = (
        f"22 1 0:21 / /proc rw - proc proc rw\n"
        f"90 22 0:5 / {work}/proc rw - proc proc rw\n91 22 0:6 / {tmp_path}/other rw - tmpfs t rw\n"
    )
    assert rootfs.mounts_under(work, info) == [f"{work}/proc"]
    assert rootfs.mounts_under(tmp_path / ".building-forky", info) == []  # a prefix of a name is not under it


def test_the_build_includes_ceph_and_qatzip_and_does_not_check_validity_dates_of_a_frozen_archive() -> None:
    argv = rootfs.mmdebstrap_argv("forky", Path("/cache/x"), "http://m/debian")
    assert argv[0] == "mmdebstrap" and "--variant=apt" in argv
    assert 'Acquire::Check-Valid-Until "false"' in " ".join(argv)
    included = next(a for a in argv if a.startswith("--include=")).split("=", 1)[1].split(",")
    assert {"ceph-mon", "ceph-osd", "ceph-mgr", "ceph-common", "radosgw", "libqatzip3"} <= set(included)
    assert argv[-3:] == [
        "forky",
        "/cache/x",
        "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://m/debian forky main",
    ]


STATUS = """Package: ceph-base
Status: install ok installed
Version: 18.2.7+ds-1+deb13u1

Package: ceph-mon
Status: deinstall ok config-files
Version: 16.2.15

Package: ceph-mon
Status: install ok installed
Architecture: amd64
Version: 18.2.7+ds-1+deb13u1
"""


def test_the_exact_version_is_read_from_the_installed_package_only() -> None:
    assert rootfs.package_version(STATUS, "ceph-mon") == "18.2.7+ds-1+deb13u1"
    assert rootfs.package_version(STATUS, "ceph-osd") is None


def _finished(cache: Path, suite: str, version: str, built: float) -> Path:
    path = cache / rootfs.folder_name(suite, version)
    path.mkdir(parents=True)
    (path / rootfs.MARKER).write_text(json.dumps({"suite": suite, "ceph_version": version, "built": built}))
    return path


def test_the_cache_offers_finished_builds_of_the_suite_newest_first(tmp_path: Path) -> None:
    old = _finished(tmp_path, "forky", "20.2.3-1", 100.0)
    new = _finished(tmp_path, "forky", "20.2.4+ds-2", 200.0)
    _finished(tmp_path, "trixie", "18.2.7-1", 300.0)
    (tmp_path / "forky-20.2.5-1").mkdir()  # a build that never finished: no marker
    for i, garbage in enumerate(
        ["{not json", "[1, 2]", '{"suite": "forky", "ceph_version": "20.2.9", "built": "yesterday"}',
         '{"suite": "forky", "ceph_version": null}', '{"suite": "forky"}', '{"suite": "forky", "ceph_version": ""}']
    ):  # fmt: skip
        (tmp_path / f"forky-broken{i}").mkdir()
        (tmp_path / f"forky-broken{i}" / rootfs.MARKER).write_text(garbage)
    assert rootfs.cached(tmp_path, "forky") == [(new, "20.2.4+ds-2"), (old, "20.2.3-1")]
    assert rootfs.folder_name("forky", "1:20.2.4") == "forky-1_20.2.4"


@pytest.mark.root
def test_a_cached_rootfs_is_used_without_building(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(rootfs.CACHE_ENV, str(tmp_path))
    path = _finished(tmp_path, "trixie", "18.2.7+ds-1", 1.0)
    monkeypatch.setattr(rootfs, "_build", lambda *a: pytest.fail("built although one is cached"))
    assert rootfs.ensure(releases.resolve("reef"), print) == (path, "18.2.7+ds-1")
    with pytest.raises(LabError, match="pacific runs from this machine's packages"):
        rootfs.ensure(releases.resolve("pacific"), print)


@pytest.mark.root
def test_a_rebuild_refuses_while_a_lab_runs_from_the_rootfs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(rootfs.CACHE_ENV, str(tmp_path))
    path = _finished(tmp_path, "forky", "20.2.4+ds-2", 1.0)
    monkeypatch.setattr(rootfs, "processes_in", lambda root: [4242] if root == path else [])
    monkeypatch.setattr(rootfs, "_build", lambda *a: pytest.fail("built over a rootfs in use"))
    with pytest.raises(LabError, match=r"in use by 1 process\(es\) \(pids 4242\): stop the labs"):
        rootfs.ensure(releases.resolve("tentacle"), print, rebuild=True)
    assert (path / rootfs.MARKER).exists()


def test_processes_are_found_by_their_root_directory(tmp_path: Path) -> None:
    assert os.getpid() in rootfs.processes_in(Path("/"))
    assert rootfs.processes_in(tmp_path) == []


@pytest.mark.root
def test_a_cached_rootfs_of_another_release_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(rootfs.CACHE_ENV, str(tmp_path))
    _finished(tmp_path, "forky", "21.2.0-1", 1.0)
    with pytest.raises(LabError, match=r"has Ceph 21\.2\.0-1, not tentacle 20\.2"):
        rootfs.ensure(releases.resolve("tentacle"), print)


# ----- the mount namespace and the wrappers ----------------------------------------------------------


def test_a_lab_directory_under_a_symlink_of_the_rootfs_or_inside_it_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "rootfs"
    (root / "var").mkdir(parents=True)
    (root / "var/run").symlink_to("/run")  # as Debian has it
    with pytest.raises(LabError, match="a symlink in the rootfs"):
        mountns.check_paths(root, [Path("/var/run/mylab")])
    with pytest.raises(LabError, match="inside the rootfs"):
        mountns.check_paths(root, [root / "srv/lab"])
    mountns.check_paths(root, [Path("/var/tmp/mylab"), tmp_path / "lab"])


def test_the_holder_mounts_inside_its_own_namespace_and_binds_lab_and_module_at_their_own_paths() -> None:
    root, lab, module = Path("/cache/forky-20"), Path("/work/my lab"), Path("/work/mgr_module/perfwatch")
    argv = mountns.holder_argv(root, [lab], [module])
    assert argv[:4] == ["unshare", "--mount", "--propagation", "private"]  # never the machine's mounts
    assert "--fork" not in argv  # the PID recorded is the one holding the namespace
    script = argv[-1]
    assert script.splitlines()[-1] == "exec sleep infinity"
    assert "mount --bind '/work/my lab' '/cache/forky-20/work/my lab'" in script
    assert f"mount --bind -o ro {module} {root}{module}" in script
    for sub in ("proc", "dev", "sys", "run", "tmp"):
        assert f"{root}/{sub}" in script
    lines = script.splitlines()
    # the shared rootfs is read-only before anything is mounted on it; no `a && b` that sh -e would not stop at
    assert lines.index(f"mount -o remount,bind,ro {root}") < lines.index(f"mount -t proc proc {root}/proc")
    assert not any("&&" in line for line in lines)
    # a lab directory under /tmp: its mount point is made on the lab's own /tmp, after that is mounted
    tmp_lines = mountns.holder_script(root, [Path("/tmp/pw/lab")], []).splitlines()
    made = tmp_lines.index(f"mkdir -p {root}/tmp/pw/lab")
    assert tmp_lines.index(f"mount -t tmpfs -o mode=1777 tmpfs {root}/tmp") < made
    assert made < tmp_lines.index(f"mount --bind /tmp/pw/lab {root}/tmp/pw/lab")


def test_a_wrapper_refuses_once_the_holder_is_gone_and_runs_the_rootfs_tool_with_its_own_path(tmp_path: Path) -> None:
    holder = ProcRef(4242, 99)
    text = mountns.wrapper_text(holder, Path("/cache/trixie-18"), "ceph", "18.2.7")
    assert text.startswith("#!/bin/sh\n")
    last = shlex.split(text.strip().splitlines()[-1])
    assert last[:6] == ["exec", "nsenter", "--target=4242", "--mount", "--", "chroot"]
    assert last[-3:] == ["$PWD", "/usr/bin/ceph", "$@"]
    assert f"PATH={mountns.INSIDE_PATH}; export PATH" in last[-4]  # never the lab's wrappers again, inside
    script = tmp_path / "ceph"
    script.write_text(text)
    script.chmod(0o755)
    # pid 4242 with start time 99 is not this machine's process: the wrapper says so and does nothing
    proc = subprocess.run([str(script), "-s"], capture_output=True, text=True, timeout=10)
    assert proc.returncode == 1
    assert "the lab's mount namespace (pid 4242) is gone" in proc.stderr


def test_the_tools_of_a_rootfs_lab_are_its_wrappers_and_env_puts_them_first(tmp_path: Path) -> None:
    conf = tmp_path / "ceph.conf"
    assert cephcli.tool(conf, "ceph") == "ceph"
    assert env_line(tmp_path) == f"export CEPH_CONF={conf}"
    mountns.write_wrappers(tmp_path, ProcRef(1, 1), Path("/r"), ("ceph", "rbd"), "20.2.4")
    assert cephcli.tool(conf, "ceph") == str(tmp_path / "bin" / "ceph")
    assert cephcli.tool(conf, "rados") == "rados"  # no wrapper made: the machine's
    assert env_line(tmp_path) == f'export CEPH_CONF={conf} PATH={tmp_path / "bin"}:"$PATH"'


def test_the_env_line_survives_a_lab_directory_with_spaces_and_shell_syntax(tmp_path: Path) -> None:
    odd = tmp_path / "my lab $(touch pwned)"
    mountns.write_wrappers(odd, ProcRef(1, 1), Path("/r"), ("ceph",), "20.2.4")
    script = f'eval "$(printf %s {shlex.quote(env_line(odd))})"; printf "%s\\n%s" "$CEPH_CONF" "$PATH"'
    out = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True, cwd=tmp_path).stdout
    conf, path = out.splitlines()
    assert conf == f"{odd}/ceph.conf" and path.startswith(f"{odd}/bin:")
    assert not (tmp_path / "pwned").exists()


def test_the_catalogue_starts_ceph_daemons_through_the_wrappers_and_keeps_the_netns(tmp_path: Path) -> None:
    config = LabConfig(directory=tmp_path, hosts=3, release="tentacle")
    topo = plan(config)
    plain = Catalogue(config, topo, "fsid")
    wrapped = Catalogue(config, topo, "fsid", ceph_bin=tmp_path / "bin")
    for name in ("mon.a", "mgr.x", "osd.1", "client.rgw.pwlab"):
        before, after = plain.spec(name, mountinfo=""), wrapped.spec(name, mountinfo="")
        assert after.argv[0] == str(tmp_path / "bin" / before.argv[0])
        assert after.argv[1:] == before.argv[1:] and after.netns == before.netns
    assert wrapped.spec("prometheus", mountinfo="") == plain.spec("prometheus", mountinfo="")


# ----- Reef's bcrypt ---------------------------------------------------------------------------------

MGR_UTIL = "import os\nimport bcrypt\nimport socket\n\ndef f():\n    return bcrypt.hashpw\n"


def test_reefs_bcrypt_import_is_made_optional_and_nothing_else_changes() -> None:
    text = bootstrap.lazy_bcrypt(MGR_UTIL)
    assert (
        text.replace(
            "try:\n    import bcrypt\nexcept ImportError:  # PyO3 builds refuse sub-interpreters\n    bcrypt = None\n",
            "import bcrypt\n",
        )
        == MGR_UTIL
    )
    compile(text, "mgr_util.py", "exec")


def test_the_module_folder_links_what_the_release_ships_and_patches_only_an_unconditional_bcrypt_import(
    tmp_path: Path,
) -> None:
    root = tmp_path / "rootfs"
    shipped = root / "usr/share/ceph/mgr"
    (shipped / "iostat").mkdir(parents=True)
    (shipped / "mgr_util.py").write_text(MGR_UTIL)
    (shipped / "mgr_module.py").write_text("import bcrypt  # not mgr_util: left alone\n")
    (shipped / "perfwatch").mkdir()  # a packaged perfwatch never shadows the checkout's
    config = LabConfig(directory=tmp_path / "lab")
    config.directory.mkdir()
    notes = bootstrap.link_modules(config, root)
    folder = config.directory / "mgr-modules"
    assert len(notes) == 1 and "bcrypt" in notes[0]
    assert (folder / "mgr_util.py").read_text() == bootstrap.lazy_bcrypt(MGR_UTIL)
    assert Path(str(folder / "iostat")).readlink() == Path("/usr/share/ceph/mgr/iostat")  # the path inside
    assert (folder / "mgr_module.py").readlink() == Path("/usr/share/ceph/mgr/mgr_module.py")
    assert (folder / "perfwatch").readlink() == bootstrap.MODULE_SOURCE


# ----- the mgr's own pool ----------------------------------------------------------------------------


def test_an_untagged_mgr_pool_gets_the_mgrs_application_and_nothing_else_is_touched() -> None:
    from lab import mgrmodules

    pools = [
        {"pool_name": ".mgr", "application_metadata": {}},
        {"pool_name": "device_health_metrics", "application_metadata": {"mgr_devicehealth": {}}},
        {"pool_name": "mypool", "application_metadata": {}},  # not the mgr's: never ours to tag
    ]
    calls: list[tuple[str, ...]] = []

    def ceph(*args: str, timeout: float = 30.0, as_json: bool = True) -> object:
        calls.append(args)
        return pools if args[:4] == ("osd", "pool", "ls", "detail") else ""

    notes = mgrmodules.tag_mgr_pools(ceph)
    assert calls[1:] == [("osd", "pool", "application", "enable", ".mgr", "mgr", "--yes-i-really-mean-it")]
    assert len(notes) == 1 and ".mgr" in notes[0]


def test_the_lab_waits_for_the_mgrs_own_pool_by_either_of_its_names_and_asks_devicehealth_for_it() -> None:
    from lab import mgrmodules

    calls: list[tuple[str, ...]] = []

    def ceph_with(*names: str) -> Callable[..., object]:
        def ceph(*args: str, timeout: float = 30.0, as_json: bool = True) -> object:
            calls.append(args)
            return list(names) if args == ("osd", "pool", "ls") else ""

        return ceph

    assert not mgrmodules.mgr_pool_made(ceph_with(".rgw.root", "default.rgw.log", "perfwatch", "mgr"))
    assert calls == [("osd", "pool", "ls"), ("device", "scrape-health-metrics")]  # a scrape makes it
    calls.clear()
    assert mgrmodules.mgr_pool_made(ceph_with(".rgw.root", ".mgr"))  # Reef on
    assert mgrmodules.mgr_pool_made(ceph_with("device_health_metrics", "default.rgw.meta"))  # Pacific
    assert calls == [("osd", "pool", "ls")] * 2  # no scrape once the pool is there
    calls.clear()
    assert not mgrmodules.mgr_pool_made(ceph_with(".rgw.root"), ask=False)  # a mgr that makes it unasked
    assert calls == [("osd", "pool", "ls")]


def _detected_from_source(root: Path, source: Path, detect: Callable[[Path], bool], without: str, with_it: str) -> None:
    """`detect` reads a feature from the file `source` of a release's root: not there, in a root without
    that file, nor in one whose file lacks it (`without`); there, in one whose file has it (`with_it`)."""
    assert not detect(root)
    path = root / source
    path.parent.mkdir(parents=True)
    path.write_text(without)
    assert not detect(root)
    path.write_text(with_it)
    assert detect(root)


@pytest.mark.host_tools
def test_whether_the_mgr_makes_its_pool_unasked_is_read_from_the_mgr_module_it_runs(tmp_path: Path) -> None:
    """Reef's and Tentacle's mgr_module.py name the mgr's own pool (MGR_POOL_NAME, `.mgr`); Pacific's does
    not; a root without one (or unreadable) is taken for one that must be asked."""
    from lab import mgrmodules

    without = "class MgrModule:\n    PERFCOUNTER_TIME = 1\n"
    with_it = 'class MgrModule:\n    MGR_POOL_NAME = ".mgr"\n'
    _detected_from_source(tmp_path, mgrmodules.MGR_MODULE_PY, mgrmodules.mgr_makes_its_pool, without, with_it)
    assert (Path("/") / mgrmodules.MGR_MODULE_PY).exists(), "make deps installs this machine's Ceph"
    assert not mgrmodules.mgr_makes_its_pool(Path("/")), "this machine's Ceph, Pacific 16.2, must be asked"


# ----- the mgr modules, enabled before a mgr starts -----------------------------------------------------


def test_the_modules_are_configured_then_enabled_all_forced_before_any_mgr_runs(tmp_path: Path) -> None:
    """No mgr has told the mon of its modules' options yet, so each `config set` is forced (unforced, the
    mon refuses an option it does not know); both modules are enabled last, forced, once every option and
    the TLS material are in place, so the first mgr starts them configured and never serves plain HTTP or
    listens on its default address."""
    from lab import mgrmodules

    config = LabConfig(directory=tmp_path, hosts=3, secure=True, exporter_counters=True)
    catalogue = Catalogue(config, plan(config), "fsid")
    calls: list[tuple[str, ...]] = []

    def ceph(*args: str, timeout: float = 30.0, as_json: bool = True) -> object:
        calls.append(args)
        return ""

    mgrmodules.enable(ceph, catalogue, tmp_path)  # a root whose prometheus module has no exclude option
    sets = {c[3]: c[4] for c in calls if c[:3] == ("config", "set", "mgr")}
    assert all(c[-1] == "--force" for c in calls if c[:2] == ("config", "set")), calls
    address = catalogue.topo.core_address
    assert sets["mgr/perfwatch/server_addr"] == address and sets["mgr/prometheus/server_addr"] == address
    for mgr, port in catalogue.module_ports().items():
        assert sets[f"mgr/perfwatch/{mgr}/server_port"] == str(port)
    for mgr, port in catalogue.ceph_metrics_ports().items():
        assert sets[f"mgr/prometheus/{mgr}/server_port"] == str(port)
    assert sets["mgr/perfwatch/collect_interval"] == str(mgrmodules.COLLECT_INTERVAL)
    assert sets["mgr/perfwatch/daemon_counters_source"] == "exporters" and sets["mgr/perfwatch/ssl"] == "true"
    assert "mgr/prometheus/exclude_perf_counters" not in sets  # Pacific's module has no such option
    enables = [c for c in calls if c[:3] == ("mgr", "module", "enable")]
    assert enables == [("mgr", "module", "enable", m, "--force") for m in ("perfwatch", "prometheus")]
    assert calls[-2:] == enables, "both modules are enabled after every option and the key are set"
    assert {c[2] for c in calls if c[:2] == ("config-key", "set")} == {"mgr/perfwatch/crt", "mgr/perfwatch/key"}


def test_whether_the_prometheus_module_can_leave_daemon_counters_out_is_read_from_its_source(tmp_path: Path) -> None:
    """Reef's and Tentacle's prometheus module has `exclude_perf_counters`, which the lab turns off (it runs
    no ceph-exporter); Pacific's has not, and is sent no option it does not know."""
    from lab import mgrmodules

    without = "class Module(MgrModule):\n    MODULE_OPTIONS = [Option(name='server_addr')]\n"
    with_it = "class Module(MgrModule):\n    MODULE_OPTIONS = [Option(name='exclude_perf_counters')]\n"
    detect = mgrmodules.has_exclude_perf_counters
    _detected_from_source(tmp_path, mgrmodules.CEPH_PROMETHEUS_PY, detect, without, with_it)
    sent: list[tuple[str, ...]] = []
    config = LabConfig(directory=tmp_path / "lab", hosts=1)
    mgrmodules.enable(lambda *a, **_: sent.append(a), Catalogue(config, plan(config), "fsid"), tmp_path)
    assert ("config", "set", "mgr", "mgr/prometheus/exclude_perf_counters", "false", "--force") in sent
    assert not mgrmodules.has_exclude_perf_counters(Path("/")), "this machine's Ceph, Pacific 16.2, has not"


def test_an_option_no_module_declares_stops_the_lab_once_its_mgr_runs(tmp_path: Path) -> None:
    """A forced `config set` takes a misspelt name too: once the mgr has reported its modules' options (with
    its available modules, in the mgr map), the lab names any option it set that no module declares, instead
    of running the module on its default. A per-mgr option is the module's option of that name."""
    from lab import mgrmodules

    config = LabConfig(directory=tmp_path, hosts=1)
    catalogue = Catalogue(config, plan(config), "fsid")
    names = list(mgrmodules.settings(catalogue, tmp_path))
    assert "mgr/perfwatch/x/server_port" in names and "mgr/prometheus/y/server_port" in names

    def dump(perfwatch: set[str]) -> dict:
        declared = {"perfwatch": perfwatch, "prometheus": {"server_addr", "server_port"}}
        modules = [{"name": m, "can_run": True, "module_options": {o: {"name": o} for o in opts}}
                   for m, opts in declared.items()]  # fmt: skip
        return {"available": True, "modules": list(declared), "available_modules": modules}

    def ceph_with(answer: dict) -> Callable[..., object]:
        def ceph(*args: str, timeout: float = 30.0, as_json: bool = True) -> object:
            assert args == ("mgr", "dump"), args
            return answer

        return ceph

    perfwatch = {"server_addr", "server_port", "collect_interval", "history_limit"}
    mgrmodules.check_enabled(ceph_with(dump(perfwatch)), catalogue, tmp_path)
    with pytest.raises(LabError, match="declare no option mgr/perfwatch/collect_interval "):
        mgrmodules.check_enabled(ceph_with(dump(perfwatch - {"collect_interval"})), catalogue, tmp_path)
    undeclared = mgrmodules.undeclared_options(dump(perfwatch - {"server_port"}), names)
    assert undeclared == ["mgr/perfwatch/x/server_port", "mgr/perfwatch/y/server_port"]
    assert mgrmodules.undeclared_options({"available_modules": []}, ["mgr/nosuch/opt"]) == ["mgr/nosuch/opt"]
