import errno
from pathlib import Path

import pytest

from perfwatch_host_exporter.devices import MAX_DEPTH, DeviceError, DeviceResolver, DeviceRow
from tests.fixtures.exporter.fakehost import FakeHost

OSD = "/var/lib/ceph/osd/ceph-0"


@pytest.fixture
def host(tmp_path: Path) -> FakeHost:
    h = FakeHost(tmp_path / "host")
    h.disk("vda", 254, 0)
    h.disk("sda", 8, 0)
    h.partition("sda", "sda1", 1)
    h.partition("sda", "sda2", 2)
    h.disk("sdb", 8, 16)
    h.partition("sdb", "sdb1", 1)
    h.disk("nvme0n1", 259, 0)
    return h


def rows(host: FakeHost, role: str = "block", path: str = OSD + "/block") -> list[DeviceRow]:
    root = host.root()
    return DeviceResolver(root).rows(root, path, role)


def test_partition_behind_a_by_id_symlink_reports_its_disk(host: FakeHost) -> None:
    host.link("dev/disk/by-id/wwn-0x5000c500a1b2c3d4-part1", "../../sda1")
    host.link(OSD + "/block", "/dev/disk/by-id/wwn-0x5000c500a1b2c3d4-part1")
    assert rows(host) == [DeviceRow("block", "sda", "sda1", "direct")]


def test_loop_device_and_the_disk_under_its_backing_file(host: FakeHost) -> None:
    host.file_on("/srv/osd0.img", "vda")
    host.loop("loop3", 3, "/srv/osd0.img")
    host.link(OSD + "/block", "/dev/loop3")
    assert rows(host) == [DeviceRow("block", "loop3", "", "direct"), DeviceRow("block", "vda", "", "loop")]


def test_a_loop_device_over_another_loop_device_goes_down_to_the_disk(host: FakeHost) -> None:
    host.file_on("/srv/db.img", "vda")
    host.loop("loop2", 2, "/srv/db.img")
    host.loop("loop3", 3, "/dev/loop2")  # stacked: its backing "file" is the lower loop device's node
    host.link(OSD + "/block.db", "/dev/loop3")
    assert rows(host, "db", OSD + "/block.db") == [
        DeviceRow("db", "loop3", "", "direct"),
        DeviceRow("db", "loop2", "", "loop"),
        DeviceRow("db", "vda", "", "loop"),
    ]


def test_a_deleted_backing_file_is_still_followed_by_name(host: FakeHost) -> None:
    host.file_on("/srv/osd0.img", "vda")
    host.loop("loop3", 3, "/srv/osd0.img (deleted)")
    host.link(OSD + "/block", "/dev/loop3")
    assert [r.device for r in rows(host)] == ["loop3", "vda"]


def test_a_backing_file_we_cannot_see_keeps_the_direct_row_and_is_a_problem(host: FakeHost) -> None:
    host.loop("loop4", 4, "/root/hidden/osd0.img")  # gone, or hidden by ProtectHome=yes
    host.link(OSD + "/block", "/dev/loop4")
    resolver = DeviceResolver(host.root())
    found = resolver.rows(host.root(), OSD + "/block", "block")
    assert found == [DeviceRow("block", "loop4", "", "direct")]
    assert len(resolver.problems) == 1 and "/root/hidden/osd0.img" in resolver.problems[0]


def test_symlink_chain_to_dm_and_its_slaves(host: FakeHost) -> None:
    host.dm("dm-1", 1, ["sdb1", "nvme0n1"])
    host.link("dev/mapper/ceph--vg-osd--block", "../dm-1")
    host.link("dev/ceph-vg/osd-block", "/dev/mapper/ceph--vg-osd--block")
    host.link(OSD + "/block.db", "/dev/ceph-vg/osd-block")
    assert rows(host, "db", OSD + "/block.db") == [
        DeviceRow("db", "dm-1", "", "direct"),
        DeviceRow("db", "nvme0n1", "", "dm"),
        DeviceRow("db", "sdb", "sdb1", "dm"),
    ]


