"""The HTTP server of the module's endpoint and of the host exporter: one that idle or slow clients
cannot starve.

One thread runs a selectors loop that does all the socket I/O without blocking: it accepts, reads
request heads (each within a deadline and a size cap), and writes responses (each within a deadline).
Only complete requests reach the small pool of worker threads, which call the app and hand the bytes
back to the loop. So a client that connects and sends nothing, sends half a head, or never reads its
response holds a socket and a few kilobytes until its deadline, never a thread. Open connections are
capped (the oldest idle ones are dropped to make room), and so are responses being written.
Every response closes its connection (Prometheus opens a new one per scrape; that is cheap).
"""

import collections
import contextlib
import errno
import logging
import queue
import selectors
import socket
import threading
import time
from typing import Any, Deque, Dict, List, NamedTuple, Optional, Tuple

from . import httpwire
from .web import App, Response

try:
    import resource
except ImportError:  # pragma: no cover - not on Unix
    resource = None  # type: ignore[assignment]

SERVER_NAME = "ceph-perfwatch"


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


# connection states
_HEAD = "head"  # reading the request head (idle or slow clients wait here, in the loop only)
_WORK = "work"  # a worker owns the request; the loop leaves the socket alone
_WRITE = "write"  # the loop writes the response
_LINGER = "linger"  # response sent and write side shut; draining until the client closes

_ACCEPT_BATCH = 64
_TICK = 0.25  # seconds between deadline sweeps
_WARNING_INTERVAL = 60.0


class _Conn:
    __slots__ = ("deadline", "head", "out", "peer", "sock", "state")

    def __init__(self, sock: socket.socket, peer: Any, deadline: float) -> None:
        self.sock = sock
        self.peer = peer
        self.state = _HEAD
        self.head = bytearray()
        self.out: List[memoryview] = []
        self.deadline = deadline


class _Job(NamedTuple):
    conn: _Conn
    request: httpwire.Request
    queued_at: float


def _fd_limit() -> Optional[int]:
    if resource is None:
        return None
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return None if soft == resource.RLIM_INFINITY else int(soft)


def connection_cap(limits: Limits, fd_limit: Optional[int]) -> int:
    """How many connections may be open at once: the configured cap, within a share of the fd limit."""
    if fd_limit is None:
        return limits.max_connections
    return max(8, min(limits.max_connections, int(fd_limit * limits.fd_share)))


def encode(resp: Response, head_only: bool, now: Optional[float] = None) -> List[bytes]:
    """The response as bytes to send: head, then body unless head_only (HEAD gets GET's fields)."""
    headers = {"Content-Type": resp.content_type, "Content-Length": str(len(resp.body))}
    headers.update(resp.headers)
    head = httpwire.response_head(resp.status, headers, SERVER_NAME, now)
    return [head] if head_only or not resp.body else [head, resp.body]


def _error(status: int, head_only: bool = False) -> List[bytes]:
    body = "{} {}\n".format(status, httpwire.reason(status)).encode("utf-8")
    return encode(Response(status, "text/plain; charset=utf-8", body, {}), head_only)


