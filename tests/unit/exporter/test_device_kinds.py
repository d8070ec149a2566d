"""The kind of each disk beneath an OSD (device_kind.py), in fake sysfs trees shaped like the kernel's."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfwatch_host_exporter.device_kind import DeviceKind, DeviceKinds, kind_of
from tests.fixtures.exporter.fakehost import FakeHost


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def host(tmp_path: Path) -> FakeHost:
    return FakeHost(tmp_path / "host")


def kinds(host: FakeHost, errors: list[str] | None = None, clock: Clock | None = None) -> DeviceKinds:
    return DeviceKinds(host.root(), (errors if errors is not None else []).append, clock or Clock())


@pytest.mark.parametrize(
    ("name", "transport", "rotational", "expected"),
    [
        ("sda", "sata", "1", DeviceKind("hdd", "1", "sata")),
        ("sdb", "sata", "0", DeviceKind("ssd", "0", "sata")),
        ("sdc", "sas", "1", DeviceKind("hdd", "1", "sas")),
        ("sdd", "sas", "0", DeviceKind("ssd", "0", "sas")),
        ("sde", "usb", "1", DeviceKind("hdd", "1", "scsi")),
        ("nvme0n1", "nvme", "0", DeviceKind("nvme", "0", "nvme")),
        # a virtio disk says it rotates whatever the host has behind it: the kernel's default
        ("vda", "virtio", "1", DeviceKind("unknown", "1", "virtio")),
        ("vdb", "virtio", "0", DeviceKind("ssd", "0", "virtio")),
        ("sdf", "virtio-scsi", "1", DeviceKind("unknown", "1", "virtio")),
    ],
)
def test_kind_from_transport_and_rotational(
    host: FakeHost, name: str, transport: str, rotational: str, expected: DeviceKind
) -> None:
    host.disk(name, 8, 0)
    host.device_kind(name, transport, rotational)
    errors: list[str] = []
    assert kinds(host, errors).kind(name) == expected
    assert errors == []


def test_an_nvme_namespace_under_native_multipath_has_no_pci_path_but_is_nvme(host: FakeHost) -> None:
    host.disk("nvme1n1", 259, 3, virtual=True)  # /sys/devices/virtual/nvme-subsystem/... in reality
    host.device_kind("nvme1n1", None, "0")
    assert kinds(host).kind("nvme1n1") == DeviceKind("nvme", "0", "nvme")


@pytest.mark.parametrize(
    ("controllers", "expected"),
    [
        ({"nvme1": "tcp", "nvme2": "tcp"}, DeviceKind("ssd", "0", "nvme-tcp")),
        ({"nvme1": "rdma"}, DeviceKind("ssd", "0", "nvme-rdma")),
        ({"nvme1": "pcie"}, DeviceKind("nvme", "0", "nvme")),  # a dual-ported local drive
    ],
)
def test_a_namespace_under_native_multipath_takes_its_controllers_transport(
    host: FakeHost, controllers: dict[str, str], expected: DeviceKind
) -> None:
    """Native NVMe multipath: the namespace's `device` is its subsystem (nvme-subsysN, no transport of its
    own); the controllers in it say whether it is reached over a fabric, and so ssd, not local NVMe with its
    2 ms await limit."""
    host.disk("nvme1n1", 259, 3, virtual=True)
    host.device_kind("nvme1n1", None, "0")
    subsys = "sys/devices/virtual/nvme-subsystem/nvme-subsys1"
    host.write(f"{subsys}/model", "Linux\n")
    host.link(f"{subsys}/subsystem", "../../../../class/nvme-subsystem")
    host.path("sys/class/nvme-subsystem").mkdir(parents=True, exist_ok=True)
    for name, transport in controllers.items():
        host.write(f"sys/devices/virtual/nvme-fabrics/ctl/{name}/transport", transport + "\n")
        host.link(f"{subsys}/{name}", f"../../nvme-fabrics/ctl/{name}")
    host.link(f"sys/{host.sysdirs['nvme1n1']}/device", "/" + subsys)
    assert kinds(host).kind("nvme1n1") == expected


def test_a_loop_device_is_unknown_unless_it_says_it_does_not_rotate(host: FakeHost) -> None:
    host.loop("loop0", 0, "/srv/osd0.img")
    host.device_kind("loop0", None, "1")
    host.loop("loop1", 1, "/srv/osd1.img")
    host.device_kind("loop1", None, "0")  # the lab's flash: `echo 0 > queue/rotational`, as BlueStore reads it
    found = kinds(host)
    assert found.kind("loop0") == DeviceKind("unknown", "1", "loop")
    assert found.kind("loop1") == DeviceKind("ssd", "0", "loop")


def test_an_lvm_volume_takes_the_kind_of_the_nvme_beneath_it(host: FakeHost) -> None:
    host.disk("nvme0n1", 259, 0)
    host.device_kind("nvme0n1", "nvme", "0")
    host.partition("nvme0n1", "nvme0n1p1", 1)
    host.dm("dm-0", 0, ["nvme0n1p1"])
    host.device_kind("dm-0", None, "0")
    assert kinds(host).kind("dm-0") == DeviceKind("nvme", "0", "dm")


def test_a_dm_over_members_of_different_kinds_keeps_its_own_flag(host: FakeHost) -> None:
    host.disk("sda", 8, 0)
    host.device_kind("sda", "sata", "1")
    host.disk("nvme0n1", 259, 0)
    host.device_kind("nvme0n1", "nvme", "0")
    host.dm("dm-1", 1, ["sda", "nvme0n1"])  # dm-cache or a VG over both: neither kind is the truth
    host.device_kind("dm-1", None, "1")
    assert kinds(host).kind("dm-1") == DeviceKind("unknown", "1", "dm")


def test_an_md_raid_of_hdds_is_hdd(host: FakeHost) -> None:
    for n, disk in enumerate(("sda", "sdb")):
        host.disk(disk, 8, 16 * n)
        host.device_kind(disk, "sas", "1", n)
    host.disk("md0", 9, 0, virtual=True)
    host.path(f"sys/{host.sysdirs['md0']}/md").mkdir()
    host.path(f"sys/{host.sysdirs['md0']}/slaves").mkdir()
    for disk in ("sda", "sdb"):
        host.link(f"sys/{host.sysdirs['md0']}/slaves/{disk}", "../../../../../" + host.sysdirs[disk])
    host.device_kind("md0", None, "1")
    assert kinds(host).kind("md0") == DeviceKind("hdd", "1", "md")


def test_unreadable_rotational_is_unknown_and_an_error_not_a_crash(host: FakeHost) -> None:
    host.disk("sda", 8, 0)
    host.device_kind("sda", "sata", None)
    errors: list[str] = []
    assert kinds(host, errors).kind("sda") == DeviceKind("unknown", "", "sata")
    assert len(errors) == 1 and "sda" in errors[0] and "rotational" in errors[0]


def test_garbage_in_rotational_is_unknown_and_an_error(host: FakeHost) -> None:
    host.disk("sda", 8, 0)
    host.device_kind("sda", "sata", "banana")
    errors: list[str] = []
    assert kinds(host, errors).kind("sda").kind == "unknown"
    assert len(errors) == 1 and "unexpected" in errors[0]


def test_a_disk_sysfs_does_not_list_is_unknown_and_an_error(host: FakeHost) -> None:
    errors: list[str] = []
    assert kinds(host, errors).kind("sdz") == DeviceKind("unknown", "", "unknown")
    assert len(errors) == 1 and "sdz" in errors[0]


@pytest.mark.parametrize("name", ["", "..", "../../etc", "a/b"])
def test_a_name_that_is_no_device_name_is_refused(host: FakeHost, name: str) -> None:
    errors: list[str] = []
    assert kinds(host, errors).kind(name).kind == "unknown"
    assert len(errors) == 1 and "not a device name" in errors[0]


def test_the_kind_is_cached_a_minute_then_read_again(host: FakeHost) -> None:
    host.disk("sda", 8, 0)
    host.device_kind("sda", "sata", "1")
    clock = Clock()
    found = kinds(host, clock=clock)
    assert found.kind("sda").kind == "hdd"
    host.write(f"sys/{host.sysdirs['sda']}/queue/rotational", "0\n")  # the disk was swapped for an SSD
    clock.now += 59
    assert found.kind("sda").kind == "hdd"
    clock.now += 2
    assert found.kind("sda").kind == "ssd"


def test_disks_no_osd_uses_any_more_are_forgotten(host: FakeHost) -> None:
    host.disk("sda", 8, 0)
    host.device_kind("sda", "sata", "1")
    found = kinds(host)
    found.kind("sda")
    found.keep_only([])
    assert found._cache == {}


def test_kind_of_is_the_table_of_the_docstring() -> None:
    assert kind_of("nvme", "1") == "hdd"
    assert kind_of("nvme", "") == "nvme"
    assert kind_of("dm", "0") == "ssd"
    assert kind_of("scsi", "") == "unknown"
    assert kind_of("virtual", "1") == "unknown"


def test_a_multipath_device_is_judged_itself_and_takes_its_paths_kind(host: FakeHost) -> None:
    for n, path in enumerate(("sda", "sdb")):
        host.disk(path, 8, 16 * n)
        host.device_kind(path, "sas", "1", n)
    host.dm("dm-2", 2, ["sda", "sdb"])
    host.write(f"sys/{host.sysdirs['dm-2']}/dm/uuid", "mpath-3600508b400105e210000900000490000\n")
    assert kinds(host).kind("dm-2") == DeviceKind("hdd", "1", "multipath")


@pytest.mark.parametrize(
    ("attributes", "expected"),
    [
        ({"transport": "pcie", "model": "INTEL SSDPE2KX040T8"}, DeviceKind("nvme", "0", "nvme")),
        ({"transport": "tcp", "model": "Linux"}, DeviceKind("ssd", "0", "nvme-tcp")),
        ({"transport": "rdma"}, DeviceKind("ssd", "0", "nvme-rdma")),
        ({"transport": "pcie", "model": "Amazon Elastic Block Store"}, DeviceKind("ssd", "0", "nvme-cloud")),
        ({"model": "nvme_card-pd"}, DeviceKind("ssd", "0", "nvme-cloud")),
    ],
)
def test_nvme_over_a_network_or_a_cloud_volume_is_ssd(
    host: FakeHost, attributes: dict[str, str], expected: DeviceKind
) -> None:
    host.disk("nvme0n1", 259, 0)
    host.device_kind("nvme0n1", "nvme", "0")
    for name, value in attributes.items():
        host.write(f"sys/devices/pci0000:00/0000:00:04.0/nvme/nvme0/{name}", value + "\n")
    assert kinds(host).kind("nvme0n1") == expected
