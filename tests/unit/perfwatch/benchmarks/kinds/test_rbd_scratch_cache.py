"""How the rbd kind makes and opens its scratch image: layering only, its data in the scratch pool, librbd's
cache off in its metadata, and no round under a QoS limit. librbd itself is exercised live
(tests/cluster/test_benchmarks.py: the OSDs' own in-flight writes with the mgr tuned to write back at once;
a QoS limit on the mgr); here a stand-in for the `rbd` binding records what the kind asks of it, so each
branch is seen, also those the lab's librbd cannot show."""

from __future__ import annotations

import sys
import types
from typing import Any, ClassVar

import pytest

from perfwatch.benchmarks.base import BenchError
from perfwatch.benchmarks.kinds import rbd as rbd_kind

LAYERING = 1


class OldImage:
    """A binding without config_list (before Nautilus): the metadata is set, nothing can be checked."""

    opened: ClassVar[list[OldImage]] = []
    metadata: ClassVar[dict[str, str]] = {}
    options: ClassVar[dict[str, str]] = {}  # what config_list reports besides rbd_cache

    def __init__(self, ioctx: Any, name: str) -> None:
        self.closed = False
        OldImage.opened.append(self)

    def metadata_set(self, key: str, value: str) -> None:
        OldImage.metadata[key] = value

    def close(self) -> None:
        self.closed = True


class Image(OldImage):
    def config_list(self) -> list[dict[str, Any]]:
        listed = {"rbd_cache": OldImage.metadata.get("conf_rbd_cache", "true"), "rbd_qos_iops_limit": "0"}
        listed.update(OldImage.options)
        return [{"name": k, "value": v, "source": 0} for k, v in listed.items()]


class RBD:
    created: ClassVar[list[tuple[tuple[Any, ...], dict[str, Any]]]] = []

    def create(self, *args: Any, **kwargs: Any) -> None:
        RBD.created.append((args, kwargs))


@pytest.fixture
def binding(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    module = types.ModuleType("rbd")
    module.Image = Image  # type: ignore[attr-defined]
    module.RBD = RBD  # type: ignore[attr-defined]
    module.RBD_FEATURE_LAYERING = LAYERING  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "rbd", module)
    for held in (OldImage.opened, OldImage.metadata, OldImage.options, RBD.created):
        held.clear()
    return module


def test_the_image_has_only_layering_and_its_data_in_the_scratch_pool(binding: types.ModuleType) -> None:
    rbd_kind._create("ioctx", "perfwatch", "perfwatch.rbd-1", 64 << 20)
    assert RBD.created == [
        (("ioctx", "perfwatch.rbd-1", 64 << 20), {"old_format": False, "features": LAYERING, "data_pool": "perfwatch"})
    ]


def test_the_cache_is_turned_off_in_the_images_metadata_before_the_image_used_is_opened(
    binding: types.ModuleType,
) -> None:
    image = rbd_kind._open_without_cache(object(), "perfwatch", "perfwatch.rbd-1")
    assert OldImage.metadata == {"conf_rbd_cache": "false"}
    assert len(OldImage.opened) == 2 and OldImage.opened[0].closed and image is OldImage.opened[1]
    assert not image.closed


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"rbd_qos_iops_limit": "500"}, "rbd_qos_iops_limit=500"),
        ({"rbd_qos_write_bps_limit": "10485760", "rbd_qos_read_iops_limit": "7"}, "rbd_qos_read_iops_limit=7, "),
    ],
)
def test_a_qos_limit_stops_the_round_naming_it_and_closes_the_image(
    binding: types.ModuleType, options: dict[str, str], named: str
) -> None:
    OldImage.options.update(options)
    with pytest.raises(BenchError, match="a QoS limit applies to the scratch image") as caught:
        rbd_kind._open_without_cache(object(), "perfwatch", "perfwatch.rbd-1")
    assert named in str(caught.value)
    for option in options:
        assert f"`rbd config pool set perfwatch {option} 0`" in str(caught.value)
    assert str(caught.value).endswith("lifts it for pool perfwatch only")
    assert all(i.closed for i in OldImage.opened)


def test_limits_of_0_or_options_of_other_names_stop_nothing() -> None:
    listed = [
        {"name": "rbd_qos_iops_limit", "value": "0"},
        {"name": "rbd_qos_iops_burst", "value": "100"},
        {"name": "rbd_qos_bps_limit", "value": 0},
        {"name": "rbd_cache_size", "value": "33554432"},
    ]
    assert rbd_kind.qos_limits(listed) == {}
    assert rbd_kind.qos_limits([*listed, {"name": "rbd_qos_bps_limit", "value": 1}]) == {"rbd_qos_bps_limit": "1"}


def test_a_binding_that_cannot_list_the_images_options_still_gets_the_metadata(binding: types.ModuleType) -> None:
    binding.Image = OldImage  # type: ignore[attr-defined]
    image = rbd_kind._open_without_cache(object(), "perfwatch", "perfwatch.rbd-1")
    assert OldImage.metadata == {"conf_rbd_cache": "false"} and not image.closed


def test_a_failing_metadata_set_closes_the_image(binding: types.ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: OldImage, key: str, value: str) -> None:
        raise OSError("metadata_set refused")

    monkeypatch.setattr(OldImage, "metadata_set", refuse)
    with pytest.raises(OSError, match="refused"):
        rbd_kind._open_without_cache(object(), "perfwatch", "perfwatch.rbd-1")
    assert len(OldImage.opened) == 1 and OldImage.opened[0].closed
