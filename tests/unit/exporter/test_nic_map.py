"""Which device carries each address of a host (nic_map.py): NICs, bonds, VLANs, bridges, address labels,
IPv6. This machine's kernel has no bonding or VLAN driver, so these layouts are built as sysfs trees."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from perfwatch_host_exporter.fsroot import Root
from perfwatch_host_exporter.nic_map import (
    CarriedAddress,
    HeldAddress,
    carried_addresses,
    carriers,
    normalise,
    parse_addresses,
)


class Sysfs:
    def __init__(self, base: Path) -> None:
        self.base = base
        (base / "sys/class/net").mkdir(parents=True)

    def device(self, name: str, *, physical: bool = False, devtype: str = "") -> Path:
        where = "devices/pci0000:00/0000:00:03.0/net" if physical else "devices/virtual/net"
        path = self.base / "sys" / where / name
        path.mkdir(parents=True)
        if physical:
            (path / "device").symlink_to("../../../0000:00:03.0")
        (path / "uevent").write_text(f"{'DEVTYPE=' + devtype + chr(10) if devtype else ''}INTERFACE={name}\n")
        (self.base / "sys/class/net" / name).symlink_to(f"../../{where}/{name}")
        return path

    def lower(self, upper: str, lower: str) -> None:
        (self.base / "sys/class/net" / upper / f"lower_{lower}").symlink_to(f"../{lower}")

    def bond(self, name: str, members: list[str]) -> None:
        path = self.device(name, devtype="bond")
        (path / "bonding").mkdir()
        (path / "bonding/slaves").write_text(" ".join(members) + "\n")
        for member in members:
            self.lower(name, member)

    def bridge(self, name: str, ports: list[str]) -> None:
        path = self.device(name, devtype="bridge")
        (path / "brif").mkdir()
        for port in ports:
            (path / "brif" / port).symlink_to(f"../../{port}/brport")


@pytest.fixture
def sysfs(tmp_path: Path) -> Sysfs:
    return Sysfs(tmp_path)


def ip_json(*links: tuple[str, list[dict]]) -> str:
    return json.dumps([{"ifname": name, "addr_info": infos} for name, infos in links])


def test_addresses_of_devices_and_labels_and_ipv6_are_held_by_their_device() -> None:
    out = ip_json(
        ("lo", [{"family": "inet", "local": "127.0.0.1", "label": "lo"}]),
        ("eth0", [{"family": "inet", "local": "10.0.0.5", "label": "eth0"},
                  {"family": "inet", "local": "10.0.9.5", "label": "eth0:1"},
                  {"family": "inet6", "local": "fe80::1", "scope": "link"},
                  {"family": "inet6", "local": "2001:db8:0:0::5", "scope": "global"}]),
        ("bond0.100", [{"family": "inet", "local": "192.168.100.5"}]),
        ("eth9", []),
    )  # fmt: skip
    assert parse_addresses(out) == [
        HeldAddress("10.0.0.5", "eth0"),
        HeldAddress("10.0.9.5", "eth0"),  # the label eth0:1 is no device: its addresses are eth0's
        HeldAddress("2001:db8::5", "eth0"),
        HeldAddress("192.168.100.5", "bond0.100"),
    ]


@pytest.mark.parametrize(
    ("given", "expected"),
    [("10.0.0.5", "10.0.0.5"), ("[2001:db8::0:5]", "2001:db8::5"), ("[::1]:6800", "::1"), ("-", None), ("", None)],
)
def test_addresses_are_compared_normalised(given: str, expected: str | None) -> None:
    assert normalise(given) == expected


def test_a_nic_carries_itself_and_a_vlan_is_carried_by_the_nic_below(sysfs: Sysfs) -> None:
    sysfs.device("eth0", physical=True)
    sysfs.device("eth0.100", devtype="vlan")
    sysfs.lower("eth0.100", "eth0")
    root = Root(str(sysfs.base))
    assert carriers(root, "eth0") == ["eth0"]
    assert carriers(root, "eth0.100") == ["eth0"]


def test_a_bond_carries_itself_and_its_vlans(sysfs: Sysfs) -> None:
    sysfs.device("ens1f0", physical=True)
    sysfs.device("ens1f1", physical=True)
    sysfs.bond("bond0", ["ens1f0", "ens1f1"])
    sysfs.device("bond0.200", devtype="vlan")
    sysfs.lower("bond0.200", "bond0")
    root = Root(str(sysfs.base))
    assert carriers(root, "bond0") == ["bond0"], "its counters and speed already sum its members"
    assert carriers(root, "bond0.200") == ["bond0"]


def test_a_bridge_is_carried_by_its_physical_ports_not_its_vms_taps(sysfs: Sysfs) -> None:
    sysfs.device("eno1", physical=True)
    sysfs.device("vnet3")
    sysfs.bridge("br0", ["eno1", "vnet3"])
    sysfs.device("vnet4")
    sysfs.bridge("br-internal", ["vnet4"])
    root = Root(str(sysfs.base))
    assert carriers(root, "br0") == ["eno1"]
    assert carriers(root, "br-internal") == ["br-internal"], "no physical port: the bridge itself"


def test_a_veth_in_a_namespace_carries_itself(sysfs: Sysfs) -> None:
    """The lab's hosts: a network namespace whose eth0 is one end of a veth pair."""
    sysfs.device("eth0")
    assert carriers(Root(str(sysfs.base)), "eth0") == ["eth0"]


