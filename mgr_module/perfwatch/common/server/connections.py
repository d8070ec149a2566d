"""The open client connections, oldest first, and each one's way through its states, without blocking.

With TLS: sniff (peek at the first byte: a TLS handshake, or a plain HTTP request answered 400) ->
handshake (within the head deadline; a failed one is counted and closed) -> then as without TLS:
head (read the request head within a deadline and a size cap) -> work (a worker owns the request; the
socket is left alone) -> write (the response, within a deadline) -> linger (write side shut; read and
discard until the client closes). A head that cannot be served goes from head straight to write.
"""

import collections
import contextlib
import logging
import selectors
import socket
import ssl
import time
from typing import Any, Callable, Dict, List, Optional

from . import handshake, httpwire
from .conn import HANDSHAKE, HEAD, LINGER, SNIFF, WORK, WRITE, Conn
from .limits import Limits
from .responses import error, text_response
from .security import CLIENT_NOT_ALLOWED, PLAIN_HTTP_TO_TLS, TLS_HANDSHAKE_FAILED, Security


class Connections:
    """The connections and their sockets in sel: read heads, write responses, enforce deadlines and caps.

    Called from the loop's thread only. Counts what happens in stats (too_large, bad_request,
    dropped_idle, dropped_writing, head_timeouts, write_timeouts, linger_timeouts, and the refusals of
    security.REASONS that happen here) and tells each refusal to `warn` (rate-limited by the loop).
    """

    def __init__(
        self,
        sel: selectors.BaseSelector,
        limits: Limits,
        log: logging.Logger,
        stats: Dict[str, int],
        security: Optional[Security] = None,
        warn: Optional[Callable[[str], None]] = None,
    ) -> None:
        self.sel = sel
        self.limits = limits
        self.log = log
        self.stats = stats
        self.security = security or Security()
        self.warn = warn or log.warning
        self._conns: Dict[Conn, None] = collections.OrderedDict()  # oldest first
        self._writing = 0

    def __len__(self) -> int:
        return len(self._conns)

    def __contains__(self, conn: object) -> bool:
        return conn in self._conns

    @property
    def writing(self) -> int:
        """How many responses are being written."""
        return self._writing

    def add(self, sock: socket.socket, peer: Any) -> Optional[Conn]:
        """Start reading a request head (or, with TLS, the handshake) on a newly accepted socket."""
        sock.setblocking(False)
        try:
            tls = self.security.tls()
        except Exception:  # a bug in a Security must cost this connection, never the loop
            self.log.exception("http: no TLS settings for a connection from %s; closed", peer)
            sock.close()
            return None
        conn = Conn(sock, peer, time.monotonic() + self.limits.head_timeout, tls)
        self._conns[conn] = None
        self.sel.register(sock, selectors.EVENT_READ, conn)
        return conn

    def drop_oldest_idle(self) -> bool:
        """Close the oldest connection that is waiting on its client (head or linger); False if none."""
        for conn in self._conns:
            if conn.state in (SNIFF, HANDSHAKE, HEAD, LINGER):
                if conn.state != LINGER:
                    self.stats["dropped_idle"] += 1
                self.close(conn)
                return True
        return False

    def on_event(self, conn: Conn) -> Optional[httpwire.Request]:
        """conn's socket is ready: take the next step. A complete request is returned, conn then in work."""
        if conn not in self._conns:  # closed since the loop's select() (to make room): no step is left
            return None
        try:
            if conn.state == SNIFF:
                return self._sniff(conn)
            if conn.state == HANDSHAKE:
                return self._handshake(conn)
            if conn.state == HEAD:
                return self._read_head(conn)
            elif conn.state == WRITE:
                self._flush(conn)
            elif conn.state == LINGER:
                self._discard(conn)
        except Exception:  # a bug costs this connection, not the server
            self.log.exception("http: error on a connection from %s", conn.peer)
            self.close(conn)
        return None

    def refused(self, conn: Conn, reason: str, detail: str) -> None:
        self.stats[reason] += 1
        self.warn("http: refused a connection from {}: {}: {}".format(handshake.peer_text(conn.peer), reason, detail))

    def _sniff(self, conn: Conn) -> Optional[httpwire.Request]:
        """A connection to a TLS port: its first byte (handshake.classify) says what comes next."""
        try:
            first = handshake.first_byte(conn.sock)
        except handshake.WAIT:
            return None
        except OSError:
            first = b""
        if not first:
            self.close(conn)
            return None
        kind = handshake.classify(first)
        if kind == PLAIN_HTTP_TO_TLS:
            self.refused(conn, kind, "an http:// request to an https:// endpoint")
            conn.state = HEAD
            self.respond(conn, text_response(400, handshake.PLAIN_TO_TLS_TEXT))
            return None
        if kind != handshake.TLS:
            self.refused(conn, kind, "not a TLS handshake")
            self.close(conn)
            return None
        assert conn.tls is not None
        self.sel.unregister(conn.sock)
        try:  # the SSLSocket takes over the descriptor: the plain socket object is detached
            conn.sock = conn.tls.wrap_socket(conn.sock, server_side=True, do_handshake_on_connect=False)
        except (OSError, ValueError) as exc:
            self.refused(conn, TLS_HANDSHAKE_FAILED, str(exc))
            self._forget(conn)
            return None
        self.sel.register(conn.sock, selectors.EVENT_READ, conn)
        conn.state = HANDSHAKE
        return self._handshake(conn)

    def _handshake(self, conn: Conn) -> Optional[httpwire.Request]:
        sock = conn.sock
        assert isinstance(sock, ssl.SSLSocket)
        try:
            needs = handshake.step(sock)
        except handshake.Failed as exc:
            self.refused(conn, TLS_HANDSHAKE_FAILED, str(exc))
            self.close(conn)
            return None
        if needs != handshake.DONE:
            self.sel.modify(sock, selectors.EVENT_READ if needs == handshake.READ else selectors.EVENT_WRITE, conn)
            return None
        why = handshake.not_allowed(sock.getpeercert(), self.security.allowed_client_names())
        if why is not None:
            self.refused(conn, CLIENT_NOT_ALLOWED, why)
            self.close(conn)
            return None
        conn.state = HEAD
        self.sel.modify(sock, selectors.EVENT_READ, conn)
        return self._read_head(conn)  # the request may have come with the handshake's end

    def _read_head(self, conn: Conn) -> Optional[httpwire.Request]:
        while True:
            room = self.limits.head_bytes - len(conn.head) + 1
            try:
                data = conn.sock.recv(min(4096, room))
            except handshake.WAIT:
                return None
            except OSError:
                self.close(conn)
                return None
            if not data:
                self.close(conn)
                return None
            searched = max(0, len(conn.head) - 3)
            conn.head += data
            end = httpwire.head_end(bytes(conn.head), searched)
            if end >= 0:
                break
            if len(conn.head) > self.limits.head_bytes:
                self.stats["too_large"] += 1
                self.respond(conn, error(431))
                return None
            if not (isinstance(conn.sock, ssl.SSLSocket) and conn.sock.pending()):
                return None  # a TLS record may hold more than was read: select() would not say so
        try:
            request = httpwire.parse_head(bytes(conn.head[:end]))
        except httpwire.BadRequest as exc:
            self.stats["bad_request"] += 1
            self.respond(conn, error(exc.status))
            return None
        if request.method not in ("GET", "HEAD"):
            self.stats["bad_request"] += 1
            self.respond(conn, error(501))
            return None
        conn.head = bytearray()
        conn.state = WORK
        self.sel.unregister(conn.sock)
        return request

    def respond(self, conn: Conn, data: List[bytes]) -> None:
        """Start writing data on conn (in head or work); on_event finishes it."""
        if conn.state == WORK:
            self.sel.register(conn.sock, selectors.EVENT_WRITE, conn)
        else:
            self.sel.modify(conn.sock, selectors.EVENT_WRITE, conn)
        conn.state = WRITE
        conn.out = [memoryview(part) for part in data]
        conn.deadline = time.monotonic() + self.limits.write_timeout
        self._writing += 1
        if self._writing > self.limits.max_writing:
            oldest = next(c for c in self._conns if c.state == WRITE and c is not conn)
            self.stats["dropped_writing"] += 1
            self.close(oldest)
        if conn in self._conns:
            self._flush(conn)

    def _flush(self, conn: Conn) -> None:
        try:
            while conn.out:
                sent = conn.sock.send(conn.out[0])  # TLS: all of it, or a want error to try it again
                if sent < len(conn.out[0]):
                    conn.out[0] = conn.out[0][sent:]
                    return
                conn.out.pop(0)
        except handshake.WAIT:
            return
        except OSError:
            self.close(conn)
            return
        self._writing -= 1
        conn.state = LINGER  # before shutdown: should it fail, close() must not count this write again
        conn.deadline = time.monotonic() + self.limits.linger
        try:
            conn.sock.shutdown(socket.SHUT_WR)
        except OSError:
            self.close(conn)
            return
        self.sel.modify(conn.sock, selectors.EVENT_READ, conn)

    def _discard(self, conn: Conn) -> None:
        try:  # after shutdown() an SSLSocket reads its raw socket: what the client still sends is dropped
            data = conn.sock.recv(4096)
        except handshake.WAIT:
            return
        except OSError:
            data = b""
        if not data:
            self.close(conn)

    def sweep(self, now: float) -> None:
        """Close the connections past their deadline (head, write or linger; work has none here)."""
        for conn in [c for c in self._conns if c.state != WORK and now >= c.deadline]:
            self.stats[conn.state + "_timeouts"] += 1
            self.close(conn)

    def close(self, conn: Conn) -> None:
        """Close conn's socket and forget it; a second close() does nothing."""
        if conn not in self._conns:
            return
        if conn.state != WORK:
            with contextlib.suppress(KeyError, ValueError):
                self.sel.unregister(conn.sock)
        self._forget(conn)

    def _forget(self, conn: Conn) -> None:
        """Close conn's socket (not registered, or unregistered already) and drop it."""
        if conn not in self._conns:
            return
        del self._conns[conn]
        if conn.state == WRITE:
            self._writing -= 1
        conn.out = []
        conn.head = bytearray()
        conn.sock.close()

    def close_all(self) -> None:
        for conn in list(self._conns):
            self.close(conn)
