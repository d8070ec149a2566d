"""The stdlib SigV4 signer against botocore's, for the same request, keys and time."""

import datetime
import hashlib
import http.server
import re
import threading
import time
from collections.abc import Iterator
from typing import ClassVar

import pytest
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from perfwatch.benchmarks.base import BenchError
from perfwatch.benchmarks.engine.s3_client import EMPTY_SHA256, AnswerTooLarge, S3Client, listed_keys, read_capped, sign
from perfwatch.commands import status_report as status
from perfwatch.options import declared as options

NOW = datetime.datetime(2026, 11, 21, 18, 30, 5, tzinfo=datetime.UTC)
ACCESS, SECRET = "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"


def botocore_authorization(
    method: str, url: str, body: bytes, monkeypatch: pytest.MonkeyPatch, headers: dict[str, str] | None = None
) -> str:
    import botocore.auth

    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: NOW.replace(tzinfo=None))
    req = AWSRequest(method=method, url=url, data=body, headers=headers)
    S3SigV4Auth(Credentials(ACCESS, SECRET), "s3", "us-east-1").add_auth(req)
    return req.headers["Authorization"]


@pytest.mark.parametrize(
    ("method", "url", "body"),
    [
        ("PUT", "http://127.0.0.1:7480/perfwatch-probe", b""),
        ("PUT", "http://127.0.0.1:7480/perfwatch-probe/rgw-20261121T183005-ab12", b"x" * 4096),
        ("GET", "http://198.18.1.1:17480/perfwatch-probe?list-type=2&prefix=rgw-", b""),
        ("DELETE", "http://127.0.0.1:7480/b/key%20with%20space", b""),
    ],
)
def test_signature_matches_botocore(method: str, url: str, body: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    payload = hashlib.sha256(body).hexdigest()
    ours = sign(method, url, {}, payload, ACCESS, SECRET, "us-east-1", NOW)["Authorization"]
    assert ours == botocore_authorization(method, url, body, monkeypatch)


def test_a_signed_content_type_matches_botocore(monkeypatch: pytest.MonkeyPatch) -> None:
    url, body = "http://127.0.0.1:7480/perfwatch-probe/rgw-1", b"x" * 4096
    headers = {"Content-Type": "application/octet-stream"}
    ours = sign("PUT", url, headers, hashlib.sha256(body).hexdigest(), ACCESS, SECRET, "us-east-1", NOW)
    assert "SignedHeaders=content-type;host;" in ours["Authorization"]
    assert ours["Authorization"] == botocore_authorization("PUT", url, body, monkeypatch, headers)


def test_the_secret_is_not_in_the_signed_headers() -> None:
    headers = sign("GET", "http://h:1/b", {}, EMPTY_SHA256, ACCESS, SECRET, "us-east-1", NOW)
    assert SECRET not in " ".join(headers.values())


def test_listed_keys() -> None:
    body = (
        b'<?xml version="1.0"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
        b"<Contents><Key>rgw-1</Key></Contents><Contents><Key>rgw-2</Key></Contents></ListBucketResult>"
    )
    assert listed_keys(body) == ["rgw-1", "rgw-2"]


def test_secrets_are_redacted_in_status() -> None:
    values = dict(options.defaults(), rgw_s3_access_key="AK", rgw_s3_secret_key=SECRET)
    shown = options.redacted(values)
    assert shown["rgw_s3_secret_key"] == "<set>" and shown["rgw_s3_access_key"] == "<set>"
    assert options.redacted(options.defaults())["rgw_s3_secret_key"] == "<not set>"
    report = status.build("0", "x", True, "v", shown, 0.0, 0, None, now=1.0)
    assert SECRET not in status.render_plain(report)


# ----- S3Client: what it refuses, and how it talks --------------------------------------------------


class _Recorder(http.server.BaseHTTPRequestHandler):
    """Answers every request with the status in the class attribute `status`; records what it got."""

    status = 200
    seen: ClassVar[list[dict[str, str]]] = []

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.seen.append(dict(self.headers.items(), method=self.command, path=self.path))
        self.send_response(self.status)
        if 300 <= self.status < 400:
            self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_PUT = do_DELETE = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def rgw() -> Iterator[tuple[type[_Recorder], int]]:
    handler = type("Handler", (_Recorder,), {"status": 200, "seen": []})
    server = http.server.HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield handler, server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def client(endpoint: str, resolver: object = None) -> S3Client:
    kwargs = {"resolver": resolver} if resolver else {}
    return S3Client(endpoint, ACCESS, SECRET, "us-east-1", 5.0, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "endpoint",
    ["file:///etc/passwd#", "", "http://169.254.169.254/", "http://[fe80::1]:80", "http://user:pw@host/", "ftp://x"],
)
def test_client_refuses_what_validation_refuses(endpoint: str) -> None:
    with pytest.raises(BenchError, match="S3 endpoint refused"):
        client(endpoint)


def test_client_refuses_a_name_that_resolves_to_a_metadata_address() -> None:
    c = client("http://rgw.example:7480", resolver=lambda host, port: ["169.254.169.254"])
    with pytest.raises(BenchError, match=re.escape("rgw.example resolves to 169.254.169.254 is a cloud metadata")):
        c.request("GET", "/b")


def test_client_connects_to_the_address_it_checked(rgw: tuple[type[_Recorder], int]) -> None:
    handler, port = rgw
    resolved = []

    def resolver(host: str, p: int) -> list[str]:
        resolved.append(host)
        return ["127.0.0.1"]

    c = client(f"http://rgw.example:{port}/prefix", resolver=resolver)
    c.request("PUT", "/bucket/key", body=b"x" * 16)
    c.request("GET", "/bucket", query="list-type=2")
    assert resolved == ["rgw.example"]  # once, not once per request
    put, get = handler.seen
    assert put["Host"] == f"rgw.example:{port}" and put["path"] == "/prefix/bucket/key"
    assert get["path"] == "/prefix/bucket?list-type=2"


def test_put_sends_and_signs_its_content_type(rgw: tuple[type[_Recorder], int]) -> None:
    handler, port = rgw
    client(f"http://127.0.0.1:{port}").request("PUT", "/bucket/key", body=b"x" * 16)
    put = handler.seen[0]
    assert put["Content-Type"] == "application/octet-stream"
    assert "content-type;host;" in put["Authorization"]


def signed_header_names(authorization: str) -> set[str]:
    match = re.search(r"SignedHeaders=([^,]+),", authorization)
    assert match, authorization
    return set(match.group(1).split(";"))


@pytest.mark.parametrize(
    ("method", "body", "query"),
    [
        ("PUT", b"x" * 4096, ""),
        ("PUT", b"", ""),  # a bucket
        ("PUT", b"<Tagging/>", "tagging"),
        ("GET", b"", "list-type=2&max-keys=3"),
        ("DELETE", b"", ""),
    ],
)
def test_every_header_sent_is_signed(rgw: tuple[type[_Recorder], int], method: str, body: bytes, query: str) -> None:
    """Tentacle's RGW refused the probe's PUT with 403 ("'content-type' supplied but not in
    CanonicalHeaders"): a header on the wire that the signature does not cover. Whatever http.client
    would add (Accept-Encoding, Content-Length, Host) must be among the signed ones."""
    handler, port = rgw
    client(f"http://127.0.0.1:{port}").request(method, "/bucket/key", body=body, query=query)
    seen = dict(handler.seen[0])
    assert seen.pop("method") == method
    seen.pop("path")
    sent = {name.lower() for name in seen}
    assert sent - {"authorization"} == signed_header_names(seen["Authorization"])
    if method == "PUT":
        assert seen["Content-Length"] == str(len(body))


def test_the_signature_over_every_header_matches_botocore(monkeypatch: pytest.MonkeyPatch) -> None:
    url, body = "http://127.0.0.1:7480/perfwatch-probe/rgw-1", b"x" * 4096
    headers = {"Accept-Encoding": "identity", "Content-Type": "application/octet-stream", "Content-Length": "4096"}
    ours = sign("PUT", url, headers, hashlib.sha256(body).hexdigest(), ACCESS, SECRET, "us-east-1", NOW)
    assert signed_header_names(ours["Authorization"]) == {
        "accept-encoding",
        "content-length",
        "content-type",
        "host",
        "x-amz-content-sha256",
        "x-amz-date",
    }
    theirs = botocore_authorization("PUT", url, body, monkeypatch, headers)
    assert ours["Authorization"] == theirs


def test_redirects_are_errors_not_followed(rgw: tuple[type[_Recorder], int]) -> None:
    handler, port = rgw
    handler.status = 302
    with pytest.raises(BenchError, match="HTTP 302 redirect, not followed"):
        client(f"http://127.0.0.1:{port}").request("GET", "/bucket")
    assert len(handler.seen) == 1


def test_errors_name_the_status_and_statuses_in_ok_are_answers(rgw: tuple[type[_Recorder], int]) -> None:
    handler, port = rgw
    handler.status = 409
    assert client(f"http://127.0.0.1:{port}").request("PUT", "/b", ok=(200, 409))[0] == 409
    handler.status = 403
    with pytest.raises(BenchError, match="HTTP 403") as err:
        client(f"http://127.0.0.1:{port}").request("GET", "/b")
    assert SECRET not in str(err.value)


def test_proxy_environment_is_ignored(rgw: tuple[type[_Recorder], int], monkeypatch: pytest.MonkeyPatch) -> None:
    handler, port = rgw
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "all_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")  # discard port: a request sent there would fail
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    client(f"http://127.0.0.1:{port}").request("GET", "/bucket")
    assert handler.seen[0]["path"] == "/bucket"


