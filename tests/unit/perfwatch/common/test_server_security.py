"""TLS and basic auth on the shared HTTP server, over real sockets: what Prometheus does when all is
right, and what a wrong client does (plain HTTP to the TLS port, no or a foreign client certificate, a
certificate without an allowed name, no or a wrong password): each a clear refusal, counted."""

from __future__ import annotations

import base64
import contextlib
import logging
import socket
import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from perfwatch.common.server import HttpServer, Limits, Response
from perfwatch.common.server import passwords as pw
from perfwatch.common.server.basic_auth import BasicAuth
from perfwatch.common.server.security import FixedSecurity, Security
from perfwatch.common.server.tls import REQUIRE_AND_VERIFY, VERIFY_IF_GIVEN, TlsError, TlsSettings, server_context

BIG = b"x" * (3 << 20)  # larger than any socket buffer: the TLS writes must resume


def app(path: str, accepts_gzip: bool) -> Response:
    body = BIG if path == "/big" else b"hello " + path.encode()
    return Response(200, "text/plain", body, {})


def settings(pki: dict[str, Any], client_auth: str = "NoClientCert") -> TlsSettings:
    ca = str(pki["ca"].cert) if client_auth != "NoClientCert" else None
    return TlsSettings(str(pki["server"].cert), str(pki["server"].key), ca, client_auth)


def serve(security: Security, limits: Limits | None = None) -> HttpServer:
    srv = HttpServer(app, "127.0.0.1", 0, logging.getLogger("t"), limits=limits, security=security)
    srv.start()
    return srv


def client(pki: dict[str, Any], cert: str | None = None) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(pki["ca"].cert))
    if cert is not None:
        context.load_cert_chain(str(pki[cert].cert), str(pki[cert].key))
    return context


def get(
    url: str, context: ssl.SSLContext | None = None, user: str | None = None, password: str = ""
) -> tuple[int, bytes]:
    headers = {}
    if user is not None:
        headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10, context=context) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def counted(srv: HttpServer, reason: str, expected: int) -> int:
    """The server's count of `reason` once it reaches `expected` (or after 5 s): the client may see its
    refusal before the server's loop has counted it."""
    deadline = time.monotonic() + 5
    while srv.refusals()[reason] < expected and time.monotonic() < deadline:
        time.sleep(0.01)
    return srv.refusals()[reason]


@pytest.fixture
def tls_server(pki: dict[str, Any]) -> Iterator[HttpServer]:
    srv = serve(FixedSecurity(tls=server_context(settings(pki))))
    yield srv
    srv.stop()


def test_https_serves_whole_bodies(tls_server: HttpServer, pki: dict[str, Any]) -> None:
    url = f"https://127.0.0.1:{tls_server.bound_port}"
    assert get(url + "/metrics", client(pki)) == (200, b"hello /metrics")
    status, body = get(url + "/big", client(pki))
    assert status == 200 and body == BIG
    assert tls_server.refusals() == dict.fromkeys(tls_server.refusals(), 0)


def test_plain_http_to_the_tls_port_is_a_clear_400_and_counted(tls_server: HttpServer) -> None:
    status, body = get(f"http://127.0.0.1:{tls_server.bound_port}/metrics")
    assert status == 400 and b"speaks HTTPS" in body and b"https://" in body
    assert counted(tls_server, "plain_http_to_tls", 1) == 1


def test_a_client_that_does_not_trust_the_certificate_is_refused(tls_server: HttpServer) -> None:
    with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
        urllib.request.urlopen(f"https://127.0.0.1:{tls_server.bound_port}/", timeout=10)
    assert counted(tls_server, "tls_handshake_failed", 1) == 1, "the client's alert ends the handshake"


def test_garbage_to_the_tls_port_is_closed_and_counted(tls_server: HttpServer) -> None:
    with socket.create_connection(("127.0.0.1", tls_server.bound_port), timeout=10) as sock:
        sock.sendall(b"\x00\x01\x02junk")
        with contextlib.suppress(ConnectionResetError):  # closed with the junk unread: a reset
            assert sock.recv(100) == b""
    assert counted(tls_server, "tls_handshake_failed", 1) == 1


def test_a_silent_tls_client_is_dropped_at_the_head_deadline(pki: dict[str, Any]) -> None:
    srv = serve(FixedSecurity(tls=server_context(settings(pki))), Limits(head_timeout=0.5))
    try:
        with socket.create_connection(("127.0.0.1", srv.bound_port), timeout=10) as sock:
            sock.sendall(b"\x16\x03\x01")  # the start of a ClientHello, then nothing
            assert sock.recv(100) == b""
        assert srv.stats()["handshake_timeouts"] == 1
    finally:
        srv.stop()


def test_a_required_client_certificate(pki: dict[str, Any]) -> None:
    srv = serve(FixedSecurity(tls=server_context(settings(pki, REQUIRE_AND_VERIFY))))
    url = f"https://127.0.0.1:{srv.bound_port}/metrics"
    try:
        assert get(url, client(pki, "prometheus")) == (200, b"hello /metrics")
        for cert in (None, "foreign"):  # none; one of another CA
            with pytest.raises((urllib.error.URLError, ssl.SSLError, ConnectionError)):
                get(url, client(pki, cert))
        assert counted(srv, "tls_handshake_failed", 2) == 2
    finally:
        srv.stop()


