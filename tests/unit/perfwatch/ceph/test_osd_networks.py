"""Each OSD's public and cluster address from the OSD map, with the interface Ceph picked (osd_networks.py)."""

from __future__ import annotations

import pytest

from perfwatch.ceph.osd_networks import OsdNetwork, host_of, networks


def addrvec(*addrs: str) -> dict:
    return {"addrvec": [{"type": t, "addr": a, "nonce": 1234} for t, a in (x.split("|") for x in addrs)]}


def osd(n: int, public: str, cluster: str, up: int = 1) -> dict:
    """An `osds` entry of get('osd_map') as the mgr gives it (addrvecs and the legacy strings)."""
    return {
        "osd": n,
        "up": up,
        "in": 1,
        "public_addrs": addrvec(f"v2|{public}:6800", f"v1|{public}:6801"),
        "cluster_addrs": addrvec(f"v2|{cluster}:6802", f"v1|{cluster}:6803"),
        "public_addr": f"{public}:6801/1234",
        "cluster_addr": f"{cluster}:6803/1234",
    }


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("10.0.0.5:6800", "10.0.0.5"),
        ("10.0.0.5:6801/1234", "10.0.0.5"),
        ("v2:10.0.0.5:6800/1234", "10.0.0.5"),
        ("[2001:db8::0:5]:6800", "2001:db8::5"),
        ("[2001:db8::5]:6801/99", "2001:db8::5"),
        ("-", None),
        ("0.0.0.0:0/0", None),
        ("[::]:0/0", None),
        ("", None),
    ],
)
def test_the_ip_of_every_address_form_ceph_prints(given: str, expected: str | None) -> None:
    assert host_of(given) == expected


def test_public_and_cluster_address_and_iface_of_each_up_osd() -> None:
    osd_map = {"osds": [osd(0, "198.18.0.11", "198.19.0.11"), osd(1, "198.18.0.12", "198.18.0.12"),
                        osd(2, "198.18.0.13", "198.19.0.13", up=0)]}  # fmt: skip
    metadata = {"0": {"front_iface": "eth0", "back_iface": "eth1"}, "1": {"front_iface": "bond0"}}
    assert networks(osd_map, metadata) == [
        OsdNetwork(0, "public", "198.18.0.11", "eth0"),
        OsdNetwork(0, "cluster", "198.19.0.11", "eth1"),
        OsdNetwork(1, "public", "198.18.0.12", "bond0"),
        OsdNetwork(1, "cluster", "198.18.0.12", ""),  # one network for both; no back_iface said
    ]


def test_ipv6_and_the_legacy_strings_alone_are_read() -> None:
    entry = {"osd": 3, "up": 1, "public_addr": "[2001:db8::3]:6801/77", "cluster_addr": "-"}
    v6 = osd(4, "[2001:db8::4]", "[2001:db8:1::4]")
    assert networks({"osds": [entry, v6]}, {}) == [
        OsdNetwork(3, "public", "2001:db8::3", ""),
        OsdNetwork(4, "public", "2001:db8::4", ""),
        OsdNetwork(4, "cluster", "2001:db8:1::4", ""),
    ]


def test_junk_in_the_map_is_skipped_not_a_crash() -> None:
    osd_map = {"osds": [None, {"up": 1}, {"osd": "x", "up": 1}, {"osd": 5, "up": 1, "public_addrs": "junk"},
                        {"osd": 6, "up": 1, "public_addrs": {"addrvec": [None, {"type": "v2"}]}}]}  # fmt: skip
    assert networks(osd_map, {"5": "junk"}) == []
    assert networks({}, {}) == []