class _Loop:
    """The listening socket, the connections, the selectors loop and the worker pool."""

    def __init__(self, sock: socket.socket, app: App, log: logging.Logger, limits: Limits) -> None:
        self.sock = sock
        self.server_address: Tuple[Any, ...] = sock.getsockname()
        self.app = app
        self.log = log
        self.limits = limits
        self.cap = connection_cap(limits, _fd_limit())
        self.stats: Dict[str, int] = collections.Counter()
        self._sel = selectors.DefaultSelector()
        self._conns: Dict[_Conn, None] = collections.OrderedDict()  # oldest first
        self._writing = 0
        self._jobs: "queue.Queue[Optional[_Job]]" = queue.Queue()  # noqa: UP037 (3.6: Queue is no generic)
        self._done: Deque[Tuple[_Job, List[bytes]]] = collections.deque()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._stopping = False
        self._accept_paused_until = 0.0
        self._last_warning = -_WARNING_INTERVAL
        self._threads: List[threading.Thread] = []

    # -- threads

    def start(self, name: str) -> None:
        self.sock.setblocking(False)
        self._sel.register(self.sock, selectors.EVENT_READ, None)
        self._sel.register(self._wake_r, selectors.EVENT_READ, None)
        loop = threading.Thread(target=self._run, name=name, daemon=True)
        self._threads.append(loop)
        for i in range(self.limits.workers):
            self._threads.append(threading.Thread(target=self._work, name="{}-{}".format(name, i), daemon=True))
        for thread in self._threads:
            thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Close everything; returns once the loop has exited (a worker inside the app is not waited for)."""
        self._stopping = True
        self._wake()
        for _ in range(self.limits.workers):
            self._jobs.put(None)
        if self._threads:
            self._threads[0].join(timeout)

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # full: the loop wakes anyway; closed: it has stopped
            self._wake_w.send(b"\0")

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None or self._stopping:
                return
            head_only = job.request.method == "HEAD"
            if time.monotonic() - job.queued_at > self.limits.queue_timeout:
                data = _error(503, head_only)
            else:
                accepts_gzip = httpwire.accepts_gzip(job.request.headers.get("accept-encoding"))
                try:
                    data = encode(self.app(job.request.target, accepts_gzip), head_only)
                except Exception:
                    self.log.exception("error answering %s", job.request.target)
                    data = _error(500, head_only)
            self._done.append((job, data))
            self._wake()

    # -- the loop

    def _run(self) -> None:
        next_sweep = time.monotonic() + _TICK
        try:
            while not self._stopping:
                for key, _ in self._sel.select(_TICK):
                    if key.fileobj is self.sock:
                        self._accept()
                    elif key.fileobj is self._wake_r:
                        self._drain_wake()
                    else:
                        self._on_event(key.data)
                self._take_results()
                now = time.monotonic()
                if now >= next_sweep:
                    self._sweep(now)
                    next_sweep = now + _TICK
        except Exception:
            self.log.exception("http server loop failed")
        finally:
            self._close_all()

    def _drain_wake(self) -> None:
        try:
            while self._wake_r.recv(4096):
                pass
        except OSError:
            pass

    def _accept(self) -> None:
        for _ in range(_ACCEPT_BATCH):
            try:
                sock, peer = self.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                if exc.errno in (errno.ECONNABORTED, errno.EPROTO):
                    continue
                self._cannot_accept(exc)
                return
            self.stats["accepted"] += 1
            if len(self._conns) >= self.cap and not self._drop_oldest_idle():
                self.stats["refused"] += 1
                sock.close()
                continue
            sock.setblocking(False)
            conn = _Conn(sock, peer, time.monotonic() + self.limits.head_timeout)
            self._conns[conn] = None
            self._sel.register(sock, selectors.EVENT_READ, conn)

    def _cannot_accept(self, exc: OSError) -> None:
        """Out of file descriptors (or another accept error): make room, or stop accepting for a tick."""
        self.stats["accept_errors"] += 1
        self._warn("http: cannot accept a connection: {}".format(exc))
        if exc.errno in (errno.EMFILE, errno.ENFILE) and self._drop_oldest_idle():
            return
        self._sel.unregister(self.sock)
        self._accept_paused_until = time.monotonic() + _TICK

    def _warn(self, message: str) -> None:
        """A warning at most once a minute: a flood of bad clients must not flood the log."""
        now = time.monotonic()
        if now - self._last_warning >= _WARNING_INTERVAL:
            self._last_warning = now
            self.log.warning("%s", message)

    def _drop_oldest_idle(self) -> bool:
        """Close the oldest connection that is waiting on its client (head or linger); False if none."""
        for conn in self._conns:
            if conn.state in (_HEAD, _LINGER):
                if conn.state == _HEAD:
                    self.stats["dropped_idle"] += 1
                self._close(conn)
                self._warn("http: {} connections open (the cap); dropping the oldest idle ones".format(self.cap))
                return True
        return False

    def _on_event(self, conn: _Conn) -> None:
        try:
            if conn.state == _HEAD:
                self._read_head(conn)
            elif conn.state == _WRITE:
                self._flush(conn)
            elif conn.state == _LINGER:
                self._discard(conn)
        except Exception:  # a bug costs this connection, not the server
            self.log.exception("http: error on a connection from %s", conn.peer)
            if conn in self._conns:
                self._close(conn)

    def _read_head(self, conn: _Conn) -> None:
        room = self.limits.head_bytes - len(conn.head) + 1
        try:
            data = conn.sock.recv(min(4096, room))
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._close(conn)
            return
        if not data:
            self._close(conn)
            return
        searched = max(0, len(conn.head) - 3)
        conn.head += data
        end = httpwire.head_end(bytes(conn.head), searched)
        if end < 0:
            if len(conn.head) > self.limits.head_bytes:
                self.stats["too_large"] += 1
                self._respond(conn, _error(431))
            return
        try:
            request = httpwire.parse_head(bytes(conn.head[:end]))
        except httpwire.BadRequest as exc:
            self.stats["bad_request"] += 1
            self._respond(conn, _error(exc.status))
            return
        if request.method not in ("GET", "HEAD"):
            self.stats["bad_request"] += 1
            self._respond(conn, _error(501))
            return
        conn.head = bytearray()
        conn.state = _WORK
        self._sel.unregister(conn.sock)
        self._jobs.put(_Job(conn, request, time.monotonic()))

    def _take_results(self) -> None:
        while self._done:
            job, data = self._done.popleft()
            conn = job.conn
            if conn not in self._conns:
                continue
            self.stats["served"] += 1
            self.log.debug("http: %s %s %s", conn.peer, job.request.method, job.request.target)
            self._respond(conn, data, registered=False)

    def _respond(self, conn: _Conn, data: List[bytes], registered: bool = True) -> None:
        """Start writing data on conn; the loop finishes it. registered: conn is in the selector."""
        conn.state = _WRITE
        conn.out = [memoryview(part) for part in data]
        conn.deadline = time.monotonic() + self.limits.write_timeout
        self._writing += 1
        if registered:
            self._sel.modify(conn.sock, selectors.EVENT_WRITE, conn)
        else:
            self._sel.register(conn.sock, selectors.EVENT_WRITE, conn)
        if self._writing > self.limits.max_writing:
            oldest = next(c for c in self._conns if c.state == _WRITE and c is not conn)
            self.stats["dropped_writing"] += 1
            self._close(oldest)
        if conn in self._conns:
            self._flush(conn)

    def _flush(self, conn: _Conn) -> None:
        try:
            while conn.out:
                sent = conn.sock.send(conn.out[0])
                if sent < len(conn.out[0]):
                    conn.out[0] = conn.out[0][sent:]
                    return
                conn.out.pop(0)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._close(conn)
            return
        self._writing -= 1
        try:
            conn.sock.shutdown(socket.SHUT_WR)
        except OSError:
            self._close(conn)
            return
        conn.state = _LINGER
        conn.deadline = time.monotonic() + self.limits.linger
        self._sel.modify(conn.sock, selectors.EVENT_READ, conn)

    def _discard(self, conn: _Conn) -> None:
        try:
            data = conn.sock.recv(4096)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self._close(conn)

    def _sweep(self, now: float) -> None:
        if self._accept_paused_until and now >= self._accept_paused_until:
            self._accept_paused_until = 0.0
            self._sel.register(self.sock, selectors.EVENT_READ, None)
        for conn in [c for c in self._conns if c.state != _WORK and now >= c.deadline]:
            self.stats[conn.state + "_timeouts"] += 1
            self._close(conn)

    def _close(self, conn: _Conn) -> None:
        self._conns.pop(conn, None)
        if conn.state == _WRITE:
            self._writing -= 1
        if conn.state != _WORK:
            with contextlib.suppress(KeyError, ValueError):
                self._sel.unregister(conn.sock)
        conn.out = []
        conn.head = bytearray()
        conn.sock.close()

    def _close_all(self) -> None:
        for conn in list(self._conns):
            self._close(conn)
        self._sel.close()
        for sock in (self.sock, self._wake_r, self._wake_w):
            sock.close()


def _listen(addr: str, port: int, backlog: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if addr == "::":
            with contextlib.suppress(OSError):  # both stacks on "::", whatever net.ipv6.bindv6only says
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.bind((addr, port))
        sock.listen(backlog)
    except BaseException:
        sock.close()
        raise
    return sock


class HttpServer:
    """Serves app on addr:port in background threads: HttpServer(app, addr, port, log).start() / .stop()."""

    def __init__(
        self,
        app: App,
        addr: str,
        port: int,
        log: logging.Logger,
        limits: Optional[Limits] = None,
        backlog: int = 128,
    ) -> None:
        self.app = app
        self.addr = addr
        self.port = port
        self.log = log
        self.limits = limits or Limits()
        self.backlog = backlog
        self._server: Optional[_Loop] = None
        self._stats: Dict[str, int] = {}

    def start(self) -> None:
        """Bind and serve in threads. Raises OSError when the address cannot be bound."""
        addr = self.addr
        try:
            sock = _listen(addr, self.port, self.backlog)
        except OSError as exc:
            if addr != "::" or exc.errno not in (errno.EAFNOSUPPORT, errno.EADDRNOTAVAIL):
                raise
            self.log.info("IPv6 is not available here; binding 0.0.0.0 instead of ::")
            addr = "0.0.0.0"
            sock = _listen(addr, self.port, self.backlog)
        server = _Loop(sock, self.app, self.log, self.limits)
        server.start("perfwatch-http")
        self._server = server
        self.log.info("serving on %s:%d", addr, server.server_address[1])

    @property
    def bound_port(self) -> int:
        """The port listened on (the one the kernel chose when port was 0); 0 before start()."""
        return int(self._server.server_address[1]) if self._server is not None else 0

    def stats(self) -> Dict[str, int]:
        """Counts since the last start(): accepted, served, refused, dropped_idle, head_timeouts, ..."""
        return dict(self._server.stats) if self._server is not None else dict(self._stats)

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._stats = dict(self._server.stats)
            self._server = None
