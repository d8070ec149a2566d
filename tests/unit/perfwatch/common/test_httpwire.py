import pytest

from perfwatch.common.server import Limits, Response, connection_cap, encode, httpwire


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        (None, False),
        ("", False),
        ("gzip", True),
        ("GZIP", True),
        ("x-gzip", True),
        ("gzip;q=0.5", True),
        ("gzip ; q=0.5", True),
        ("gzip;Q=0.001", True),
        ("gzip;q=1.000", True),
        ("gzip;q=0", False),
        ("gzip;q=0.0", False),
        ("gzip; q=0.000", False),
        ("gzip;q=0, *", False),
        ("*, gzip;q=0", False),
        ("*", True),
        ("*;q=0.1", True),
        ("*;q=0", False),
        ("deflate, br", False),
        ("deflate, gzip", True),
        ("br;q=1.0, gzip;q=0.8, *;q=0.1", True),
        ("identity", False),
        ("gzip;q=0.5, identity", False),
        ("gzip, identity;q=0.5", True),
        ("identity;q=0, *", True),
        ("gzip;q=abc", False),
        ("gzip;q=2", False),
        ("gzip;q=nan", False),
        ("gzip;q=0.5, gzip;q=0", False),
        (" \tgzip\t,", True),
        (",,", False),
        ("gzip;level=9", True),
    ],
)
def test_accepts_gzip_by_weight(field: str | None, expected: bool) -> None:
    assert httpwire.accepts_gzip(field) is expected


def test_head_end_waits_for_the_blank_line() -> None:
    assert httpwire.head_end(b"GET / HTTP/1.1\r\nHost: x\r\n") == -1
    head = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
    assert httpwire.head_end(head + b"body") == len(head)
    assert httpwire.head_end(b"GET / HTTP/1.0\n\n") == len(b"GET / HTTP/1.0\n\n")
    assert httpwire.head_end(b"\r\n\r\nGET / HTTP/1.0\r\n\r\n") == len(b"\r\n\r\nGET / HTTP/1.0\r\n\r\n")
    assert httpwire.head_end(b"\r\n") == -1


def test_parse_head_lowercases_names_and_joins_repeated_fields() -> None:
    req = httpwire.parse_head(
        b"GET /metrics?x=1 HTTP/1.1\r\nHost: x\r\nAccept-Encoding: br\r\naccept-encoding:  gzip;q=0 \r\n"
        b"X-Folded: a\r\n  b\r\n\r\n"
    )
    assert (req.method, req.target, req.version) == ("GET", "/metrics?x=1", "HTTP/1.1")
    assert req.headers == {"host": "x", "accept-encoding": "br, gzip;q=0", "x-folded": "a b"}


@pytest.mark.parametrize(
    ("head", "status"),
    [
        (b"GET /\r\n\r\n", 400),
        (b"GET  / HTTP/1.1\r\n\r\n", 400),
        (b"G(T / HTTP/1.1\r\n\r\n", 400),
        (b"GET / FTP/1.0\r\n\r\n", 400),
        (b"GET / HTTP/2.0\r\n\r\n", 505),
        (b"GET / HTTP/1.1\r\nno colon\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\nBad Name: x\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\n folded first\r\n\r\n", 400),
    ],
)
def test_parse_head_rejects_malformed_heads(head: bytes, status: int) -> None:
    with pytest.raises(httpwire.BadRequest) as info:
        httpwire.parse_head(head)
    assert info.value.status == status


def test_response_head_and_head_only_encoding() -> None:
    resp = Response(200, "text/plain", b"hello", {"Content-Encoding": "gzip"})
    get = encode(resp, head_only=False, now=0.0)
    head = encode(resp, head_only=True, now=0.0)
    assert head == get[:1] and get[1] == b"hello"
    assert get[0] == (
        b"HTTP/1.1 200 OK\r\nServer: ceph-perfwatch\r\nDate: Thu, 01 Jan 1970 00:00:00 GMT\r\n"
        b"Content-Type: text/plain\r\nContent-Length: 5\r\nContent-Encoding: gzip\r\nConnection: close\r\n\r\n"
    )
    assert httpwire.response_head(599, {}, "s").startswith(b"HTTP/1.1 599 Status 599\r\n")


def test_connection_cap_stays_within_a_share_of_the_fd_limit() -> None:
    limits = Limits(max_connections=1024, fd_share=0.25)
    assert connection_cap(limits, None) == 1024
    assert connection_cap(limits, 1_048_576) == 1024
    assert connection_cap(limits, 1024) == 256
    assert connection_cap(limits, 10) == 8
