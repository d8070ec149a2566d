"""What an app answers (Response) and how the server sends it: head, then body unless the request was HEAD."""

from typing import Callable, Dict, List, NamedTuple, Optional

from . import httpwire

SERVER_NAME = "ceph-perfwatch"


class Response(NamedTuple):
    status: int
    content_type: str
    body: bytes
    headers: Dict[str, str]


# app(path, accepts_gzip): the server reads Accept-Encoding (httpwire.accepts_gzip) and answers HEAD
# with GET's status and fields, so an app only maps a path to a response.
App = Callable[[str, bool], Response]


def encode(resp: Response, head_only: bool, now: Optional[float] = None) -> List[bytes]:
    """The response as bytes to send: head, then body unless head_only (HEAD gets GET's fields)."""
    headers = {"Content-Type": resp.content_type, "Content-Length": str(len(resp.body))}
    headers.update(resp.headers)
    head = httpwire.response_head(resp.status, headers, SERVER_NAME, now)
    return [head] if head_only or not resp.body else [head, resp.body]


def error(status: int, head_only: bool = False, headers: Optional[Dict[str, str]] = None) -> List[bytes]:
    """A plain-text answer with just the status, such as "503 Service Unavailable"."""
    return text_response(status, "{} {}\n".format(status, httpwire.reason(status)), head_only, headers)


def text_response(
    status: int, text: str, head_only: bool = False, headers: Optional[Dict[str, str]] = None
) -> List[bytes]:
    """A plain-text answer that says `text`."""
    body = text.encode("utf-8")
    return encode(Response(status, "text/plain; charset=utf-8", body, dict(headers or {})), head_only)