def test_client_names_allowed(pki: dict[str, Any]) -> None:
    security = FixedSecurity(
        tls=server_context(settings(pki, REQUIRE_AND_VERIFY)), allowed_client_names=("prometheus",)
    )
    srv = serve(security)
    url = f"https://127.0.0.1:{srv.bound_port}/metrics"
    try:
        assert get(url, client(pki, "prometheus"))[0] == 200
        with pytest.raises((urllib.error.URLError, ssl.SSLError, ConnectionError)):
            get(url, client(pki, "intruder"))  # signed by the CA, but not named prometheus
        assert counted(srv, "client_cert_not_allowed", 1) == 1
    finally:
        srv.stop()


def test_client_certificate_if_given(pki: dict[str, Any]) -> None:
    srv = serve(FixedSecurity(tls=server_context(settings(pki, VERIFY_IF_GIVEN))))
    url = f"https://127.0.0.1:{srv.bound_port}/metrics"
    try:
        assert get(url, client(pki))[0] == 200
        assert get(url, client(pki, "prometheus"))[0] == 200
        with pytest.raises((urllib.error.URLError, ssl.SSLError, ConnectionError)):
            get(url, client(pki, "foreign"))
    finally:
        srv.stop()


def test_basic_auth_refusals_are_401_with_a_challenge_and_counted() -> None:
    auth = BasicAuth({"prometheus": pw.hash_pbkdf2("s3cret", iterations=1000)})
    srv = serve(FixedSecurity(auth=auth))
    url = f"http://127.0.0.1:{srv.bound_port}"
    try:
        try:
            urllib.request.urlopen(url + "/metrics", timeout=10)
        except urllib.error.HTTPError as exc:
            assert exc.code == 401 and exc.headers["WWW-Authenticate"].startswith('Basic realm="ceph-perfwatch"')
        assert get(url + "/metrics", user="prometheus", password="wrong")[0] == 401
        assert get(url + "/metrics", user="nobody", password="s3cret")[0] == 401
        assert get(url + "/metrics", user="prometheus", password="s3cret") == (200, b"hello /metrics")
        assert get(url + "/metrics", user="prometheus", password="s3cret")[0] == 200, "remembered"
        assert get(url + "/healthz")[0] == 200, "a liveness probe has no password"
        assert (counted(srv, "auth_missing", 1), counted(srv, "auth_failed", 2)) == (1, 2)
    finally:
        srv.stop()


@pytest.mark.parametrize(
    "header",
    ["Basic", "Basic !!!", "Basic " + base64.b64encode(b"no-colon").decode(), "Bearer abc", "basic  "],
)
def test_malformed_authorization_headers_are_refused(header: str) -> None:
    auth = BasicAuth({"u": pw.hash_pbkdf2("p", iterations=1000)})
    assert auth.refusal(header) in ("auth_failed", "auth_missing")
    assert auth.refusal(None) == "auth_missing"


def test_password_hashes() -> None:
    stored = pw.hash_pbkdf2("pässword", iterations=1000)
    assert stored.startswith("$pbkdf2-sha256$1000$")
    assert pw.verify("pässword", stored) and not pw.verify("password", stored)
    pw.check_hash(stored)
    for bad in ("plain", "$pbkdf2-sha256$x$y$z", "$2y$10$short", "$1$md5$hash"):
        with pytest.raises(pw.PasswordError):
            pw.check_hash(bad)
        assert not pw.verify("x", bad)


@pytest.mark.parametrize("backend", ["package", "libcrypt"])
def test_bcrypt_from_either_backend(backend: str) -> None:
    """htpasswd -nbBC 4 prometheus perfwatch: a $2y$ hash (Apache's prefix) checks with both backends."""
    make = pw._from_package if backend == "package" else pw._from_libcrypt
    compute = make()
    if compute is None:
        pytest.skip(f"no {backend} bcrypt here")
    stored = pw._KNOWN_HASH.decode().replace("$2b$", "$2y$")
    assert compute(b"perfwatch", stored.encode()) == stored.encode()
    assert compute(b"wrong", stored.encode()) != stored.encode()
    assert pw.bcrypt_backend() is not None
    assert pw.verify("perfwatch", stored) and not pw.verify("perfwatch!", stored)


def test_tls_settings_are_checked(pki: dict[str, Any], tmp_path: Path) -> None:
    good = settings(pki)
    for bad, words in (
        (good._replace(client_auth="RequireAnyClientCert"), "not supported"),
        (good._replace(client_auth="Sometimes"), "not one of"),
        (good._replace(client_ca_file=str(pki["ca"].cert)), "client_auth_type is NoClientCert"),
        (good._replace(client_auth=REQUIRE_AND_VERIFY), "needs client_ca_file"),
        (good._replace(min_version="TLS14"), "not one of"),
        (good._replace(min_version="TLS13", max_version="TLS12"), "above max_version"),
        (good._replace(key_file=str(pki["prometheus"].key)), "key values mismatch"),
        (good._replace(cert_file=str(tmp_path / "none.crt")), "No such file"),
    ):
        with pytest.raises(TlsError, match=words):
            server_context(bad)
    fifo = tmp_path / "cert.fifo"
    import os

    os.mkfifo(fifo)
    with pytest.raises(TlsError, match="not a regular file"):
        server_context(good._replace(cert_file=str(fifo)))  # OpenSSL would block on it


def test_tls13_only(pki: dict[str, Any]) -> None:
    srv = serve(FixedSecurity(tls=server_context(settings(pki)._replace(min_version="TLS13"))))
    try:
        old = client(pki)
        old.maximum_version = ssl.TLSVersion.TLSv1_2
        with pytest.raises((urllib.error.URLError, ssl.SSLError, ConnectionError)):
            get(f"https://127.0.0.1:{srv.bound_port}/", old)
        assert get(f"https://127.0.0.1:{srv.bound_port}/", client(pki))[0] == 200
    finally:
        srv.stop()