def test_md_raid_members_are_via_md(host: FakeHost) -> None:
    host.disk("md0", 9, 0, virtual=True)
    (host.path("sys/devices/virtual/block/md0/slaves")).mkdir()
    host.link("sys/devices/virtual/block/md0/slaves/sda1", "../../../../../" + host.sysdirs["sda1"])
    host.link(OSD + "/block", "/dev/md0")
    assert rows(host) == [DeviceRow("block", "md0", "", "direct"), DeviceRow("block", "sda", "sda1", "md")]


def test_loop_over_a_file_on_lvm_goes_all_the_way_down(host: FakeHost) -> None:
    host.dm("dm-0", 0, ["sda2"])
    host.file_on("/var/lib/images/osd.img", "dm-0")
    host.loop("loop0", 0, "/var/lib/images/osd.img")
    host.link(OSD + "/block", "/dev/loop0")
    assert rows(host) == [
        DeviceRow("block", "loop0", "", "direct"),
        DeviceRow("block", "dm-0", "", "loop"),
        DeviceRow("block", "sda", "sda2", "dm"),
    ]


def test_at_most_four_levels_beneath(host: FakeHost) -> None:
    host.dm("dm-9", 9, ["sda1"])
    for i in range(8, 2, -1):  # dm-3 -> dm-4 -> ... -> dm-9 -> sda1
        host.dm(f"dm-{i}", i, [f"dm-{i + 1}"])
    host.link(OSD + "/block", "/dev/dm-3")
    got = rows(host)
    assert [r.device for r in got] == ["dm-3", "dm-4", "dm-5", "dm-6", "dm-7"]
    assert len(got) == 1 + MAX_DEPTH


def test_bluestore_on_a_regular_file_reports_the_filesystem_device(host: FakeHost) -> None:
    host.file_on(OSD + "/block", "sdb1")
    assert rows(host) == [DeviceRow("block", "sdb", "sdb1", "file")]


def test_a_file_on_an_anonymous_device_gives_no_row(host: FakeHost) -> None:
    host.file_on(OSD + "/block", None)  # tmpfs, overlay: major 0
    assert rows(host) == []


def test_a_device_node_named_differently_is_found_by_its_number(host: FakeHost) -> None:
    host.node("osd0-disk", rel="dev/osd0-disk", devname="sda")  # /sys/class/block/osd0-disk does not exist
    host.link(OSD + "/block", "/dev/osd0-disk")
    assert rows(host) == [DeviceRow("block", "sda", "", "direct")]


def test_a_node_whose_name_is_another_devices_is_found_by_its_number(host: FakeHost) -> None:
    host.node("sdb", rel="containers/c1/dev/sdb", devname="nvme0n1")  # a container's "sdb" is the host's nvme0n1
    host.link("containers/c1" + OSD + "/block", "/dev/sdb")
    host.link("proc/77/root", "../../containers/c1")
    root = host.root()
    daemon_root = root.view("/proc/77/root")
    got = DeviceResolver(root).rows(daemon_root, OSD + "/block", "block")
    assert got == [DeviceRow("block", "nvme0n1", "", "direct")], "absolute links resolve in the daemon's root"


def test_a_symlink_loop_is_an_error(host: FakeHost) -> None:
    host.link("dev/a", "b")
    host.link("dev/b", "/dev/a")
    host.link(OSD + "/block", "/dev/a")
    with pytest.raises(OSError) as info:
        rows(host)
    assert info.value.errno == errno.ELOOP


def test_a_dangling_block_link_is_an_error(host: FakeHost) -> None:
    host.link(OSD + "/block", "/dev/nonexistent")
    with pytest.raises(OSError):
        rows(host)


def test_a_directory_is_neither_device_nor_file(host: FakeHost) -> None:
    (host.path(OSD + "/block")).mkdir(parents=True)
    with pytest.raises(DeviceError):
        rows(host)


def test_the_paths_of_a_multipath_device_are_via_multipath(host: FakeHost) -> None:
    host.dm("dm-2", 2, ["sda", "sdb"])  # two paths to one LUN
    host.write(f"sys/{host.sysdirs['dm-2']}/dm/uuid", "mpath-3600508b400105e210000900000490000\n")
    host.link(OSD + "/block", "/dev/dm-2")
    assert rows(host) == [
        DeviceRow("block", "dm-2", "", "direct"),
        DeviceRow("block", "sda", "", "multipath"),
        DeviceRow("block", "sdb", "", "multipath"),
    ]
