"""The container images, built as an operator builds them (Containerfile, buildah) on a local base (no
registry is reachable here: the base is the newest release's rootfs imported as an image), then proven:
a lab runs its Ceph from the mgr image's filesystem with perfwatch loaded from where the image put it, and
the exporter image's exporter answers with the version."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from lab import releases, rootfs
from lab.cluster import Lab
from perfwatch.common.version import __version__
from tests.tools import shared_module_files

from .labutil import REPO, free_ports, side_lab, wait_until

# Labs of their own, before the session lab starts (one lab at a time).
pytestmark = pytest.mark.own_lab

NEWEST = releases.RELEASES[-1]  # the Containerfile's default base is the newest supported release


class Images:
    """buildah with a storage of the test's own (removed after), and the images the build script made."""

    def __init__(self, storage: Path) -> None:
        self.storage = storage
        self.globals = ["--storage-driver", "vfs", "--root", str(storage / "root"), "--runroot", str(storage / "run")]
        self.built: dict = {}

    def buildah(self, *args: str) -> str:
        done = subprocess.run(["buildah", *self.globals, *args], capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"buildah {' '.join(args)}: {done.stderr}"
        return done.stdout.strip()

    def mount(self, target: str) -> Path:
        """The filesystem of a working container of the image built for `target` (vfs: a plain folder)."""
        container = self.buildah("from", "--name", f"pwtest-{target}", self.built["images"][target]["image"])
        return Path(self.buildah("mount", container))

    def config(self, target: str) -> dict:
        return json.loads(self.buildah("inspect", "--type", "image", self.built["images"][target]["image"]))


@pytest.fixture(scope="module")
def images() -> Iterator[Images]:
    root, ceph_version = rootfs.ensure(NEWEST, print)
    storage = Path(tempfile.mkdtemp(prefix="pwimages-", dir="/var/tmp"))
    made = Images(storage)
    try:
        started = time.monotonic()
        build = subprocess.run(
            [sys.executable, str(REPO / "packaging" / "build_image.py"), "--base-rootfs", str(root), "--json",
             "--root", str(storage / "root"), "--runroot", str(storage / "run")],
            capture_output=True, text=True, timeout=1200, cwd=REPO,
        )  # fmt: skip
        assert build.returncode == 0, build.stderr
        made.built = json.loads(build.stdout)
        print(f"\nimages built in {time.monotonic() - started:.0f} s:\n{build.stderr.strip()}")
        assert made.built["ceph_version"] == ceph_version.split("+")[0].split("-")[0]
        yield made
    finally:
        for target in ("mgr", "host-exporter"):
            subprocess.run(["buildah", *made.globals, "rm", f"pwtest-{target}"], capture_output=True, timeout=120)
        shutil.rmtree(storage, ignore_errors=True)


def test_the_images_are_tagged_with_the_one_version_and_carry_it_as_a_label(images: Images) -> None:
    mgr, exporter = images.built["images"]["mgr"], images.built["images"]["host-exporter"]
    assert mgr["image"] == f"localhost/ceph-perfwatch:{__version__}-ceph{images.built['ceph_version']}"
    assert exporter["image"] == f"localhost/perfwatch-host-exporter:{__version__}"
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    for target in ("mgr", "host-exporter"):
        labels = images.config(target)["OCIv1"]["config"]["Labels"]
        assert labels["org.opencontainers.image.version"] == __version__, labels
        assert labels["org.opencontainers.image.licenses"] == "Apache-2.0"
        assert labels["org.opencontainers.image.revision"].removesuffix("-dirty") == head
        assert labels["org.opencontainers.image.source"].startswith("https://")
        assert images.built["images"][target]["bytes"] > 100e6  # Ceph's image and ours on top
        assert images.built["images"][target]["added_bytes"] < 5e6  # on it only our Python files: no tools


def test_the_mgr_image_adds_only_the_module_and_a_lab_runs_from_it(images: Images) -> None:
    """`ceph mgr module enable perfwatch` works with the module found in /usr/share/ceph/mgr/perfwatch of
    the image: no mgr_module_path, nothing from the checkout in the mgr's reach."""
    tree = images.mount("mgr")
    ours = sorted(p.relative_to(REPO / "mgr_module") for p in (REPO / "mgr_module" / "perfwatch").rglob("*.py"))
    mgr_dir = tree / "usr/share/ceph/mgr"
    shipped = sorted(p.relative_to(mgr_dir) for p in (mgr_dir / "perfwatch").rglob("*"))
    assert [p for p in shipped if p.suffix == ".py"] == ours
    assert not [p for p in shipped if "__pycache__" in p.parts or p.suffix == ".pyc"]
    with side_lab("pwimage", "--rootfs", str(tree), "--module-from", "rootfs") as (directory, said):
        assert "mgr modules: perfwatch from /usr/share/ceph/mgr/perfwatch (version " + __version__ in said
        handle = Lab.open(directory)
        assert handle.config.release == NEWEST.name and handle.state.rootfs == str(tree)
        assert "mgr module path" not in handle.config.conf_path.read_text()
        handle.ceph("mgr", "module", "enable", "perfwatch", as_json=False)  # as an operator would: a no-op now
        assert "perfwatch" in handle.ceph("mgr", "module", "ls")["enabled_modules"]
        assert handle.ceph("config", "get", "mgr.x", "mgr_module_path", as_json=False).strip() == "/usr/share/ceph/mgr"
        status = wait_until(lambda: handle.ceph("perfwatch", "status"), 60, "perfwatch status")
        assert status["version"] == __version__
        assert status["loaded_from"] == "/usr/share/ceph/mgr/perfwatch"
        assert images.built["ceph_version"] in status["ceph_version"]
    # the lab wrote into a layer of its own: the image's filesystem has none of its mount points
    assert not (tree / str(directory).lstrip("/")).exists()


def page_text(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.read().decode()
    except OSError:  # not listening yet (URLError is an OSError)
        return None


def test_the_exporter_image_runs_its_exporter_which_names_the_version(images: Images) -> None:
    config = images.config("host-exporter")["OCIv1"]["config"]
    assert config["Entrypoint"] == ["/usr/bin/perfwatch-host-exporter"]  # the launcher: python3 -I
    tree = images.mount("host-exporter")
    private = tree / "usr/lib/perfwatch-host-exporter"
    shipped = sorted(str(p.relative_to(private)) for p in (private / "perfwatch").rglob("*.py"))
    assert shipped == sorted(f.removeprefix("mgr_module/") for f in shared_module_files()), "only what it runs"
    assert (tree / "usr/share/doc/perfwatch-host-exporter/LICENSE").read_text() == (REPO / "LICENSE").read_text()
    port = free_ports(1)
    # As a container runtime would start it: the image's root, its own /proc, the image's entrypoint.
    script = (
        f"mount -t proc proc {tree}/proc\n"
        f"exec chroot {tree} {' '.join(config['Entrypoint'])} --listen-address 127.0.0.1 --port {port}"
    )
    proc = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-ec", script])
    try:
        url = f"http://127.0.0.1:{port}/"
        page = wait_until(lambda: page_text(url), 30, "the exporter answers")
        assert f"Version {__version__}." in page
        metrics = wait_until(
            lambda: (page_text(url + "metrics") or "").partition("ceph_perfwatch_exporter_daemons")[1],
            30,
            "the exporter's first collection",
        )
        assert metrics
    finally:
        proc.terminate()
        proc.wait(timeout=15)
