"""A cgroup-v1 block-I/O bandwidth limit on one process and one device, for tests; always undone."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

BLKIO = Path("/sys/fs/cgroup/blkio")


def device_numbers(dev: str) -> str:
    """'/dev/loop3' -> '7:3' (what blkio.throttle.* files take)."""
    st = os.stat(dev)
    return f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"


@contextlib.contextmanager
def write_bps_limit(pid: int, dev: str, bytes_per_second: int, name: str) -> Iterator[Path]:
    group = BLKIO / name
    group.mkdir(exist_ok=True)
    numbers = device_numbers(dev)
    try:
        (group / "blkio.throttle.write_bps_device").write_text(f"{numbers} {bytes_per_second}\n")
        (group / "cgroup.procs").write_text(f"{pid}\n")  # moves every thread of the process
        yield group
    finally:
        with contextlib.suppress(OSError):
            (group / "blkio.throttle.write_bps_device").write_text(f"{numbers} 0\n")
        with contextlib.suppress(OSError):
            for task in (group / "cgroup.procs").read_text().split():
                (BLKIO / "cgroup.procs").write_text(f"{task}\n")
        with contextlib.suppress(OSError):
            group.rmdir()
