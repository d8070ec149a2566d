"""The loop thread: one selectors loop that accepts (within the connection cap), steps the connections,
hands complete requests to the workers and their answers back to the connections, and sweeps deadlines
(answering 503 for a request no worker took within queue_timeout).
"""

import collections
import contextlib
import errno
import logging
import selectors
import socket
import threading
import time
from typing import Any, Deque, Dict, List, Optional, Tuple

from .connections import Connections
from .limits import Limits, connection_cap, fd_limit
from .responses import App, error
from .security import REASONS, Security
from .workers import Job, WorkerPool

_ACCEPT_BATCH = 64
_TICK = 0.25  # seconds between deadline sweeps
_WARNING_INTERVAL = 60.0


class Loop:
    """Serves app on a listening socket: start(name) runs the loop and the workers, stop() ends them."""

    def __init__(
        self, sock: socket.socket, app: App, log: logging.Logger, limits: Limits, security: Optional[Security] = None
    ) -> None:
        self.sock = sock
        self.server_address: Tuple[Any, ...] = sock.getsockname()
        self.log = log
        self.limits = limits
        self.cap = connection_cap(limits, fd_limit())
        # the refusals are there from the start: workers count theirs too, and a copy must never see
        # the dict grow under it
        self.stats: Dict[str, int] = collections.Counter({reason: 0 for reason in REASONS})
        self._sel = selectors.DefaultSelector()
        self._conns = Connections(self._sel, limits, log, self.stats, security, self._warn)
        self._workers = WorkerPool(app, limits, log, self._finished, security, self._refused)
        self._done: Deque[Tuple[Job, List[bytes]]] = collections.deque()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._stopping = False
        self._accept_paused_until = 0.0
        self._last_warning = -_WARNING_INTERVAL
        self._thread: Optional[threading.Thread] = None

    # -- threads

    def start(self, name: str) -> None:
        self.sock.setblocking(False)
        self._sel.register(self.sock, selectors.EVENT_READ, None)
        self._sel.register(self._wake_r, selectors.EVENT_READ, None)
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()
        self._workers.start(name)

    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self, timeout: float = 5.0) -> None:
        """Close everything; returns once the loop has exited (a worker inside the app is not waited for)."""
        self._stopping = True
        self._wake()
        self._workers.stop()
        if self._thread is not None:
            self._thread.join(timeout)

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # full: the loop wakes anyway; closed: it has stopped
            self._wake_w.send(b"\0")

    def _refused(self, reason: str, detail: str) -> None:
        """A worker refused a request (basic auth): counted, and a warning at most once a minute."""
        self.stats[reason] += 1
        self._warn("http: refused a request: {}: {}".format(reason, detail))

    def _finished(self, job: Job, data: List[bytes]) -> None:
        """A worker's answer (called in the worker's thread): the loop writes it out."""
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
                        request = self._conns.on_event(key.data)
                        if request is not None:
                            self._workers.submit(Job(key.data, request, time.monotonic()))
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
            self._conns.add(sock, peer)

    def _cannot_accept(self, exc: OSError) -> None:
        """Out of file descriptors (or another accept error): make room, or stop accepting for a tick."""
        self.stats["accept_errors"] += 1
        self._warn("http: cannot accept a connection: {}".format(exc))
        if exc.errno in (errno.EMFILE, errno.ENFILE) and self._drop_oldest_idle():
            return
        self._sel.unregister(self.sock)
        self._accept_paused_until = time.monotonic() + _TICK

    def _drop_oldest_idle(self) -> bool:
        if not self._conns.drop_oldest_idle():
            return False
        self._warn("http: {} connections open (the cap); dropping the oldest idle ones".format(self.cap))
        return True

    def _warn(self, message: str) -> None:
        """A warning at most once a minute: a flood of bad clients must not flood the log."""
        now = time.monotonic()
        if now - self._last_warning >= _WARNING_INTERVAL:
            self._last_warning = now
            self.log.warning("%s", message)

    def _take_results(self) -> None:
        while self._done:
            job, data = self._done.popleft()
            if job.conn not in self._conns:
                continue
            self.stats["served"] += 1
            self.log.debug("http: %s %s %s", job.conn.peer, job.request.method, job.request.target)
            self._conns.respond(job.conn, data)

    def _sweep(self, now: float) -> None:
        if self._accept_paused_until and now >= self._accept_paused_until:
            self._accept_paused_until = 0.0
            self._sel.register(self.sock, selectors.EVENT_READ, None)
        for job in self._workers.expired(now):  # no worker free for queue_timeout: 503 from here
            self.stats["queue_timeouts"] += 1
            if job.conn in self._conns:
                self._conns.respond(job.conn, error(503, job.request.method == "HEAD"))
        self._conns.sweep(now)

    def _close_all(self) -> None:
        self._conns.close_all()
        self._sel.close()
        for sock in (self.sock, self._wake_r, self._wake_w):
            sock.close()
