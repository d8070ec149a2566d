"""Where the lab's Ceph and perfwatch come from besides the defaults: a filesystem tree given with --rootfs (a
container image's), packages installed with --install into the lab's own layer, and --module-from rootfs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from lab import cephconf, mountns, releases, rootfs
from lab.cli import release_name
from lab.config import LabConfig, LabError
from lab.topology import plan


def deb(tmp_path: Path, name: str = "ceph-mgr-perfwatch_0.1.0_all.deb") -> str:
    path = tmp_path / name
    path.write_bytes(b"!<arch>\n")
    return str(path)


def test_the_holder_overlays_the_rootfs_with_the_labs_layer_before_making_any_mount_point() -> None:
    root, layer, lab = Path("/images/vfs/dir/abc"), Path("/work/lab/rootfs-layer"), Path("/work/lab")
    lines = mountns.holder_script(root, [lab], [], layer).splitlines()
    overlay = f"mount -t overlay overlay -o lowerdir={root},upperdir={layer}/upper,workdir={layer}/work {root}"
    assert lines[0] == overlay  # the mount points below land in the layer, never in the tree given
    assert not any("remount,bind,ro" in line for line in lines)
    assert lines.index(overlay) < lines.index(f"mkdir -p {root}/work/lab")
    assert f"mount --bind /work/lab {root}/work/lab" in lines
    # without a layer: the shared rootfs read-only, no overlay
    plain = mountns.holder_script(root, [lab], []).splitlines()
    assert f"mount -o remount,bind,ro {root}" in plain and not any("overlay" in line for line in plain)


@pytest.mark.parametrize("bad", ["/var/lib/a,b", "/var/lib/a:b", "/var/lib/a\\b"])
def test_paths_an_overlays_options_cannot_hold_are_refused(bad: str) -> None:
    with pytest.raises(LabError, match="cannot be a layer of an overlay"):
        mountns.check_layer(Path("/work/lab/rootfs-layer"), Path(bad))
    with pytest.raises(LabError, match="cannot be a layer of an overlay"):
        mountns.check_layer(Path(bad), Path("/cache/forky"))


@pytest.mark.root
def test_the_overlay_takes_the_labs_writes_and_leaves_the_tree_as_it_was(tmp_path: Path) -> None:
    """The holder's own mount lines, run in a namespace of their own: a file written through the overlay
    lands in the layer; the tree itself is unchanged, outside the namespace and after it."""
    tree, layer = tmp_path / "tree", tmp_path / "layer"
    (tree / "etc").mkdir(parents=True)
    (tree / "etc" / "os-release").write_text("ID=debian\n")
    for sub in ("upper", "work"):
        (layer / sub).mkdir(parents=True)
    overlay = mountns.holder_script(tree, [], [], layer).splitlines()[0]
    script = f"{overlay}\necho installed > {tree}/etc/perfwatch\ncat {tree}/etc/os-release"
    done = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-ec", script], capture_output=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"ID=debian\n"
    assert not (tree / "etc" / "perfwatch").exists()
    assert (layer / "upper" / "etc" / "perfwatch").read_text() == "installed\n"


def test_module_from_rootfs_sets_no_module_path(tmp_path: Path) -> None:
    for source, expected in (("checkout", f"{tmp_path}/mgr-modules"), ("rootfs", None)):
        config = LabConfig(directory=tmp_path, module_from=source)
        text = cephconf.render(config, plan(config), "fsid")
        lines = [line.strip() for line in text.splitlines()]
        found = [line.split("=", 1)[1].strip() for line in lines if line.startswith("mgr module path")]
        assert found == ([expected] if expected else [])


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"module_from": "image"}, "--module-from 'image': must be one of checkout, rootfs"),
        ({"rootfs": "relative/tree"}, "--rootfs relative/tree: not a directory"),
        ({"rootfs": "/nonexistent/tree"}, "--rootfs /nonexistent/tree: not a directory"),
        ({"rootfs": "/"}, "--rootfs /: this machine's own Ceph is --release pacific"),
        ({"install": ("/nonexistent/x.deb",)}, "--install /nonexistent/x.deb: not a Debian package file"),
    ],
)
def test_bad_sources_are_one_line_errors(tmp_path: Path, fields: dict, message: str) -> None:
    with pytest.raises(LabError) as refused:
        LabConfig(directory=tmp_path / "lab", **fields).validate()
    assert message in str(refused.value)


def test_install_takes_only_package_files_with_distinct_names(tmp_path: Path) -> None:
    not_a_deb = tmp_path / "notes.txt"
    not_a_deb.write_text("x")
    with pytest.raises(LabError, match="not a Debian package file"):
        LabConfig(directory=tmp_path / "lab", install=(str(not_a_deb),)).validate()
    (tmp_path / "a").mkdir()
    same = (deb(tmp_path), deb(tmp_path / "a"))
    with pytest.raises(LabError, match="two packages with the same file name"):
        LabConfig(directory=tmp_path / "lab", install=same).validate()
    LabConfig(directory=tmp_path / "lab", install=(deb(tmp_path),)).validate()


def test_the_sources_survive_the_lab_json_round_trip(tmp_path: Path) -> None:
    config = LabConfig(directory=tmp_path, rootfs="/images/x", module_from="rootfs", install=(deb(tmp_path),))
    again = LabConfig.from_json(config.to_json())
    assert again == config and again.own_layer
    assert not LabConfig(directory=tmp_path).own_layer


def fake_tree(tmp_path: Path, dpkg_version: str | None) -> Path:
    tree = tmp_path / "tree"
    (tree / "usr/bin").mkdir(parents=True)
    for tool in rootfs.TOOLS:
        (tree / "usr/bin" / tool).write_text("")
    if dpkg_version:
        (tree / "var/lib/dpkg").mkdir(parents=True)
        status = f"Package: ceph-mon\nStatus: install ok installed\nVersion: {dpkg_version}\n\n"
        (tree / "var/lib/dpkg/status").write_text(status)
    return tree


def test_the_release_of_a_tree_is_the_ceph_it_holds(tmp_path: Path) -> None:
    tree = fake_tree(tmp_path, "20.2.4+ds-2")
    assert rootfs.tree_ceph_version(tree) == "20.2.4+ds-2"
    assert release_name(None, str(tree)) == "tentacle"
    assert release_name("20.2", str(tree)) == "tentacle"
    with pytest.raises(LabError, match=r"holds Ceph 20.2.4\+ds-2 \(tentacle\), not --release reef"):
        release_name("reef", str(tree))
    assert release_name(None, None) == releases.DEFAULT


def test_a_tree_without_ceph_or_of_a_release_the_lab_does_not_run_is_refused(tmp_path: Path) -> None:
    tree = fake_tree(tmp_path, "19.2.3-1")
    with pytest.raises(LabError, match=r"has Ceph 19.2.3-1: the lab runs pacific \(16.2\), reef"):
        release_name(None, str(tree))
    (tree / "usr/bin/ceph-osd").unlink()
    with pytest.raises(LabError, match=r"no Ceph to run there \(missing /usr/bin/ceph-osd"):
        rootfs.tree_ceph_version(tree)
    with pytest.raises(LabError, match="not a directory"):
        release_name(None, str(tmp_path / "none"))
