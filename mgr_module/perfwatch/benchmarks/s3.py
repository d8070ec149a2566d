"""A minimal S3 client for the rgw probe: AWS Signature Version 4 with the standard library, and PUT,
LIST and DELETE with a timeout. The secret key is only ever used to sign; it never appears in an error,
a log line or a result."""

import datetime
import hashlib
import hmac
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Dict, List, Optional, Tuple

from .base import BenchError

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


class S3Client:
    def __init__(self, endpoint: str, access_key: str, secret_key: str, region: str, timeout: float) -> None:
        self.endpoint = endpoint.rstrip("/")
        self._access_key = access_key
        self._secret_key = secret_key
        self.region = region
        self.timeout = timeout

    def request(
        self, method: str, path: str, body: bytes = b"", query: str = "", ok: Tuple[int, ...] = (200, 204)
    ) -> Tuple[int, float, bytes]:
        """(HTTP status, seconds, body). Raises BenchError with the status and S3 error code, never a secret."""
        url = self.endpoint + path + ("?" + query if query else "")
        payload = hashlib.sha256(body).hexdigest() if body else EMPTY_SHA256
        headers = sign(method, url, {}, payload, self._access_key, self._secret_key, self.region,
                       datetime.datetime.now(datetime.timezone.utc))  # fmt: skip
        req = urllib.request.Request(url, data=body if method == "PUT" else None, headers=headers, method=method)
        t0 = time.monotonic()
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                data = resp.read()
                return resp.status, time.monotonic() - t0, data
        except urllib.error.HTTPError as exc:
            if exc.code in ok:
                return exc.code, time.monotonic() - t0, b""
            code = _error_code(exc.read())
            raise BenchError("S3 {} {}: HTTP {}{}".format(method, path, exc.code, " " + code if code else "")) from None
        except (urllib.error.URLError, OSError) as exc:
            raise BenchError("S3 {} {}: {}".format(method, path, getattr(exc, "reason", exc))) from None


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