def test_a_loop_of_lower_links_ends(sysfs: Sysfs) -> None:
    sysfs.device("a", devtype="vlan")
    sysfs.device("b", devtype="vlan")
    sysfs.lower("a", "b")
    sysfs.lower("b", "a")
    assert carriers(Root(str(sysfs.base)), "a") in (["a"], ["b"])


def test_every_address_gets_its_carrier_and_ip_failures_are_errors(sysfs: Sysfs) -> None:
    sysfs.device("eth0", physical=True)
    sysfs.device("eth0.100", devtype="vlan")
    sysfs.lower("eth0.100", "eth0")
    out = ip_json(("eth0", [{"local": "10.0.0.5"}]), ("eth0.100", [{"local": "10.1.0.5"}]))
    root = Root(str(sysfs.base))
    errors: list[str] = []
    assert carried_addresses(root, lambda args: out, errors.append) == [
        CarriedAddress("10.0.0.5", "eth0", "eth0"),
        CarriedAddress("10.1.0.5", "eth0.100", "eth0"),
    ]

    def broken(args: list[str]) -> str:
        raise RuntimeError("ip -j addr show: timed out")

    assert carried_addresses(root, broken, errors.append) == []
    assert carried_addresses(root, lambda args: "not json", errors.append) == []
    assert len(errors) == 2 and errors[0].startswith("ip addr show:")


def test_a_renamed_or_removed_interface_is_followed_at_the_next_collection(sysfs: Sysfs) -> None:
    """Ceph's `ceph osd metadata` iface is what the OSD saw at boot; the exporter asks the host every time."""
    root = Root(str(sysfs.base))
    sysfs.device("eth0", physical=True)
    before = ip_json(("eth0", [{"local": "10.0.0.5"}]))
    assert carried_addresses(root, lambda args: before, print) == [CarriedAddress("10.0.0.5", "eth0", "eth0")]
    (sysfs.base / "sys/class/net/eth0").unlink()  # udev renamed it: same NIC, new name
    sysfs.device("ens3", physical=True)
    after = ip_json(("ens3", [{"local": "10.0.0.5"}]))
    assert carried_addresses(root, lambda args: after, print) == [CarriedAddress("10.0.0.5", "ens3", "ens3")]
    assert carried_addresses(root, lambda args: ip_json(("ens3", [])), print) == []  # the address is gone
