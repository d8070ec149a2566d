"""Every file the exporter reads goes through a Root: a view of the filesystem under a prefix.

Paths handed to a Root are absolute *as seen from inside the view* ("/sys/class/block/sda"); the Root
maps them under its base directory. Symlinks are followed by our own resolver, which re-roots absolute
targets under the base, so a daemon's "/dev/sda" is looked up in the daemon's own root
(/proc/PID/root) and unit tests can build a whole fake host in a temporary directory.
"""

import errno
import os
from typing import Callable, List, NamedTuple

MAX_HOPS = 40  # symlinks followed in one resolution, as the kernel allows; more is a loop


class StatResult(NamedTuple):
    mode: int
    dev: int  # the device of the filesystem that holds the file
    rdev: int  # for a device node: the device it stands for


StatFn = Callable[[str], StatResult]


def os_stat(path: str) -> StatResult:
    st = os.stat(path)
    return StatResult(st.st_mode, st.st_dev, st.st_rdev)


class Root:
    def __init__(self, base: str = "/", stat: StatFn = os_stat) -> None:
        self.base = os.path.abspath(base)
        self._stat = stat

    def real(self, path: str) -> str:
        """The path in the exporter's own filesystem of `path` inside this view (no symlinks followed)."""
        rel = path.lstrip("/")
        return os.path.join(self.base, rel) if rel else self.base

    def view(self, path: str) -> "Root":
        """A view rooted at `path` of this one (e.g. /proc/PID/root: the kernel follows that magic link)."""
        return Root(self.real(path), self._stat)

    def read_text(self, path: str) -> str:
        with open(self.real(path), encoding="utf-8", errors="replace") as f:
            return f.read()

    def read_bytes(self, path: str) -> bytes:
        with open(self.real(path), "rb") as f:
            return f.read()

    def listdir(self, path: str) -> List[str]:
        return sorted(os.listdir(self.real(path)))

    def exists(self, path: str) -> bool:
        return os.path.exists(self.real(path))

    def lexists(self, path: str) -> bool:
        return os.path.lexists(self.real(path))

    def readlink(self, path: str) -> str:
        return os.readlink(self.real(path))

    def stat(self, path: str) -> StatResult:
        """stat() of the file at `path` (the kernel follows symlinks: resolve() first to stay in the view)."""
        return self._stat(self.real(path))

    def resolve(self, path: str) -> str:
        """`path` with every symlink followed, inside this view. Missing components are kept as they are
        (the caller's open or stat reports them). Raises OSError(ELOOP) after MAX_HOPS symlinks."""
        pending = list(reversed(path.split("/")))  # a stack: the next component is at the end
        done: List[str] = []
        hops = 0
        while pending:
            comp = pending.pop()
            if comp in ("", "."):
                continue
            if comp == "..":
                if done:
                    done.pop()
                continue
            current = "/" + "/".join([*done, comp])
            try:
                target = os.readlink(self.real(current))
            except OSError as exc:
                if exc.errno in (errno.EINVAL, errno.ENOENT, errno.ENOTDIR):  # not a symlink, or missing
                    done.append(comp)
                    continue
                raise
            hops += 1
            if hops > MAX_HOPS:
                raise OSError(errno.ELOOP, "symlink loop or more than {} symlinks".format(MAX_HOPS), path)
            if target.startswith("/"):
                done = []
            pending.extend(reversed(target.split("/")))
        return "/" + "/".join(done)
