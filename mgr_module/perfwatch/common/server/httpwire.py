"""HTTP/1 on the wire, pure: find and parse a request head, negotiate gzip, format a response head.

No sockets here; the rest of the server does the I/O and calls these.
"""

import email.utils
import http
import re
from typing import Dict, List, NamedTuple, Optional

_HEAD_END = re.compile(b"\r?\n\r?\n")
_VERSION = re.compile(r"HTTP/1\.[0-9]\Z")
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+\Z")
_QVALUE = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\Z")


class Request(NamedTuple):
    method: str
    target: str
    version: str
    headers: Dict[str, str]  # lower-case names; repeated fields joined with ", "


class BadRequest(Exception):
    """The head cannot be served; status is what to answer (400, 501, 505)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status


def head_end(buf: bytes, start: int = 0) -> int:
    """Index just past the blank line that ends the head in buf, or -1 when it has not arrived yet.

    Empty lines before the request line are skipped (RFC 9112 2.2); bare LF line ends are accepted.
    start lets a caller skip the part of buf it has already searched.
    """
    lead = len(buf) - len(buf.lstrip(b"\r\n"))
    match = _HEAD_END.search(buf, max(start, lead))
    return match.end() if match else -1


def parse_head(head: bytes) -> Request:
    """The request line and header fields of a complete head (as found by head_end). Raises BadRequest."""
    text = head.decode("latin-1").lstrip("\r\n")
    lines = [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[1]:
        raise BadRequest(400, "malformed request line")
    method, target, version = parts
    if not _TOKEN.match(method):
        raise BadRequest(400, "malformed method")
    if not version.startswith("HTTP/"):
        raise BadRequest(400, "malformed version")
    if not _VERSION.match(version):
        raise BadRequest(505, "unsupported version")
    fields: Dict[str, List[str]] = {}
    last: Optional[str] = None
    for line in lines[1:]:
        if not line:
            break
        if line[0] in " \t":  # obsolete line folding: part of the previous field's value
            if last is None:
                raise BadRequest(400, "folded line without a field")
            fields[last][-1] += " " + line.strip(" \t")
            continue
        name, sep, value = line.partition(":")
        if not sep or not _TOKEN.match(name):
            raise BadRequest(400, "malformed header field")
        last = name.lower()
        fields.setdefault(last, []).append(value.strip(" \t"))
    return Request(method, target, version, {name: ", ".join(values) for name, values in fields.items()})


def _qvalue(params: List[str]) -> float:
    """The weight among a coding's parameters: 1 when absent, 0 when unreadable (never gzip by mistake)."""
    for param in params:
        name, sep, value = param.partition("=")
        if name.strip(" \t").lower() != "q":
            continue
        value = value.strip(" \t")
        if not sep or not _QVALUE.match(value):
            return 0.0
        q = float(value)
        return q if q <= 1.0 else 0.0
    return 1.0


def accepts_gzip(accept_encoding: Optional[str]) -> bool:
    """Whether a response may be gzip-coded, per the Accept-Encoding field (RFC 9110 12.5.3).

    gzip (or x-gzip) with q > 0 is accepted, else "*" with q > 0 when gzip is not named; names are
    case-insensitive and whitespace is optional. A coding named twice keeps its lowest weight. An
    "identity" named with a higher weight than gzip wins. No field (or an empty one) means no gzip.
    """
    if not accept_encoding:
        return False
    weights: Dict[str, float] = {}
    for element in accept_encoding.split(","):
        coding, *params = element.split(";")
        coding = coding.strip(" \t").lower()
        if not coding:
            continue
        if coding == "x-gzip":
            coding = "gzip"
        q = _qvalue(params)
        weights[coding] = min(q, weights.get(coding, q))
    gzip_q = weights.get("gzip", weights.get("*", 0.0))
    return gzip_q > 0.0 and gzip_q >= weights.get("identity", 0.0)


def reason(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return "Status {}".format(status)


def response_head(status: int, headers: Dict[str, str], server: str, now: Optional[float] = None) -> bytes:
    """Status line and fields, ending in the blank line. The connection closes after every response."""
    lines = ["HTTP/1.1 {} {}".format(status, reason(status))]
    lines.append("Server: {}".format(server))
    lines.append("Date: {}".format(email.utils.formatdate(now, usegmt=True)))
    lines.extend("{}: {}".format(name, value) for name, value in headers.items())
    lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def printable(text: str) -> str:
    """`text` for a log line: control characters (newlines, escape sequences) as \\xNN, so that what a
    client sends, or a process calls itself, stays one line and shows as what it is."""
    return "".join(ch if ch.isprintable() else "\\x{:02x}".format(ord(ch)) if ord(ch) < 256 else "?" for ch in text)
