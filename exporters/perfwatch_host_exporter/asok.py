"""The Ceph admin socket protocol, and where a daemon's socket is.

Protocol: connect to the AF_UNIX stream socket, send the JSON command followed by a NUL byte, read a
4-byte big-endian length, then that many bytes of reply. A failed command answers with text that
starts "ERROR:" (Pacific: "ERROR: (22) Invalid argument\\nunknown command prefix ...").
"""

import contextlib
import json
import os
import socket
import struct
import time
from typing import Any, Callable, Dict, FrozenSet, Iterator, List, NamedTuple, Optional, Tuple

from .identity import Identity


class Listener(NamedTuple):
    """Who must listen on a daemon's socket: the daemon's process, as a trusted user."""

    pid: int
    uids: FrozenSet[int]


# (socket path, command, timeout, who must be listening or None) -> the JSON reply
AsokCall = Callable[[str, Dict[str, Any], float, Optional[Listener]], Any]
AsokListener = Callable[[str, float], Tuple[int, int]]  # (path, timeout) -> (pid, uid) of its listener

UNTRUSTED_SOCKET = "untrusted_socket"  # a refusal reason (families.REFUSAL_REASONS)

MAX_REPLY = 64 << 20  # a perf dump is well under a megabyte
_SUN_PATH_MAX = 107  # sockaddr_un.sun_path holds 108 bytes with the NUL


def config_get(var: str) -> Dict[str, Any]:
    return {"prefix": "config get", "var": var, "format": "json"}


class AsokError(Exception):
    pass


class AsokTimeout(AsokError):
    """No whole reply within the timeout."""


class AsokDecode(AsokError):
    """A whole reply that is not JSON (or nested past what the decoder can hold): counted as decode."""


class UntrustedSocket(AsokError):
    """The socket's listener runs as a user that is not trusted: nothing was sent to it."""


def _connect(sock: socket.socket, path: str) -> None:
    if len(os.fsencode(path)) <= _SUN_PATH_MAX:
        sock.connect(path)
        return
    # Too long for sun_path (/proc/PID/root/... adds up): connect through an O_PATH descriptor instead.
    fd = os.open(path, os.O_PATH)
    try:
        sock.connect("/proc/self/fd/{}".format(fd))
    finally:
        os.close(fd)


def _recv_exact(sock: socket.socket, size: int, deadline: float) -> bytes:
    chunks: List[bytes] = []
    got = 0
    while got < size:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AsokTimeout("timed out")
        sock.settimeout(remaining)
        chunk = sock.recv(min(size - got, 1 << 20))
        if not chunk:
            raise AsokError("connection closed after {} of {} bytes".format(got, size))
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def peer_creds(sock: socket.socket) -> Tuple[int, int]:
    """(pid, uid) of the process that listens on a connected unix socket (SO_PEERCRED, as the kernel
    recorded them when it listened: in our namespaces, pid 0 when it has no PID in ours)."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, _gid = struct.unpack("3i", creds)
    return int(pid), int(uid)


def check_listener(path: str, pid: int, uid: int, expected: Listener) -> None:
    """Raises UntrustedSocket when the listener's user is not trusted, AsokError when it is another
    process than the daemon (a socket found by name may be another cluster's daemon of the same name,
    or a stale one). A listener with no PID in our namespace (pid 0) is judged by its user alone."""
    if uid not in expected.uids:
        raise UntrustedSocket("{} is listened on by uid {}, not a Ceph daemon's user".format(path, uid))
    if pid not in (0, expected.pid):
        raise AsokError("{} belongs to pid {}, not {}".format(path, pid, expected.pid))


@contextlib.contextmanager
def _connected(path: str, timeout: float) -> Iterator[socket.socket]:
    """A socket connected to `path`, closed after; a timeout is AsokTimeout, any other OSError AsokError."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        _connect(sock, path)
        yield sock
    except socket.timeout:
        raise AsokTimeout("timed out") from None
    except BlockingIOError:  # EAGAIN on connect: its listen backlog is full (Ceph's is 5), nobody accepts
        raise AsokTimeout("not accepting connections (its listen backlog is full)") from None
    except OSError as exc:
        raise AsokError("{}: {}".format(path, exc.strerror or exc)) from None
    finally:
        sock.close()


def listener(path: str, timeout: float) -> Tuple[int, int]:
    """(pid, uid) of the process that listens on the socket at `path` (pid 0: none in our namespace);
    nothing is sent. Raises AsokError."""
    with _connected(path, timeout) as sock:
        return peer_creds(sock)


def call(path: str, command: Dict[str, Any], timeout: float, expected: Optional[Listener] = None) -> Any:
    """Send one command; the decoded JSON reply. Raises AsokError (timeouts, errors, bad replies).

    With `expected`, nothing is sent unless the listener is that process and a trusted user
    (check_listener)."""
    deadline = time.monotonic() + timeout
    with _connected(path, timeout) as sock:
        if expected is not None:
            check_listener(path, *peer_creds(sock), expected)
        sock.sendall(json.dumps(command).encode("utf-8") + b"\0")
        (length,) = struct.unpack(">I", _recv_exact(sock, 4, deadline))
        if length > MAX_REPLY:
            raise AsokError("reply of {} bytes is too large".format(length))
        body = _recv_exact(sock, length, deadline)
    return decode_reply(body)


def decode_reply(body: bytes) -> Any:
    """A reply's body decoded: AsokError for Ceph's "ERROR:" text, AsokDecode for what is not JSON."""
    text = body.decode("utf-8", "replace")
    if text.startswith("ERROR:"):
        raise AsokError(" ".join(text.split()))
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: a reply nested thousands of levels deep
        raise AsokDecode("reply is not JSON: {!r}".format(text[:80])) from None


def candidates(ident: Identity, asok_dirs: List[str], fsid: str = "") -> List[Tuple[str, str]]:
    """Where the daemon's socket may be, in order, as (view, path): view "daemon" is the daemon's own
    root (/proc/PID/root), "host" is the exporter's. --admin-socket from the daemon's argv first, then
    Ceph's default /var/run/ceph/$cluster-$name.asok, then each --asok-dir of the exporter. With the
    daemon's fsid known, cephadm's host layout too: /var/run/ceph/<fsid>/$cluster-$name.asok (bind-mounted
    as the container's /var/run/ceph; the way in when the daemon's root cannot be read), and <fsid>/
    under each --asok-dir (an --asok-dir of /var/run/ceph on a cephadm host)."""
    name = "{}-{}.asok".format(ident.cluster, ident.entity)
    found: List[Tuple[str, str]] = []
    if ident.admin_socket:
        found.append(("daemon", ident.admin_socket))
    found.append(("daemon", "/var/run/ceph/" + name))
    if fsid:
        found.append(("host", "/var/run/ceph/{}/{}".format(fsid, name)))
    for directory in asok_dirs:
        found.append(("host", os.path.join(directory, name)))
        if fsid:
            found.append(("host", os.path.join(directory, fsid, name)))
    unique: List[Tuple[str, str]] = []
    for candidate in found:
        if candidate not in unique:
            unique.append(candidate)
    return unique
