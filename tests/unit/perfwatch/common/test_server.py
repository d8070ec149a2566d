"""The server over real sockets on 127.0.0.1: idle, slow and non-reading clients never starve scrapes."""

import collections
import contextlib
import errno
import gzip
import logging
import selectors
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator

import pytest

from perfwatch.common import server
from perfwatch.common.server import HttpServer, Limits, Response
from perfwatch.common.server.connections import Connections

BIG = b"x" * (32 << 20)  # more than loopback socket buffers hold: a client that never reads stalls its write


def app(path: str, accepts_gzip: bool) -> Response:
    if path == "/big":
        return Response(200, "text/plain", BIG, {})
    if path == "/boom":
        raise RuntimeError("boom")
    body = b"ok " + path.encode()
    if accepts_gzip:
        return Response(200, "text/plain", gzip.compress(body), {"Content-Encoding": "gzip"})
    return Response(200, "text/plain", body, {})


@contextlib.contextmanager
def serving(limits: Limits | None = None) -> Iterator[HttpServer]:
    srv = HttpServer(app, "127.0.0.1", 0, logging.getLogger("t"), limits)
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


@contextlib.contextmanager
def held(port: int, n: int, send: bytes = b"") -> Iterator[list[socket.socket]]:
    socks = []
    try:
        for _ in range(n):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            if send:
                sock.sendall(send)
            socks.append(sock)
        yield socks
    finally:
        for sock in socks:
            sock.close()


def scrape(port: int, path: str = "/metrics") -> bytes:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
        return bytes(resp.read())


