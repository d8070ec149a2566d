"""What an app answers (Response) and how the server sends it: head, then body unless the request was HEAD."""

from typing import Callable, Dict, List, NamedTuple, Optional, Tuple

from . import httpwire

SERVER_NAME = "ceph-perfwatch"


class Response(NamedTuple):
    status: int
    content_type: str
    body: bytes
    headers: Dict[str, str]
    # sent after body, as they are: a cached page goes out without being copied into a new one per
    # request (32 slow clients of a 36 MB page would otherwise hold 32 copies)
    extra: Tuple[bytes, ...] = ()

    def content(self) -> bytes:
        """The whole body, joined (for tests and small answers)."""
        return b"".join((self.body, *self.extra))


# app(path, accepts_gzip): the server reads Accept-Encoding (httpwire.accepts_gzip) and answers HEAD
# with GET's status and fields, so an app only maps a path to a response.
App = Callable[[str, bool], Response]


def encode(resp: Response, head_only: bool, now: Optional[float] = None) -> List[bytes]:
    """The response as bytes to send: head, then body unless head_only (HEAD gets GET's fields)."""
    parts = [part for part in (resp.body, *resp.extra) if part]
    headers = {"Content-Type": resp.content_type, "Content-Length": str(sum(len(part) for part in parts))}
    headers.update(resp.headers)
    head = httpwire.response_head(resp.status, headers, SERVER_NAME, now)
    return [head] if head_only else [head, *parts]


def error(status: int, head_only: bool = False, headers: Optional[Dict[str, str]] = None) -> List[bytes]:
    """A plain-text answer with just the status, such as "503 Service Unavailable"."""
    return text_response(status, "{} {}\n".format(status, httpwire.reason(status)), head_only, headers)


def text_response(
    status: int, text: str, head_only: bool = False, headers: Optional[Dict[str, str]] = None
) -> List[bytes]:
    """A plain-text answer that says `text`."""
    body = text.encode("utf-8")
    return encode(Response(status, "text/plain; charset=utf-8", body, dict(headers or {})), head_only)
