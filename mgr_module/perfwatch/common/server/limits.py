"""The server's bounds (Limits) and the connection cap they give within the process's fd limit."""

from typing import NamedTuple, Optional

try:
    import resource
except ImportError:  # pragma: no cover - not on Unix
    resource = None  # type: ignore[assignment]


class Limits(NamedTuple):
    max_connections: int = 1024  # open at once; the oldest idle ones are dropped beyond (see fd_share)
    fd_share: float = 0.25  # and never more than this share of the process's file-descriptor limit
    head_timeout: float = 10.0  # seconds from accept to a complete request head
    head_bytes: int = 8192  # a longer head is answered 431
    workers: int = 4  # threads that call the app
    queue_timeout: float = 10.0  # a request that waited longer for a worker is answered 503
    write_timeout: float = 20.0  # seconds to write a response out
    max_writing: int = 32  # responses being written at once; the oldest is dropped beyond
    linger: float = 2.0  # after a response, seconds to read and discard what the client still sends


def fd_limit() -> Optional[int]:
    """The soft limit on open files, or None when there is none (or no way to read it)."""
    if resource is None:
        return None
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return None if soft == resource.RLIM_INFINITY else int(soft)


def connection_cap(limits: Limits, fd_limit: Optional[int]) -> int:
    """How many connections may be open at once: the configured cap, within a share of the fd limit."""
    if fd_limit is None:
        return limits.max_connections
    return max(8, min(limits.max_connections, int(fd_limit * limits.fd_share)))