def exchange(port: int, request: bytes) -> bytes:
    """Send request, read to EOF (the server closes after each response)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(request)
        chunks = []
        while True:
            data = sock.recv(65536)
            if not data:
                return b"".join(chunks)
            chunks.append(data)


def split(raw: bytes) -> tuple[str, dict[str, str], bytes]:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    fields = dict(line.split(": ", 1) for line in lines[1:])
    return lines[0], {k.lower(): v for k, v in fields.items()}, body


def closed_by_server(sock: socket.socket, within: float) -> bool:
    sock.settimeout(within)
    try:
        return sock.recv(100) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_scrapes_succeed_while_100_idle_and_100_half_sent_connections_are_held() -> None:
    with serving() as srv:
        port = srv.bound_port
        half = b"GET /metrics HTTP/1.1\r\nHost: x\r\n"
        with held(port, 100), held(port, 100, half):
            time.sleep(0.2)
            results = [scrape(port) for _ in range(20)]
            assert results == [b"ok /metrics"] * 20
            stats = srv.stats()
        assert stats["served"] == 20 and stats.get("dropped_idle", 0) == 0


def test_head_gets_get_status_and_fields_without_a_body() -> None:
    with serving() as srv:
        get = split(exchange(srv.bound_port, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"))
        head = split(exchange(srv.bound_port, b"HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n"))
        http10 = split(exchange(srv.bound_port, b"HEAD /other HTTP/1.0\r\n\r\n"))
    assert get[0] == head[0] == "HTTP/1.1 200 OK"
    assert get[2] == b"ok /metrics" and head[2] == b""
    assert {k: v for k, v in head[1].items() if k != "date"} == {k: v for k, v in get[1].items() if k != "date"}
    assert head[1]["content-length"] == str(len(get[2]))
    assert http10[0] == "HTTP/1.1 200 OK" and http10[2] == b""


@pytest.mark.parametrize(
    ("accept_encoding", "gzipped"),
    [("gzip", True), ("gzip;q=0.5", True), ("*", True), ("GZip ;Q=1", True), ("gzip;q=0", False), ("", False)],
)
def test_gzip_follows_the_q_value(accept_encoding: str, gzipped: bool) -> None:
    with serving() as srv:
        _, fields, body = split(
            exchange(srv.bound_port, f"GET /m HTTP/1.1\r\nAccept-Encoding: {accept_encoding}\r\n\r\n".encode())
        )
    assert ("content-encoding" in fields) is gzipped
    assert (gzip.decompress(body) if gzipped else body) == b"ok /m"


def test_clients_that_never_read_their_response_block_no_one() -> None:
    with serving(Limits(write_timeout=1.0)) as srv:
        port = srv.bound_port
        with held(port, 10, b"GET /big HTTP/1.1\r\n\r\n"):  # more than the workers
            time.sleep(0.3)
            assert [scrape(port) for _ in range(20)] == [b"ok /metrics"] * 20
            deadline = time.monotonic() + 10
            while srv.stats().get("write_timeouts", 0) < 10 and time.monotonic() < deadline:
                time.sleep(0.1)
            assert srv.stats()["write_timeouts"] == 10


def test_responses_being_written_are_capped_oldest_dropped() -> None:
    with serving(Limits(max_writing=2)) as srv:
        port = srv.bound_port
        with held(port, 5, b"GET /big HTTP/1.1\r\n\r\n"):
            deadline = time.monotonic() + 10
            while srv.stats().get("dropped_writing", 0) < 3 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert srv.stats()["dropped_writing"] == 3
            assert scrape(port) == b"ok /metrics"


def test_an_idle_client_is_dropped_at_the_head_deadline() -> None:
    with serving(Limits(head_timeout=0.5)) as srv, held(srv.bound_port, 1, b"GET / HTTP/1.1\r\n") as socks:
        assert closed_by_server(socks[0], within=5)
        assert srv.stats()["head_timeouts"] == 1


def test_beyond_the_connection_cap_the_oldest_idle_are_dropped() -> None:
    with serving(Limits(max_connections=20)) as srv:
        port = srv.bound_port
        with held(port, 50) as socks:
            assert scrape(port) == b"ok /metrics"
            assert all(closed_by_server(sock, within=5) for sock in socks[:30])
            assert not any(closed_by_server(sock, within=0.05) for sock in socks[-10:])
            assert srv.stats()["dropped_idle"] >= 31


def test_oversized_malformed_and_unsupported_requests_get_their_status() -> None:
    with serving() as srv:
        port = srv.bound_port
        big = b"GET / HTTP/1.1\r\nX: " + b"a" * 10000
        assert exchange(port, big).startswith(b"HTTP/1.1 431 ")
        assert exchange(port, b"hello\r\n\r\n").startswith(b"HTTP/1.1 400 ")
        assert exchange(port, b"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n").startswith(b"HTTP/1.1 501 ")
        assert exchange(port, b"GET /boom HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 500 ")
        assert scrape(port) == b"ok /metrics"


def test_a_request_body_the_server_does_not_read_does_not_cost_the_response() -> None:
    with serving() as srv:
        raw = exchange(srv.bound_port, b"GET /m HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello")
    assert split(raw)[2] == b"ok /m"


def test_stop_returns_promptly_with_connections_open_and_closes_them() -> None:
    srv = HttpServer(app, "127.0.0.1", 0, logging.getLogger("t"))
    srv.start()
    port = srv.bound_port
    with held(port, 100) as idle, held(port, 10, b"GET / HTTP/1.1\r\n"):
        time.sleep(0.2)
        t0 = time.monotonic()
        srv.stop()
        assert time.monotonic() - t0 < 3
        assert closed_by_server(idle[0], within=5)
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


def test_restart_on_the_same_port_and_a_taken_port_raises() -> None:
    with serving() as first:
        port = first.bound_port
        with pytest.raises(OSError):
            HttpServer(app, "127.0.0.1", port, logging.getLogger("t")).start()
    again = HttpServer(app, "127.0.0.1", port, logging.getLogger("t"))
    again.start()
    try:
        assert scrape(port) == b"ok /metrics"
    finally:
        again.stop()


def test_concurrent_scrapes_all_answered() -> None:
    with serving() as srv:
        port = srv.bound_port
        results: list[bytes] = []
        threads = [threading.Thread(target=lambda: results.append(scrape(port))) for _ in range(50)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
    assert results == [b"ok /metrics"] * 50


def test_defaults_are_the_documented_bounds() -> None:
    limits = Limits()
    assert (limits.max_connections, limits.head_timeout, limits.head_bytes, limits.workers) == (1024, 10.0, 8192, 4)
    assert server.SERVER_NAME == "ceph-perfwatch"


def test_when_the_app_hangs_in_every_worker_waiting_requests_get_503_at_the_queue_timeout() -> None:
    release = threading.Event()

    def hanging(path: str, accepts_gzip: bool) -> Response:
        if path == "/hang":
            release.wait(30)
        return app(path, accepts_gzip)

    srv = HttpServer(hanging, "127.0.0.1", 0, logging.getLogger("t"), Limits(workers=2, queue_timeout=0.5))
    srv.start()
    try:
        port = srv.bound_port
        with held(port, 2, b"GET /hang HTTP/1.1\r\n\r\n"):  # both workers stuck in the app
            time.sleep(0.2)
            t0 = time.monotonic()
            get = split(exchange(port, b"GET /metrics HTTP/1.1\r\n\r\n"))
            head = split(exchange(port, b"HEAD /metrics HTTP/1.1\r\n\r\n"))
            assert time.monotonic() - t0 < 4
            assert get[0] == head[0] == "HTTP/1.1 503 Service Unavailable"
            assert get[2] == b"503 Service Unavailable\n" and head[2] == b""
            assert srv.stats()["queue_timeouts"] == 2
            release.set()
            assert scrape(port) == b"ok /metrics"
    finally:
        release.set()
        srv.stop()


class _ResetOnShutdown(socket.socket):
    """A socket whose peer reset the connection just after the last send succeeded."""

    def shutdown(self, how: int) -> None:
        raise OSError(errno.ENOTCONN, "Transport endpoint is not connected")


def _connections() -> Connections:
    return Connections(selectors.DefaultSelector(), Limits(), logging.getLogger("t"), collections.Counter())


def test_a_response_whose_shutdown_fails_leaves_the_count_of_responses_being_written_right() -> None:
    conns = _connections()
    ours, theirs = socket.socketpair()
    with theirs:
        sock = _ResetOnShutdown(ours.family, ours.type, fileno=ours.detach())
        conns.respond(conns.add(sock, "peer"), [b"HTTP/1.1 200 OK\r\n\r\n"])
        assert len(conns) == 0 and conns.writing == 0


def test_an_event_for_a_connection_closed_since_the_select_is_ignored() -> None:
    conns = _connections()
    ours, theirs = socket.socketpair()
    with theirs:
        conn = conns.add(ours, "peer")
        conns.respond(conn, [BIG])  # stalls: the peer never reads
        assert conns.writing == 1
        conns.close(conn)  # dropped, as by the cap on responses being written, in the same select batch
        assert conns.on_event(conn) is None  # the writable event that batch held for it
        conns.close(conn)
        assert len(conns) == 0 and conns.writing == 0
