"""Every file the exporter reads goes through a Root: a view of the filesystem under a prefix.

Paths are absolute as seen from inside the view ("/sys/class/block/sda"), mapped under its base directory;
our own resolver follows symlinks and re-roots absolute targets, so a daemon's "/dev/sda" is looked up in its
own root (/proc/PID/root) and unit tests can build a whole fake host in a temporary directory. Only regular
files are opened (a FIFO would block for good, /dev/zero never ends), without following a final symlink and
without blocking, and each read is capped. What is refused raises Refused (an OSError) and is told to
`on_refused(reason, message)` first, so it is counted, never silently dropped.
"""

import errno
import os
import stat
from typing import Callable, List, NamedTuple, Optional

MAX_HOPS = 40  # symlinks followed in one resolution, as the kernel allows; more is a loop
READ_LIMIT = 1 << 20  # bytes read from one file: far above any /proc, /sys or ceph.conf file of a daemon
# /proc/PID/mountinfo lists every mount of the namespace: a Kubernetes node can have thousands
MOUNTINFO_LIMIT = 16 << 20

# Why a file or process was refused: the `reason` label of exporter_refused_total (families.py)
NOT_REGULAR = "not_regular_file"
TOO_LARGE = "too_large"
SYMLINK_LOOP = "symlink_loop"

_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_NOCTTY | os.O_CLOEXEC

OnRefused = Callable[[str, str], None]  # (reason, message)


class Refused(OSError):
    """A file the exporter will not read. `reason` is one of the refusal reasons above."""

    def __init__(self, reason: str, path: str, message: str) -> None:
        super().__init__(errno.EPERM, message, path)
        self.reason = reason

    def __str__(self) -> str:
        return "{}: {}".format(self.filename, self.strerror)


def _ignore(reason: str, message: str) -> None:
    pass


class StatResult(NamedTuple):
    mode: int
    dev: int  # the device of the filesystem that holds the file
    rdev: int  # for a device node: the device it stands for
    uid: int = 0  # the owner


StatFn = Callable[[str], StatResult]


def os_stat(path: str) -> StatResult:
    st = os.stat(path)
    return StatResult(st.st_mode, st.st_dev, st.st_rdev, st.st_uid)


class Root:
    def __init__(self, base: str = "/", stat: StatFn = os_stat, on_refused: Optional[OnRefused] = None) -> None:
        self.base = os.path.abspath(base)
        self._stat = stat
        self.on_refused = on_refused or _ignore

    def real(self, path: str) -> str:
        """The path in the exporter's own filesystem of `path` inside this view (no symlinks followed)."""
        rel = path.lstrip("/")
        return os.path.join(self.base, rel) if rel else self.base

    def reporting_to(self, on_refused: OnRefused) -> "Root":
        """The same view, telling refusals to `on_refused`."""
        return Root(self.base, self._stat, on_refused)

    def view(self, path: str) -> "Root":
        """A view rooted at `path` of this one (e.g. /proc/PID/root: the kernel follows that magic link)."""
        return Root(self.real(path), self._stat, self.on_refused)

    def refuse(self, reason: str, path: str, message: str) -> Refused:
        """Tell on_refused and give the exception to raise."""
        self.on_refused(reason, "{}: {}".format(path, message))
        return Refused(reason, path, message)

    def read_text(self, path: str, limit: int = READ_LIMIT) -> str:
        return self.read_bytes(path, limit).decode("utf-8", "replace")

    def read_bytes(self, path: str, limit: int = READ_LIMIT) -> bytes:
        """The content of the regular file at `path` (a final symlink is not followed: resolve() first),
        at most `limit` bytes. Raises Refused for anything else, OSError when it cannot be read."""
        real = self.real(path)
        before = os.lstat(real)
        if not stat.S_ISREG(before.st_mode):
            raise self.refuse(NOT_REGULAR, path, "not a regular file ({})".format(_kind(before.st_mode)))
        if before.st_size > limit:
            raise self.refuse(TOO_LARGE, path, "{} bytes, more than the {} read".format(before.st_size, limit))
        fd = os.open(real, _OPEN_FLAGS)
        try:
            opened = os.fstat(fd)
            if (opened.st_dev, opened.st_ino) != (before.st_dev, before.st_ino) or not stat.S_ISREG(opened.st_mode):
                raise self.refuse(NOT_REGULAR, path, "replaced while being opened")
            chunks: List[bytes] = []
            got = 0
            while got <= limit:
                chunk = os.read(fd, min(1 << 16, limit + 1 - got))
                if not chunk:
                    break
                chunks.append(chunk)
                got += len(chunk)
        finally:
            os.close(fd)
        if got > limit:  # /proc and /sys files say size 0 or 4096 whatever they hold
            raise self.refuse(TOO_LARGE, path, "more than the {} bytes read".format(limit))
        return b"".join(chunks)

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
                self.on_refused(SYMLINK_LOOP, "{}: symlink loop or more than {} symlinks".format(path, MAX_HOPS))
                raise OSError(errno.ELOOP, "symlink loop or more than {} symlinks".format(MAX_HOPS), path)
            if target.startswith("/"):
                done = []
            pending.extend(reversed(target.split("/")))
        return "/" + "/".join(done)


def read_regular(path: str, limit: int) -> bytes:
    """The exporter's own file at `path` (symlinks followed: an operator's config, a Kubernetes secret),
    when it is a regular file of at most `limit` bytes; OSError (EINVAL or EFBIG) otherwise. Never blocks
    on a FIFO, never opens a device."""
    before = os.stat(path)
    if not stat.S_ISREG(before.st_mode):
        raise OSError(errno.EINVAL, "not a regular file ({})".format(_kind(before.st_mode)), path)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        opened = os.fstat(fd)
        if (opened.st_dev, opened.st_ino) != (before.st_dev, before.st_ino):
            raise OSError(errno.EINVAL, "replaced while being opened", path)
        data = b""
        while len(data) <= limit:
            chunk = os.read(fd, limit + 1 - len(data))
            if not chunk:
                break
            data += chunk
    finally:
        os.close(fd)
    if len(data) > limit:
        raise OSError(errno.EFBIG, "larger than {} bytes".format(limit), path)
    return data


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISLNK, "a symlink"),
    ):
        if test(mode):
            return name
    return "mode {:o}".format(mode)
