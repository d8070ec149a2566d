"""The lab's OSD devices on the machine: attach the loop devices layout.py plans (recorded in the state as
soon as each exists), split them, link each OSD's block and block.db; detach them all again."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from . import layout, loopdev
from .config import LabConfig
from .state import LabState
from .topology import Topology

ROLE_LINKS = {"block": "block", "db": "block.db"}


def image(directory: Path, key: str) -> Path:
    """The sparse file under a device: osd.N.img for an OSD's own (the classic layout), else <key>.img."""
    name = f"osd.{key}.img" if key.isdigit() else f"{key}.img"
    return directory / "devices" / name


def attach_all(
    config: LabConfig, topo: Topology, state: LabState, save: Callable[[], None]
) -> dict[int, dict[str, str]]:
    """Every planned device attached, split and marked; each OSD's device path per role (block, db)."""
    paths: dict[int, dict[str, str]] = {}
    for device in layout.plan(config, topo):
        top = _attach(config.directory, device, state, save)
        # always: kernels before 6.11 take a loop device over a block device for one that does not rotate
        loopdev.set_rotational(top, device.rotational)
        if device.partitioned:
            partitions = loopdev.add_partitions(top, layout.partition_table(device.parts))
            by_number = dict(zip(sorted(p.number for p in device.parts), partitions, strict=True))
            for part in device.parts:
                paths.setdefault(part.osd_id, {})[part.role] = by_number[part.number]
        else:
            for part in device.parts:
                paths.setdefault(part.osd_id, {})[part.role] = top
    return paths


def _attach(directory: Path, device: layout.Device, state: LabState, save: Callable[[], None]) -> str:
    """The device's image, its loop device (and the one beneath it when stacked); the top one's path."""
    path = image(directory, device.key)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        fh.truncate(layout.image_size(device))
    backing = path
    if device.stacked:
        lower = loopdev.attach(path)
        state.loops[layout.lower_key(device.key)] = lower
        save()
        backing = Path(lower)
    top = loopdev.attach(backing, partitions=device.partitioned)
    state.loops[device.key] = top
    save()
    return top


def link(data: Path, roles: dict[str, str]) -> None:
    """An OSD's data folder's block (and block.db) links to its devices, before its mkfs."""
    for role, dev in roles.items():
        (data / ROLE_LINKS[role]).symlink_to(dev)


def detach_all(directory: Path, state: LabState) -> list[str]:
    """Detach every loop device the state records, upper ones before the ones beneath them; the problems."""
    problems: list[str] = []
    # upper devices first: the state file keeps its keys sorted, not in the order they were attached
    keys = sorted(state.loops, key=lambda k: (layout.lower_key(k) not in state.loops, k))
    for key in keys:
        lower = state.loops.get(layout.lower_key(key))
        if lower is not None:  # a stacked device, over the loop device beneath it
            backing = Path(lower)
        elif key.endswith(layout.LOWER_SUFFIX):  # the one beneath, over the image of the device it carries
            backing = image(directory, key[: -len(layout.LOWER_SUFFIX)])
        else:
            backing = image(directory, key)
        problems += loopdev.detach(state.loops[key], backing)
    return problems
