"""The Containerfile and packaging/build_image.py without buildah: one version everywhere, the default
base the newest supported release's upstream image, tags derived from the base, bad input refused."""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

from lab import releases
from perfwatch.common.version import __version__
from tests import paths
from tests.tools import shared_module_files

REPO = paths.REPO
CONTAINERFILE = (REPO / "Containerfile").read_text()


def build_image() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_image", REPO / "packaging" / "build_image.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# What the exporter image copies of the module: the package's __init__.py and the folder both daemons ship.
SHARED_COPIES = ("mgr_module/perfwatch/__init__.py", "mgr_module/perfwatch/common/")


def test_the_containerfiles_version_is_the_modules() -> None:
    assert re.search(rf"^ARG PERFWATCH_VERSION={re.escape(__version__)}$", CONTAINERFILE, re.MULTILINE)
    assert build_image().perfwatch_version() == __version__


def test_the_default_base_is_the_newest_supported_release() -> None:
    base = build_image().default_base()
    assert base.startswith("quay.io/ceph/ceph:v" + releases.RELEASES[-1].series + ".")


def test_each_target_copies_only_our_python_trees() -> None:
    stages = re.split(r"^FROM ", CONTAINERFILE, flags=re.MULTILINE)[1:]
    assert [s.split()[0:3] for s in stages] == [
        ["${CEPH_IMAGE}", "AS", "host-exporter"],
        ["${CEPH_IMAGE}", "AS", "mgr"],
    ]
    exporter, mgr = stages
    copied = {src for line in re.findall(r"^COPY (.+)$", exporter, re.MULTILINE) for src in line.split()[:-1]}
    assert copied == {"LICENSE", "packaging/perfwatch-host-exporter", "exporters/perfwatch_host_exporter/",
                      *SHARED_COPIES}, "the exporter image: its own code and the code both daemons ship"  # fmt: skip
    assert "mgr_module/perfwatch/module.py" not in copied
    copies = re.findall(r"^COPY (\S+) (\S+)$", mgr, re.MULTILINE)
    assert copies == [("LICENSE", "/usr/share/doc/ceph-mgr-perfwatch/LICENSE"),
                      ("mgr_module/perfwatch/", "/usr/share/ceph/mgr/perfwatch/")]  # fmt: skip
    assert not re.search(r"^RUN ", CONTAINERFILE, re.MULTILINE)  # nothing installed, nothing run at build
    ignore = (REPO / ".containerignore").read_text().split()
    assert ignore[ignore.index("*") :][:5] == [
        "*", "!mgr_module/perfwatch/", "!exporters/perfwatch_host_exporter/", "!packaging/perfwatch-host-exporter",
        "!LICENSE",
    ]  # fmt: skip
    assert "**/__pycache__" in ignore


def test_the_images_state_licence_source_and_revision() -> None:
    for stage in re.split(r"^FROM ", CONTAINERFILE, flags=re.MULTILINE)[1:]:
        assert 'org.opencontainers.image.licenses="Apache-2.0"' in stage
        assert 'org.opencontainers.image.source="${PERFWATCH_SOURCE}"' in stage
        assert 'org.opencontainers.image.revision="${PERFWATCH_REVISION}"' in stage
    assert (REPO / "LICENSE").read_text().split()[:3] == ["Apache", "License", "Version"]
    assert re.fullmatch(r"[0-9a-f]{40}(-dirty)?|unknown", build_image().revision())


def test_the_exporter_takes_of_the_module_only_the_folder_both_daemons_ship() -> None:
    """The exporter imports of the module's package only perfwatch.common (the shared core, the daemon
    counters, the version), and its package and image copy that folder whole: nothing of the mgr module's
    own (module.py, benchmarks/, collection/)."""
    imported = set()
    for path in sorted((REPO / "exporters" / "perfwatch_host_exporter").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith("perfwatch."):
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(a.name for a in node.names if a.name.startswith("perfwatch."))
    assert {"perfwatch.common.server", "perfwatch.common.exposition"} <= imported
    assert [name for name in imported if not name.startswith("perfwatch.common")] == []
    install = (REPO / "debian" / "perfwatch-host-exporter.install").read_text().splitlines()
    assert "mgr_module/perfwatch/common usr/lib/perfwatch-host-exporter/perfwatch/" in install
    assert "mgr_module/perfwatch/__init__.py usr/lib/perfwatch-host-exporter/perfwatch/" in install
    assert not [line for line in install if line.startswith("mgr_module/") and "perfwatch/common" not in line
                and not line.startswith("mgr_module/perfwatch/__init__.py ")]  # fmt: skip
    assert {"mgr_module/perfwatch/common/server/httpserver.py", "mgr_module/perfwatch/common/version.py"} <= set(
        shared_module_files()
    )


@pytest.mark.parametrize(
    ("image", "version"),
    [
        ("quay.io/ceph/ceph:v20.2.4", "20.2.4"),
        ("quay.io/ceph/ceph:v18.2.7-20250101", "18.2.7"),
        ("registry.local:5000/ceph/ceph:19.2.3", "19.2.3"),
        ("quay.io/ceph/ceph:v20", None),
        ("quay.io/ceph/ceph@sha256:abc", None),
    ],
)
def test_the_ceph_version_comes_from_the_base_images_tag(image: str, version: str | None) -> None:
    assert build_image().ceph_version_of_image(image) == version


def test_the_ceph_version_of_a_debian_tree_is_its_ceph_mgr(tmp_path: Path) -> None:
    (tmp_path / "var/lib/dpkg").mkdir(parents=True)
    status = (
        "Package: ceph-mon\nVersion: 1:9.9.9\n\nPackage: ceph-mgr\nStatus: install ok installed\nVersion: 20.2.4+ds-2\n"
    )
    (tmp_path / "var/lib/dpkg/status").write_text(status)
    assert build_image().ceph_version_of_rootfs(tmp_path) == "20.2.4"
    assert build_image().ceph_version_of_rootfs(tmp_path / "none") is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--base", "quay.io/ceph/ceph:latest"], "its tag names no Ceph version"),
        (["--base", "quay.io/ceph/ceph:v20.2.4", "--ceph-version", "20.2"], "Ceph version '20.2': expected X.Y.Z"),
        (["--registry", "Registry.Example.com/ceph;rm"], "not a registry/namespace"),
    ],
)
def test_bad_arguments_are_one_line_errors_before_any_build(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    module = build_image()
    monkeypatch.setattr(module.Buildah, "__call__", lambda *a, **k: pytest.fail("buildah must not run"))
    assert module.main(args) == 1
    assert message in capsys.readouterr().err