class _Misbehaving(http.server.BaseHTTPRequestHandler):
    """`drip`: promises 100,000 bytes and sends one every 0.2 s; `flood`: sends 8 MiB."""

    mode = "drip"
    stop = threading.Event()

    def do_GET(self) -> None:
        self.send_response(200)
        size = 100_000 if self.mode == "drip" else 8 << 20
        self.send_header("Content-Length", str(size))
        self.end_headers()
        try:
            if self.mode == "flood":
                self.wfile.write(b"x" * size)
            while self.mode == "drip" and not self.stop.wait(0.2):
                self.wfile.write(b"x")
                self.wfile.flush()
        except OSError:
            pass  # the client gave up, as it should

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize(("mode", "error"), [("drip", "no complete answer in 1 s"), ("flood", "answer larger than")])
def test_a_slow_or_huge_answer_ends_the_request_in_its_time_and_size(mode: str, error: str) -> None:
    """An endpoint dripping a byte at a time, or sending a huge answer, ends the request within its timeout
    and its size cap: the probe keeps its hard deadline (cancel works, later probes run) and its memory."""
    handler = type("Handler", (_Misbehaving,), {"mode": mode, "stop": threading.Event()})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        c = S3Client(f"http://127.0.0.1:{server.server_address[1]}", ACCESS, SECRET, "us-east-1", 1.0)
        started = time.monotonic()
        with pytest.raises(BenchError, match=error):
            c.request("GET", "/bucket")
        assert time.monotonic() - started < 5
    finally:
        handler.stop.set()
        server.shutdown()
        server.server_close()


def test_answers_are_read_up_to_the_cap_and_no_further() -> None:
    class Body:
        def __init__(self, size: int) -> None:
            self.left = size
            self.asked: list[int] = []

        def read(self, n: int) -> bytes:
            self.asked.append(n)
            n = min(n, self.left)
            self.left -= n
            return b"x" * n

    assert read_capped(Body(1000), 1000) == b"x" * 1000
    big = Body(10 << 20)
    with pytest.raises(AnswerTooLarge):
        read_capped(big, 1 << 20)
    assert sum(big.asked) <= (1 << 20) + 1
