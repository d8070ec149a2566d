"""What the HTTP endpoint answers, as a function of the request path (the server is the module's)."""

import gzip
import html
from typing import Callable

from perfwatch.exposition import CONTENT_TYPE
from perfwatch.version import __version__
from perfwatch.web import Response

App = Callable[[str, bool], Response]

_PAGE = """<!DOCTYPE html>
<html><head><title>perfwatch host exporter</title></head>
<body><h1>perfwatch host exporter</h1>
<p>Version {version}. Host {hostname}.</p>
<ul><li><a href="/metrics">/metrics</a>: Prometheus metrics</li></ul>
</body></html>
"""


def make_app(render: Callable[[], str], hostname: str) -> App:
    """/metrics collects now (scrapes take turns) and renders; / is a small page; the rest is 404."""

    def app(path: str, accepts_gzip: bool) -> Response:
        path = path.split("?", 1)[0]
        if path == "/metrics":
            body = render().encode("utf-8")
            if accepts_gzip:
                return Response(200, CONTENT_TYPE, gzip.compress(body), {"Content-Encoding": "gzip"})
            return Response(200, CONTENT_TYPE, body, {})
        if path == "/":
            page = _PAGE.format(version=html.escape(__version__), hostname=html.escape(hostname)).encode("utf-8")
            return Response(200, "text/html; charset=utf-8", page, {})
        return Response(404, "text/plain; charset=utf-8", "no such page: {}\n".format(path).encode("utf-8"), {})

    return app
