import gzip
import logging
import time
import urllib.request

from perfwatch.collection.collector import Collector, Settings
from perfwatch.common.server import HttpServer
from perfwatch.endpoint.pages import active_app, standby_app
from tests.unit.fakes import FakeAdapter


def test_active_serves_metrics_landing_page_and_404() -> None:
    collector = Collector(FakeAdapter(1))
    collector.collect(Settings(1, 1))
    app = active_app(collector.cache, "x")
    metrics = app("/metrics?foo=1", False)
    assert metrics.status == 200 and metrics.content_type.startswith("text/plain; version=0.0.4")
    assert b'ceph_perfwatch_bluestore_onode_hits_total{ceph_daemon="osd.0"}' in metrics.body
    assert app("/metrics", True).headers == {"Content-Encoding": "gzip"}
    page = app("/", False)
    assert page.status == 200 and b'href="/metrics"' in page.body and b"mgr.x" in page.body
    assert app("/nope", False).status == 404


def test_active_before_the_first_collection_serves_an_empty_200() -> None:
    collector = Collector(FakeAdapter(1))
    resp = active_app(collector.cache, "x", clock=time.time)("/metrics", False)
    assert (resp.status, resp.content()) == (200, b"")


def test_standby_default_is_an_empty_200_and_error_mode_uses_the_configured_status() -> None:
    mode = {"value": ("default", 503)}
    app = standby_app("y", lambda: mode["value"], lambda: "http://10.0.0.1:9284/")
    assert (app("/metrics", False).status, app("/metrics", False).body) == (200, b"")
    mode["value"] = ("error", 503)
    assert app("/metrics", False).status == 503
    page = app("/", False)
    assert b"standby" in page.body and b"http://10.0.0.1:9284/" in page.body


def test_active_app_through_the_server_negotiates_gzip_and_answers_head() -> None:
    collector = Collector(FakeAdapter(1))
    collector.collect(Settings(1, 1))
    srv = HttpServer(active_app(collector.cache, "x"), "127.0.0.1", 0, logging.getLogger("t"))
    srv.start()
    url = f"http://127.0.0.1:{srv.bound_port}/metrics"
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            plain = resp.read()
        refused = urllib.request.Request(url, headers={"Accept-Encoding": "gzip;q=0"})
        with urllib.request.urlopen(refused, timeout=5) as resp:
            assert resp.headers["Content-Encoding"] is None
            assert resp.read().startswith(plain[:200])
        wanted = urllib.request.Request(url, headers={"Accept-Encoding": "br, gzip;q=0.5"})
        with urllib.request.urlopen(wanted, timeout=5) as resp:
            assert resp.headers["Content-Encoding"] == "gzip"
            assert gzip.decompress(resp.read()).startswith(plain[:200])
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=5) as resp:
            assert resp.status == 200 and int(resp.headers["Content-Length"]) > 0 and resp.read() == b""
    finally:
        srv.stop()
