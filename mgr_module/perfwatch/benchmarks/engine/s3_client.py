"""A minimal S3 client for the rgw probe: AWS Signature Version 4 with the standard library, and PUT,
LIST and DELETE with a timeout over http.client (not urllib: no file:// URLs, no proxies from the
environment, no redirects followed). The secret key is only ever used to sign; it never appears in an
error, a log line or a result."""

import contextlib
import datetime
import hashlib
import hmac
import http.client
import socket
import ssl
import threading
import time
import urllib.parse
from typing import Any, Callable, Dict, List, Optional, Tuple

from ...options import s3_endpoint
from ..base import BenchError

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


def _hmac(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode("utf-8"), hashlib.sha256).digest()


def sign(
    method: str,
    url: str,
    headers: Dict[str, str],
    payload_sha256: str,
    access_key: str,
    secret_key: str,
    region: str,
    now: datetime.datetime,
) -> Dict[str, str]:
    """Headers for a SigV4-signed request (service s3): the given ones plus Host, X-Amz-Date,
    X-Amz-Content-Sha256 and Authorization."""
    parts = urllib.parse.urlsplit(url)
    amz_date = now.strftime("%Y%m%dT%H%M%SZ")
    date = amz_date[:8]
    out = dict(headers)
    out["Host"] = parts.netloc
    out["X-Amz-Date"] = amz_date
    out["X-Amz-Content-Sha256"] = payload_sha256
    canonical_headers = sorted((k.lower().strip(), " ".join(v.split())) for k, v in out.items())
    signed = ";".join(k for k, _ in canonical_headers)
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    canonical_query = "&".join(
        "{}={}".format(urllib.parse.quote(k, safe="-_.~"), urllib.parse.quote(v, safe="-_.~")) for k, v in sorted(query)
    )
    canonical = "\n".join(
        [
            method,
            # The URL's path is already percent-encoded: S3 wants it encoded exactly once.
            urllib.parse.quote(urllib.parse.unquote(parts.path or "/"), safe="/-_.~"),
            canonical_query,
            "".join("{}:{}\n".format(k, v) for k, v in canonical_headers),
            signed,
            payload_sha256,
        ]
    )
    scope = "{}/{}/s3/aws4_request".format(date, region)
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode("utf-8")).hexdigest()])
    key = _hmac(_hmac(_hmac(_hmac(("AWS4" + secret_key).encode("utf-8"), date), region), "s3"), "aws4_request")
    signature = hmac.new(key, to_sign.encode("utf-8"), hashlib.sha256).hexdigest()
    out["Authorization"] = "AWS4-HMAC-SHA256 Credential={}/{}, SignedHeaders={}, Signature={}".format(
        access_key, scope, signed, signature
    )
    return out


def request_headers(method: str, body: bytes, content_type: str) -> Dict[str, str]:
    """Every header a request sends besides those sign() adds, so that all are signed: RGW refuses a
    request carrying a header it expects signed but not in SignedHeaders (Tentacle: "'content-type'
    supplied but not in CanonicalHeaders"). http.client would otherwise add Accept-Encoding to every
    request and Content-Length to a PUT, unsigned; a body is only sent with PUT."""
    headers = {"Accept-Encoding": "identity"}
    if method == "PUT":
        headers["Content-Type"] = content_type
        headers["Content-Length"] = str(len(body))
    return headers


def resolve(host: str, port: int) -> List[str]:
    """Every address host resolves to (the system resolver, as urllib would use)."""
    infos = socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """Connects to an address resolved and checked beforehand, not to what the name resolves to now."""

    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """The TLS form: the connection goes to the checked address; the certificate is checked against the
    URL's host name."""

    def __init__(self, host: str, port: int, address: str, timeout: float, context: ssl.SSLContext) -> None:
        super().__init__(host, port, timeout=timeout, context=context)
        self._address = address
        self._tls = context

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._tls.wrap_socket(sock, server_hostname=self.host)


