"""mgr_module/perfwatch/endpoint/serving.py over real sockets on 127.0.0.1: a server_addr that cannot be bound
here never takes the metrics endpoint down; it keeps serving where it listened before, says so in `error` and
raises PERFWATCH_ENDPOINT until it listens where configured. 192.0.2.1 (TEST-NET-1) is never an address of this
host: binding it fails with EADDRNOTAVAIL, and no traffic is ever sent but to 127.0.0.1."""

from __future__ import annotations

import contextlib
import errno
import logging
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

from perfwatch.common.server import Response
from perfwatch.common.server import passwords as pw
from perfwatch.common.server.basic_auth import BasicAuth
from perfwatch.common.server.security import FixedSecurity, Security
from perfwatch.endpoint import serving
from perfwatch.endpoint.serving import ENDPOINT, Endpoint
from perfwatch.endpoint.tls_auth import Wanted

UNBINDABLE = "192.0.2.1"


def app(path: str, accepts_gzip: bool) -> Response:
    return Response(200, "text/plain", b"metrics", {})


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def scrape(addr: str, port: int) -> bytes:
    assert addr.startswith("127."), "tests send only to loopback"
    with urllib.request.urlopen(f"http://{addr}:{port}/metrics", timeout=5) as resp:
        return bytes(resp.read())


def refused(addr: str, port: int) -> bool:
    try:
        scrape(addr, port)
    except (urllib.error.URLError, ConnectionError):
        return True
    return False


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.levelname + " " + record.getMessage())


@contextlib.contextmanager
def made(factory: Any = None) -> Iterator[tuple[Endpoint, list[str], Records]]:
    log = logging.getLogger("test_endpoint")
    log.setLevel(logging.DEBUG)
    records = Records()
    log.handlers = [records]
    published: list[str] = []
    extra = {"server_factory": factory} if factory else {}
    ep = Endpoint(app, "x", lambda: "10.1.2.3", published.append, log, **extra)
    try:
        yield ep, published, records
    finally:
        ep.stop()


def test_it_listens_where_configured_and_publishes_the_url() -> None:
    port = free_port()
    with made() as (ep, published, _):
        assert ep.ensure("127.0.0.1", port) is False  # no check before, none now
        assert scrape("127.0.0.1", port) == b"metrics"
        assert published == [f"http://127.0.0.1:{port}/"] and ep.url == published[-1]
        assert ep.error is None and ep.health_checks() == {}
        assert ep.ensure("127.0.0.1", port) is False and published == [f"http://127.0.0.1:{port}/"]  # untouched


def test_an_unbindable_address_keeps_the_old_one_serving_and_raises_a_check_until_fixed() -> None:
    port = free_port()
    with made() as (ep, published, records):
        ep.ensure("127.0.0.1", port)
        assert ep.ensure(UNBINDABLE, port) is True
        assert scrape("127.0.0.1", port) == b"metrics", "scrapes of the old address keep working"
        assert ep.listening == ("127.0.0.1", port) and ep.url == f"http://127.0.0.1:{port}/"
        assert ep.error is not None and ep.error.startswith(f"cannot listen on {UNBINDABLE}:{port}: [Errno ")
        assert ep.error.endswith(f"; still serving on 127.0.0.1:{port} (http://127.0.0.1:{port}/)"), ep.error
        check = ep.health_checks()[ENDPOINT]
        assert check["severity"] == "warning" and check["count"] == 1
        reason = str(OSError(errno.EADDRNOTAVAIL, "Cannot assign requested address"))
        assert check["summary"] == f"perfwatch cannot listen on {UNBINDABLE}:{port}: {reason}"
        assert check["detail"] == [
            f"the metrics endpoint of mgr.x still serves on 127.0.0.1:{port} (http://127.0.0.1:{port}/), where it "
            f"listened before; scrapes of {UNBINDABLE}:{port} fail until it can listen there"
        ]
        # Tried again each pass, without a gap on the old address and without a log line each time.
        assert ep.ensure(UNBINDABLE, port) is False and scrape("127.0.0.1", port) == b"metrics"
        assert len([line for line in records.lines if line.startswith("ERROR")]) == 1
        assert published == [f"http://127.0.0.1:{port}/"]
        # Configured back, or to an address that can be bound: the check clears.
        assert ep.ensure("127.0.0.1", port) is True
        assert ep.error is None and ep.health_checks() == {}
        ep.ensure(UNBINDABLE, port)
        other = free_port()
        assert ep.ensure("127.0.0.1", other) is True and ep.health_checks() == {}
        assert scrape("127.0.0.1", other) == b"metrics" and refused("127.0.0.1", port)
        assert published[-1] == f"http://127.0.0.1:{other}/"


