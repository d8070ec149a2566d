"""What the HTTP endpoint answers, as a function of the request path (the server is the module's).

/metrics is the cache of the last collection, never a collection of its own; /healthz is 200 while
collections keep coming and 503 when they stopped (a liveness probe restarts a stuck exporter); / is a
small page that says the same."""

import gzip
import html
from typing import Callable, Dict, Tuple

from perfwatch.common.exposition import CONTENT_TYPE, render
from perfwatch.common.metrics_model import Sample
from perfwatch.common.server.responses import App, Response
from perfwatch.common.version import __version__

from . import families as f
from .collection_loop import Health

_PAGE = """<!DOCTYPE html>
<html><head><title>perfwatch host exporter</title></head>
<body><h1>perfwatch host exporter</h1>
<p>Version {version}. Host {hostname}.</p>
<p>Collection: {health}</p>
<ul><li><a href="/metrics">/metrics</a>: Prometheus metrics</li>
<li><a href="/healthz">/healthz</a>: 200 while collections keep coming, else 503</li></ul>
</body></html>
"""
_TEXT = "text/plain; charset=utf-8"


def make_app(
    parts: Callable[[bool], Tuple[bytes, bytes]],
    health: Callable[[], Health],
    hostname: str,
    http_refusals: Callable[[], Dict[str, int]] = dict,
) -> App:
    """parts(gzip) is the cached /metrics answer and its age (sent as they are, not copied); health() the
    state of the collection loop; http_refusals() the server's refusal counts, added as they are then."""

    def tail(compressed: bool) -> bytes:
        samples = [
            Sample(f.HTTP_REFUSED, "", (("hostname", hostname), ("reason", reason)), float(count))
            for reason, count in sorted(http_refusals().items())
        ]
        text = render(f.EXPORTER_REGISTRY, samples).encode("utf-8") if samples else b""
        return gzip.compress(text, compresslevel=1) if compressed and text else text

    def app(path: str, accepts_gzip: bool) -> Response:
        path = path.split("?", 1)[0]
        if path == "/metrics":
            headers = {"Content-Encoding": "gzip"} if accepts_gzip else {}
            cached, age = parts(accepts_gzip)
            return Response(200, CONTENT_TYPE, cached, headers, (age, tail(accepts_gzip)))
        if path == "/healthz":
            state = health()
            text = "{}: {}\n".format("ok" if state.ok else "stuck", state.message)
            return Response(200 if state.ok else 503, _TEXT, text.encode("utf-8"), {})
        if path == "/":
            state = health()
            page = _PAGE.format(
                version=html.escape(__version__),
                hostname=html.escape(hostname),
                health=html.escape(("" if state.ok else "STUCK: ") + state.message),
            )
            return Response(200, "text/html; charset=utf-8", page.encode("utf-8"), {})
        return Response(404, _TEXT, "no such page: {}\n".format(path).encode("utf-8"), {})

    return app