class S3Client:
    """Signed requests to one endpoint. The endpoint must pass s3_endpoint.check_s3_endpoint (checked
    here again, whatever config let through); its host is resolved once, and every address it resolves
    to must be allowed, before the first request. No proxy (environment variables are not read), no
    redirect (a 3xx is an error), no scheme but http and https."""

    def __init__(
        self,
        endpoint: str,
        access_key: str,
        secret_key: str,
        region: str,
        timeout: float,
        resolver: Callable[[str, int], List[str]] = resolve,
    ) -> None:
        why = s3_endpoint.check_s3_endpoint(endpoint)
        if why is not None or not endpoint:
            raise BenchError("S3 endpoint refused: {}".format(why or "empty"))
        self.endpoint = endpoint.rstrip("/")
        parts = urllib.parse.urlsplit(self.endpoint)
        self._https = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port or (443 if self._https else 80)
        self._prefix = parts.path
        self._resolver = resolver
        self._address: Optional[str] = None
        self._access_key = access_key
        self._secret_key = secret_key
        self.region = region
        self.timeout = timeout

    def _connection(self) -> http.client.HTTPConnection:
        if self._address is None:
            try:
                self._address = s3_endpoint.resolved_address(self._host, self._port, self._resolver)
            except ValueError as exc:
                raise BenchError("S3 endpoint refused: {}".format(exc)) from None
            except OSError as exc:
                raise BenchError("S3 endpoint {}: cannot resolve: {}".format(self._host, exc)) from None
        if self._https:
            return _PinnedHTTPSConnection(
                self._host, self._port, self._address, self.timeout, ssl.create_default_context()
            )
        return _PinnedHTTPConnection(self._host, self._port, self._address, self.timeout)

    def request(
        self,
        method: str,
        path: str,
        body: bytes = b"",
        query: str = "",
        ok: Tuple[int, ...] = (200, 204),
        content_type: str = "application/octet-stream",
    ) -> Tuple[int, float, bytes]:
        """(HTTP status, seconds, body). Raises BenchError with the status and S3 error code, never a secret."""
        url = self.endpoint + path + ("?" + query if query else "")
        payload = hashlib.sha256(body).hexdigest() if body else EMPTY_SHA256
        headers = sign(method, url, request_headers(method, body, content_type), payload, self._access_key,
                       self._secret_key, self.region, datetime.datetime.now(datetime.timezone.utc))  # fmt: skip
        target = self._prefix + path + ("?" + query if query else "")
        t0 = time.monotonic()
        conn = self._connection()
        # The whole exchange, headers and body, ends within `timeout` (a socket timeout bounds one read
        # only: an endpoint dripping a byte a second would hold the probe for ever), and the answer is
        # read up to MAX_ANSWER bytes (the probe's answers are a few KiB: a huge one must not fill the mgr).
        expired = threading.Event()
        sockets: List[Any] = []  # the connection's socket (getresponse() hands it on to the response)

        def expire() -> None:
            expired.set()
            for sock in sockets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)  # wakes a read blocked in another thread

        timer = threading.Timer(self.timeout, expire)
        timer.daemon = True
        timer.start()
        try:
            conn.connect()
            sockets.append(conn.sock)
            if expired.is_set():  # the deadline passed while connecting
                raise OSError("timed out")
            # Every header is given here, so http.client adds none of its own (Host, Accept-Encoding,
            # Content-Length): what is sent is exactly what was signed.
            conn.request(method, target, body=body if method == "PUT" else None, headers=headers)
            resp = conn.getresponse()
            data = read_capped(resp, MAX_ANSWER)
        except (http.client.HTTPException, OSError, AnswerTooLarge) as exc:
            if expired.is_set():
                raise BenchError(
                    "S3 {} {}: no complete answer in {:.0f} s".format(method, path, self.timeout)
                ) from None
            raise BenchError("S3 {} {}: {}".format(method, path, str(exc) or type(exc).__name__)) from None
        finally:
            timer.cancel()
            conn.close()
        if expired.is_set():
            raise BenchError("S3 {} {}: no complete answer in {:.0f} s".format(method, path, self.timeout))
        status = resp.status
        if status in ok or 200 <= status < 300:
            return status, time.monotonic() - t0, data
        if 300 <= status < 400:
            raise BenchError("S3 {} {}: HTTP {} redirect, not followed".format(method, path, status))
        code = _error_code(data)
        raise BenchError("S3 {} {}: HTTP {}{}".format(method, path, status, " " + code if code else ""))


MAX_ANSWER = 1 << 20  # bytes of an S3 answer read at most: a LIST of a few keys, a tag set, an error


class AnswerTooLarge(Exception):
    pass


def read_capped(resp: Any, limit: int) -> bytes:
    """The body of an HTTP answer, refused (AnswerTooLarge) past `limit` bytes, read a chunk at a time."""
    data = bytearray()
    while True:
        chunk = resp.read(min(65536, limit + 1 - len(data)))
        if not chunk:
            return bytes(data)
        data += chunk
        if len(data) > limit:
            raise AnswerTooLarge("answer larger than {} bytes: not read further".format(limit))


def _error_code(body: bytes) -> Optional[str]:
    text = body.decode("utf-8", "replace")
    start = text.find("<Code>")
    end = text.find("</Code>")
    return text[start + 6 : end] if 0 <= start < end else None


def listed_keys(body: bytes) -> List[str]:
    """The object keys of a ListObjectsV2 answer."""
    import xml.etree.ElementTree as ET

    root = ET.fromstring(body)
    return [el.text or "" for el in root.iter() if el.tag.endswith("}Key") or el.tag == "Key"]
