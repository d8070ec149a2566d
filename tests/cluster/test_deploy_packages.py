"""The Debian packages, built as `make deb` builds them, proven where operators install them: installed with
dpkg into the newest release's rootfs (the lab's own layer over it) and a lab run from there, its mgr
loading perfwatch from the package, and the packaged exporter answering with the same version."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from lab import mountns, releases, rootfs
from lab.cluster import Lab
from perfwatch.common.version import __version__

from .labutil import REPO, side_lab, wait_until

# Labs of their own, before the session lab starts (one lab at a time).
pytestmark = pytest.mark.own_lab

NEWEST = releases.RELEASES[-1]
PACKAGES = ("ceph-mgr-perfwatch", "perfwatch-host-exporter")


@pytest.fixture(scope="module")
def debs() -> Iterator[dict[str, Path]]:
    out = Path(tempfile.mkdtemp(prefix="pwdebs-", dir="/var/tmp"))
    try:
        build = subprocess.run(
            [str(REPO / "packaging" / "build-debs"), "--out", str(out)],
            capture_output=True, text=True, timeout=600, cwd=REPO,
        )  # fmt: skip
        assert build.returncode == 0, f"{build.stdout}\n{build.stderr}"
        print(f"\n{build.stdout.strip()}")
        found = {p.name.split("_")[0]: p for p in out.glob("*.deb")}
        assert sorted(found) == sorted(PACKAGES), found
        for name, path in found.items():
            assert path.name == f"{name}_{__version__}_all.deb"
        yield found
    finally:
        subprocess.run(["rm", "-rf", "--", str(out)], check=False)


def test_the_packages_installed_into_a_newer_release_run_a_lab_with_the_module_from_the_package(
    debs: dict[str, Path],
) -> None:
    root, _ = rootfs.ensure(NEWEST, print)
    args = ["--release", NEWEST.name, "--module-from", "rootfs"]
    args += [a for name in PACKAGES for a in ("--install", str(debs[name]))]
    with side_lab("pwdeb", *args) as (directory, said):
        assert "installed ceph-mgr-perfwatch_" in said and "mgr modules: perfwatch from /usr/share/ceph/mgr" in said
        handle = Lab.open(directory)
        holder = handle.state.mount_ns
        assert holder is not None

        def inside(*argv: str) -> str:
            code, out = mountns.run_inside(holder, root, list(argv), directory, timeout=60)
            assert code == 0, f"{' '.join(argv)}: {out}"
            return out

        for name in PACKAGES:
            installed = inside("dpkg-query", "-W", "-f", "${Version} ${Status}", name)
            assert installed == f"{__version__} install ok installed"
        assert "mgr module path" not in handle.config.conf_path.read_text()
        assert "perfwatch" in handle.ceph("mgr", "module", "ls")["enabled_modules"]
        status = wait_until(lambda: handle.ceph("perfwatch", "status"), 60, "perfwatch status")
        assert status["version"] == __version__
        assert status["loaded_from"] == "/usr/share/ceph/mgr/perfwatch"
        # the packaged exporter, on the release's own Python, names the same version
        assert inside("perfwatch-host-exporter", "--version").strip() == f"perfwatch-host-exporter {__version__}"
        assert "perfwatch-host-exporter.service" in inside("dpkg", "-L", "perfwatch-host-exporter")
    # installed into the lab's layer only: the cached rootfs has neither package
    assert not (root / "usr/share/ceph/mgr/perfwatch").exists()
    assert "ceph-mgr-perfwatch" not in (root / "var/lib/dpkg/status").read_text()
