"""Loop devices under the lab's OSDs (--backing loop): attach one over an image file, detach it again."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from .config import LabError


def attach(image: Path) -> str:
    """A new loop device over `image` (direct I/O); its path, /dev/loopN."""
    dev = subprocess.run(
        ["losetup", "--find", "--show", "--direct-io=on", str(image)],
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
