"""The rbd kind opens its scratch image with librbd's cache off, and stops before any write when librbd says
the cache is still on. librbd itself is exercised live (tests/cluster/test_benchmarks.py: the OSDs' own
in-flight writes with the mgr tuned to write back at once); here a stand-in for the `rbd` binding records
what the guard asks of it, so each branch of the guard is seen."""

from __future__ import annotations

import sys
import types
from typing import Any, ClassVar

import pytest

from perfwatch.benchmarks.kinds import rbd as rbd_kind


class OldImage:
    """A binding without config_list (before Nautilus): the metadata is set, nothing can be checked."""

    opened: ClassVar[list[OldImage]] = []
    metadata: ClassVar[dict[str, str]] = {}
    cache_value: str | None = "false"  # what config_list reports for rbd_cache (None: not listed)

    def __init__(self, ioctx: Any, name: str) -> None:
        self.closed = False
        OldImage.opened.append(self)

    def metadata_set(self, key: str, value: str) -> None:
        OldImage.metadata[key] = value

    def close(self) -> None:
        self.closed = True


class Image(OldImage):
    def config_list(self) -> list[dict[str, Any]]:
        listed = [{"name": "rbd_cache_size", "value": "33554432", "source": 0}]
        if Image.cache_value is not None:
            listed.append({"name": "rbd_cache", "value": Image.cache_value, "source": 2})
        return listed


@pytest.fixture
def binding(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    module = types.ModuleType("rbd")
    module.Image = Image  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "rbd", module)
    OldImage.opened.clear()
    OldImage.metadata.clear()
    return module


def test_the_cache_is_turned_off_in_the_images_metadata_before_the_image_used_is_opened(
    binding: types.ModuleType,
) -> None:
    image = rbd_kind._open_without_cache(object(), "perfwatch.rbd-1")
    assert Image.metadata == {"conf_rbd_cache": "false"}
    assert len(Image.opened) == 2 and Image.opened[0].closed and image is Image.opened[1] and not image.closed


def test_a_cache_librbd_still_reports_on_stops_the_round_and_closes_the_image(
    binding: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(OldImage, "cache_value", "true")
    with pytest.raises(rbd_kind.CacheNotOff, match=r"rbd_cache=true.*more writes in flight than its queue depth"):
        rbd_kind._open_without_cache(object(), "perfwatch.rbd-1")
    assert all(i.closed for i in Image.opened)


def test_a_binding_that_cannot_list_the_images_options_still_gets_the_metadata(binding: types.ModuleType) -> None:
    binding.Image = OldImage  # type: ignore[attr-defined]
    image = rbd_kind._open_without_cache(object(), "perfwatch.rbd-1")
    assert Image.metadata == {"conf_rbd_cache": "false"} and not image.closed