def test_unbindable_from_the_start_serves_nowhere_and_says_so() -> None:
    port = free_port()
    with made() as (ep, published, _):
        assert ep.ensure(UNBINDABLE, port) is True
        assert ep.listening is None and ep.url is None and published == []
        assert ep.error is not None and ep.error.endswith("; serving nowhere")
        check = ep.health_checks()[ENDPOINT]
        assert check["summary"].startswith(f"perfwatch cannot listen on {UNBINDABLE}:{port}: ")
        assert check["detail"] == [serving.ENDPOINT_NOWHERE.format(mgr="x")]
        assert ep.ensure("127.0.0.1", port) is True and ep.health_checks() == {}
        assert scrape("127.0.0.1", port) == b"metrics"


def test_the_old_address_listens_again_when_it_had_to_stop_to_free_the_port() -> None:
    port = free_port()
    with made() as (ep, _published, _records), socket.socket() as squatter:
        ep.ensure("127.0.0.1", port)
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        squatter.bind(("127.0.0.2", port))  # someone else holds the new address and port: EADDRINUSE
        squatter.listen(1)
        assert ep.ensure("127.0.0.2", port) is True
        assert ep.listening == ("127.0.0.1", port) and scrape("127.0.0.1", port) == b"metrics"
        assert ep.error is not None and f"[Errno {errno.EADDRINUSE}]" in ep.error
        assert f"still serves on 127.0.0.1:{port}" in ep.health_checks()[ENDPOINT]["detail"][0]


class FakeServer:
    """Binds like Linux: EADDRINUSE while a running server holds the port on the wildcard or the same address."""

    running: ClassVar[list[FakeServer]] = []

    def __init__(self, app: Any, addr: str, port: int, log: Any, **kwargs: Any) -> None:
        self.addr, self.port = addr, port
        self.security = kwargs.get("security")

    def start(self) -> None:
        for other in FakeServer.running:
            if other.port == self.port and (other.addr == self.addr or "0.0.0.0" in (other.addr, self.addr)):
                raise OSError(errno.EADDRINUSE, "Address already in use")
        FakeServer.running.append(self)

    def stop(self) -> None:
        FakeServer.running.remove(self)


def test_a_move_onto_the_port_the_old_server_holds_stops_it_first() -> None:
    FakeServer.running = []
    with made(FakeServer) as (ep, published, _):
        ep.ensure("0.0.0.0", 9284)
        assert published == ["http://10.1.2.3:9284/"]  # a wildcard address: the mgr's own IP
        assert ep.ensure("10.1.2.3", 9284) is False and ep.error is None
        assert [(s.addr, s.port) for s in FakeServer.running] == [("10.1.2.3", 9284)]
        assert published[-1] == "http://10.1.2.3:9284/"


def test_a_refused_server_addr_is_never_listened_on() -> None:
    def factory(*args: Any) -> Any:
        raise AssertionError("a refused address reached the server")

    with made(factory) as (ep, _published, _):
        assert ep.ensure("localhost", 9284) is False
        assert ep.error is not None and ep.error.startswith("server_addr refused: ")
        assert ep.health_checks() == {}, "PERFWATCH_CONFIG_INVALID reports it"


@pytest.mark.parametrize(
    ("addr", "url"),
    [("::", "http://10.1.2.3:9284/"), ("0.0.0.0", "http://10.1.2.3:9284/"), ("fd00::5", "http://[fd00::5]:9284/")],
)
def test_urls(addr: str, url: str) -> None:
    assert serving.url_of((addr, 9284), lambda: "10.1.2.3") == url


class UnbindableServer(FakeServer):
    """Like FakeServer, but 192.0.2.1 (not this host's) cannot be bound."""

    def start(self) -> None:
        if self.addr == "192.0.2.1":
            raise OSError(errno.EADDRNOTAVAIL, "Cannot assign requested address")
        super().start()


def secured(tag: str) -> Wanted:
    return Wanted(FixedSecurity(auth=BasicAuth({"u": pw.hash_pbkdf2("p" + tag, iterations=1000)})), tag, None)


def test_new_security_is_served_where_it_listens_even_when_the_new_address_cannot_be(  # never an older security
) -> None:
    FakeServer.running = []
    with made(UnbindableServer) as (ep, _published, _):
        ep.ensure("127.0.0.1", 9284)
        assert FakeServer.running[0].security.auth() is None
        ep.ensure("192.0.2.1", 9284, secured("a"))  # cannot move there: auth applies where it listens
        (server,) = FakeServer.running
        assert (server.addr, server.security.auth() is not None) == ("127.0.0.1", True)
        assert ep.security.auth() is not None, "status reports what is served"
        ep.ensure("not an address", 9284, secured("b"))  # refused: the same
        (server,) = FakeServer.running
        assert server.security.auth() is not None and server.security is ep.security
        ep.ensure("not an address", 9284, Wanted(Security(), "c", "ssl is on but no certificate"))
        assert FakeServer.running == [], "settings that cannot be served: nothing listens"
        assert ep.security.auth() is None and ep.health_checks()["PERFWATCH_ENDPOINT"]
