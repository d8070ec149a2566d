"""Loop devices under the lab's OSDs (--backing loop): attach one over an image file (or over another loop
device), split it into partitions, say it does not rotate; detach it again."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from .config import LabError


def attach(image: Path, partitions: bool = False) -> str:
    """A new loop device over `image` (a file or a block device; direct I/O); its path, /dev/loopN. With
    `partitions`, the kernel lets it hold partitions (losetup -P)."""
    dev = subprocess.run(
        ["losetup", "--find", "--show", "--direct-io=on", *(["--partscan"] if partitions else []), str(image)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    if dev.returncode != 0:
        raise LabError(f"losetup failed: {dev.stderr.strip()} (try --backing file)")
    return dev.stdout.strip()


def detach(dev: str, image: Path) -> list[str]:
    """Detach a loop device, but only while it is still backed by our image file; the problems met."""
    backing = Path("/sys/block") / Path(dev).name / "loop" / "backing_file"
    if not backing.exists():
        return []
    if Path(backing.read_text().strip()) != image:
        return []  # the kernel reused the number for someone else's file: not ours to touch
    # A device still held open (an OSD's last I/O draining) is only marked for autoclear by
    # `losetup -d`: wait until the kernel really lets it go, and retry once.
    for _attempt in range(2):
        proc = subprocess.run(["losetup", "-d", dev], capture_output=True, text=True, timeout=30)
        deadline = time.monotonic() + 15
        while backing.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        if not backing.exists():
            return []
    return [f"loop device {dev} is still attached to {image}: {proc.stderr.strip() or 'busy'}"]


def add_partitions(dev: str, table: list[tuple[int, int, int]]) -> list[str]:
    """Partitions (number, start sector, sectors) on `dev`, told to the kernel directly (BLKPG, `addpart`):
    no partition table is written, so none needs the kernel's table parsers; the lab adds them again
    whenever it attaches the device. Their paths, /dev/loopNpK, once the kernel shows them."""
    paths = []
    for number, start, sectors in table:
        proc = subprocess.run(["addpart", dev, str(number), str(start), str(sectors)], capture_output=True, text=True,
                              timeout=30)  # fmt: skip
        if proc.returncode != 0:
            raise LabError(f"addpart {dev} {number}: {proc.stderr.strip() or 'failed'}")
        paths.append(f"{dev}p{number}")
    deadline = time.monotonic() + 10
    while not all(Path(p).exists() for p in paths):
        if time.monotonic() > deadline:
            raise LabError(f"partitions {paths} of {dev} did not appear in /dev")
        time.sleep(0.05)
    return paths


def set_rotational(dev: str, rotational: bool) -> None:
    """Whether the device says it rotates (queue/rotational): BlueStore and the host exporter read it."""
    path = Path("/sys/block") / Path(dev).name / "queue" / "rotational"
    try:
        path.write_text("1" if rotational else "0")
    except OSError as exc:
        raise LabError(f"{path}: {exc.strerror or exc}") from exc
