import errno
from pathlib import Path

import pytest

from perfwatch_host_exporter.fsroot import MAX_HOPS, Root


def test_relative_and_absolute_symlinks_stay_inside_the_root(tmp_path: Path) -> None:
    (tmp_path / "dev/disk/by-id").mkdir(parents=True)
    (tmp_path / "dev/sda1").write_text("")
    (tmp_path / "dev/disk/by-id/wwn-1").symlink_to("../../sda1")
    (tmp_path / "osd").mkdir()
    (tmp_path / "osd/block").symlink_to("/dev/disk/by-id/wwn-1")  # absolute: must not escape to the real /dev
    root = Root(str(tmp_path))
    assert root.resolve("/osd/block") == "/dev/sda1"
    assert root.real(root.resolve("/osd/block")) == str(tmp_path / "dev/sda1")


def test_dotdot_applies_after_a_symlinked_directory_and_stops_at_the_root(tmp_path: Path) -> None:
    (tmp_path / "a/b").mkdir(parents=True)
    (tmp_path / "link").symlink_to("a/b")
    root = Root(str(tmp_path))
    assert root.resolve("/link/../c") == "/a/c", "'..' is taken from the link's target, as the kernel does"
    assert root.resolve("/../../x") == "/x"


def test_missing_components_are_kept_for_the_caller_to_report(tmp_path: Path) -> None:
    root = Root(str(tmp_path))
    assert root.resolve("/no/such/file") == "/no/such/file"
    assert not root.exists(root.resolve("/no/such/file"))


def test_a_symlink_loop_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("/a")
    with pytest.raises(OSError) as info:
        Root(str(tmp_path)).resolve("/a")
    assert info.value.errno == errno.ELOOP


def test_a_chain_of_max_hops_resolves_and_one_more_is_refused(tmp_path: Path) -> None:
    for i in range(MAX_HOPS + 1):
        (tmp_path / f"l{i}").symlink_to(f"l{i + 1}")
    (tmp_path / f"l{MAX_HOPS + 1}").write_text("end")
    root = Root(str(tmp_path))
    assert root.resolve("/l1") == f"/l{MAX_HOPS + 1}"  # 40 links
    with pytest.raises(OSError):
        root.resolve("/l0")  # 41


def test_a_view_resolves_absolute_links_in_its_own_root(tmp_path: Path) -> None:
    (tmp_path / "containers/c1/dev").mkdir(parents=True)
    (tmp_path / "containers/c1/dev/target").write_text("inside")
    (tmp_path / "containers/c1/link").symlink_to("/dev/target")
    (tmp_path / "proc/7").mkdir(parents=True)
    (tmp_path / "proc/7/root").symlink_to("../../containers/c1")
    daemon = Root(str(tmp_path)).view("/proc/7/root")
    assert daemon.read_text(daemon.resolve("/link")) == "inside"
