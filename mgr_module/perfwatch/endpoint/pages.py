"""What the module's HTTP endpoint answers, as plain functions of the request path (no sockets here)."""

import gzip
import html
import time
from typing import Callable, Dict, Tuple

from ..collection.module_families import HTTP_REFUSED, MODULE_REGISTRY
from ..common.exposition import CONTENT_TYPE, render
from ..common.metrics_cache import MetricsCache
from ..common.metrics_model import Sample
from ..common.server.responses import App, Response
from ..common.version import __version__

_PAGE = """<!DOCTYPE html>
<html><head><title>ceph-perfwatch</title></head>
<body><h1>ceph-perfwatch {version}</h1>
<p>{role}</p>
<ul><li><a href="/metrics">/metrics</a>: Prometheus metrics{metrics_note}</li></ul>
</body></html>
"""


def _page(role: str, metrics_note: str) -> Response:
    text = _PAGE.format(version=html.escape(__version__), role=role, metrics_note=metrics_note)
    return Response(200, "text/html; charset=utf-8", text.encode("utf-8"), {})


def _not_found(path: str) -> Response:
    return Response(404, "text/plain; charset=utf-8", "no such page: {}\n".format(path).encode("utf-8"), {})


def refusals_text(counts: Dict[str, int], compressed: bool) -> bytes:
    """The endpoint's refusal counts (server.security.REASONS) as exposition text, gzipped when asked."""
    samples = [Sample(HTTP_REFUSED, "", (("reason", r),), float(n)) for r, n in sorted(counts.items())]
    text = render(MODULE_REGISTRY, samples).encode("utf-8") if samples else b""
    return gzip.compress(text, compresslevel=1) if compressed and text else text


def active_app(
    cache: MetricsCache,
    mgr_id: str,
    clock: Callable[[], float] = time.time,
    http_refusals: Callable[[], Dict[str, int]] = dict,
) -> App:
    def app(path: str, accepts_gzip: bool) -> Response:
        path = path.split("?", 1)[0]
        if path == "/":
            return _page("Served by the active mgr, mgr.{}.".format(html.escape(mgr_id)), "")
        if path == "/metrics":
            cached, age = cache.parts(clock(), compressed=accepts_gzip)
            headers = {"Content-Encoding": "gzip"} if accepts_gzip else {}
            return Response(200, CONTENT_TYPE, cached, headers, (age, refusals_text(http_refusals(), accepts_gzip)))
        return _not_found(path)

    return app


def standby_app(mgr_id: str, behaviour: Callable[[], Tuple[str, int]], active_uri: Callable[[], str]) -> App:
    """A standby answers /metrics with an empty 200 ("default") or an error status ("error").

    behaviour() gives (standby_behaviour, standby_error_status_code), read at each request.
    """

    def app(path: str, accepts_gzip: bool) -> Response:
        path = path.split("?", 1)[0]
        if path == "/":
            uri = active_uri()
            where = ' The active mgr serves <a href="{0}">{0}</a>.'.format(html.escape(uri)) if uri else ""
            return _page("mgr.{} is a standby.{}".format(html.escape(mgr_id), where), " (empty on a standby)")
        if path == "/metrics":
            mode, error_status = behaviour()
            if mode == "error":
                msg = "mgr.{} is a standby; scrape the active mgr\n".format(mgr_id).encode("utf-8")
                return Response(error_status, "text/plain; charset=utf-8", msg, {})
            return Response(200, CONTENT_TYPE, b"", {})
        return _not_found(path)

    return app
