"""OsdMapView: the OSD map read once per epoch, the OSDs' metadata only when an up OSD is new or restarted,
lacks it (at most every METADATA_RETRY s) or it is METADATA_MAX_AGE s old; and what it gives is what
reading the map every cycle gave. The mgr is a stand-in whose get() counts its calls."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from perfwatch.ceph.osd_map_view import METADATA_MAX_AGE, METADATA_RETRY, OsdMapView
from perfwatch.ceph.osd_networks import networks


def entry(osd: int, up: bool = True, up_from: int = 5, host: int = 1) -> dict[str, Any]:
    return {
        "osd": osd,
        "up": 1 if up else 0,
        "up_from": up_from,
        "public_addrs": {"addrvec": [{"type": "v2", "addr": f"10.0.{host}.{osd + 10}:6800/1"}]},
        "cluster_addrs": {"addrvec": [{"type": "v2", "addr": f"10.1.{host}.{osd + 10}:6801/1"}]},
    }


class Mgr:
    def __init__(self, n: int) -> None:
        self.epoch: Any = 10
        self.osd_map: dict[str, Any] = {"epoch": 10, "osds": [entry(i) for i in range(n)]}
        self.metadata: dict[str, Any] = {
            str(i): {"front_iface": "eth0", "back_iface": "eth1", "hostname": "h", "devices": "sda"} for i in range(n)
        }
        self.gets: list[str] = []
        self.now = 1000.0

    def get(self, what: str) -> Any:
        self.gets.append(what)
        return copy.deepcopy(self.osd_map if what == "osd_map" else self.metadata)

    def get_epoch(self) -> int:
        if isinstance(self.epoch, Exception):
            raise self.epoch
        return int(self.epoch)

    def new_epoch(self) -> None:
        self.epoch += 1

    def view(self) -> OsdMapView:
        return OsdMapView(self.get, self.get_epoch, clock=lambda: self.now)

    def reads(self) -> tuple[int, int]:
        return self.gets.count("osd_map"), self.gets.count("osd_metadata")


def test_the_view_gives_what_the_map_read_every_cycle_gives() -> None:
    mgr = Mgr(4)
    mgr.osd_map["osds"][2]["up"] = 0
    view = mgr.view()
    assert view.osds() == [(0, True), (1, True), (2, False), (3, True)]
    assert view.networks() == networks(mgr.osd_map, mgr.metadata)
    assert {r.iface for r in view.networks()} == {"eth0", "eth1"}


def test_the_map_is_read_once_per_epoch_however_often_it_is_asked() -> None:
    mgr = Mgr(3)
    view = mgr.view()
    for _ in range(5):
        view.osds()
        view.networks()
    assert mgr.reads() == (1, 1)
    mgr.new_epoch()
    view.osds()
    view.networks()
    assert mgr.reads() == (2, 1)  # same OSDs, same up_from: the metadata is not read again


def test_an_osd_going_down_shows_at_the_next_epoch() -> None:
    mgr = Mgr(3)
    view = mgr.view()
    view.osds()
    mgr.osd_map["osds"][1]["up"] = 0
    assert view.osds()[1] == (1, True)  # same epoch: the mgr's map has not changed either
    mgr.new_epoch()
    assert view.osds()[1] == (1, False)
    assert {r.osd for r in view.networks()} == {0, 2}
    assert mgr.reads() == (2, 1)


@pytest.mark.parametrize("change", ["restarted", "new"])
def test_a_restarted_or_new_osd_has_its_metadata_read_again(change: str) -> None:
    mgr = Mgr(3)
    view = mgr.view()
    view.networks()
    if change == "restarted":
        mgr.osd_map["osds"][0] = entry(0, up_from=9)
        mgr.metadata["0"]["front_iface"] = "bond0"
    else:
        mgr.osd_map["osds"].append(entry(3))
        mgr.metadata["3"] = {"front_iface": "bond0", "back_iface": "eth1"}
    mgr.new_epoch()
    rows = view.networks()
    assert mgr.reads() == (2, 2)
    assert any(r.iface == "bond0" for r in rows)
    assert rows == networks(mgr.osd_map, mgr.metadata)


def test_an_up_osd_without_metadata_is_looked_for_again_but_not_every_cycle() -> None:
    mgr = Mgr(2)
    del mgr.metadata["1"]  # up in the map before the mgr has its metadata
    view = mgr.view()
    assert {r.iface for r in view.networks() if r.osd == 1} == {""}
    mgr.new_epoch()
    view.networks()
    assert mgr.reads() == (2, 1)  # asked again too soon
    mgr.metadata["1"] = {"front_iface": "eth0", "back_iface": "eth1"}
    mgr.now += METADATA_RETRY
    mgr.new_epoch()
    assert {r.iface for r in view.networks() if r.osd == 1} == {"eth0", "eth1"}
    assert mgr.reads() == (3, 2)


def test_an_up_osd_without_metadata_is_looked_for_again_with_no_new_epoch() -> None:
    mgr = Mgr(2)
    del mgr.metadata["1"]
    view = mgr.view()
    view.networks()
    mgr.metadata["1"] = {"front_iface": "eth0", "back_iface": "eth1"}  # the mgr gets it later, the map unchanged
    mgr.now += METADATA_RETRY - 1
    assert {r.iface for r in view.networks() if r.osd == 1} == {""}
    assert mgr.reads() == (1, 1)
    mgr.now += 1
    assert {r.iface for r in view.networks() if r.osd == 1} == {"eth0", "eth1"}
    assert mgr.reads() == (2, 2)
    mgr.now += METADATA_RETRY
    view.networks()
    assert mgr.reads() == (2, 2), "none lacks it now: nothing read until the next epoch"


def test_the_metadata_and_map_are_read_again_when_old_even_with_no_new_epoch() -> None:
    mgr = Mgr(2)
    view = mgr.view()
    view.networks()
    mgr.metadata["0"]["front_iface"] = "eth9"
    mgr.now += METADATA_MAX_AGE - 1
    view.networks()
    assert mgr.reads() == (1, 1)
    mgr.now += 1
    assert any(r.iface == "eth9" for r in view.networks())
    assert mgr.reads() == (2, 2)


def test_without_an_epoch_the_map_is_read_every_time() -> None:
    mgr = Mgr(2)
    mgr.epoch = RuntimeError("no OSD map yet")
    view = mgr.view()
    view.osds()
    view.osds()
    assert mgr.reads() == (2, 1)


def test_junk_entries_are_skipped_and_only_the_interfaces_of_the_metadata_are_kept() -> None:
    mgr = Mgr(2)
    mgr.osd_map["osds"].extend([{"osd": "x"}, "junk", {"up": 1}])
    mgr.metadata["0"]["front_iface"] = 7  # not text: no interface
    view = mgr.view()
    assert view.osds() == [(0, True), (1, True)]
    assert view._metadata == {"0": {"back_iface": "eth1"}, "1": {"front_iface": "eth0", "back_iface": "eth1"}}


def test_what_the_view_gives_cannot_change_what_it_holds() -> None:
    mgr = Mgr(2)
    view = mgr.view()
    view.osds().clear()
    view.networks().clear()
    assert len(view.osds()) == 2 and len(view.networks()) == 4


def test_an_empty_map_gives_nothing() -> None:
    mgr = Mgr(0)
    mgr.osd_map = {}
    view = mgr.view()
    assert view.osds() == [] and view.networks() == []
