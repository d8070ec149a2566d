"""The exporter over real sockets: the HTTP endpoint, and the command line's exits."""

import gzip
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from perfwatch.common.exposition import CONTENT_TYPE
from perfwatch.common.metrics_model import Sample
from perfwatch.common.server import HttpServer
from perfwatch.common.version import __version__
from perfwatch_host_exporter.app import make_app
from perfwatch_host_exporter.collection_loop import CollectionLoop
from perfwatch_host_exporter.collector import HostCollector, HostSettings
from tests import paths
from tests.fixtures.exporter.fakehost import FakeHost

REPO = paths.REPO
ENV = dict(os.environ, PYTHONPATH="{}:{}".format(REPO / "exporters", REPO / "mgr_module"))


def fake_host(tmp_path: Path) -> FakeHost:
    host = FakeHost(tmp_path / "host")
    host.mount("/sys/fs/cgroup", "cgroup2", "rw")
    host.cgroup_files("/sys/fs/cgroup/ceph.slice", cpu_max="50000 100000", cpu_stat="nr_periods 1\nnr_throttled 0")
    host.process(10, "ceph-mon", ["ceph-mon", "-i", "a"], utime=123, cgroup="0::/ceph.slice\n")
    host.interface("eth0", "1000")
    return host


def serve(loop: CollectionLoop) -> HttpServer:
    srv = HttpServer(make_app(loop.parts, loop.health, "node9"), "127.0.0.1", 0, logging.getLogger("t"))
    srv.start()
    return srv


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    collector = HostCollector(
        HostSettings(hostname="node9"), root=fake_host(tmp_path).root(), clk_tck=100, page_size=4096
    )
    loop = CollectionLoop(collector.collect, "node9", 15.0, logging.getLogger("t"))
    loop.run_once()
    srv = serve(loop)
    try:
        yield f"http://127.0.0.1:{srv.bound_port}"
    finally:
        srv.stop()


def test_metrics_over_http_parse(served: str) -> None:
    with urllib.request.urlopen(served + "/metrics", timeout=10) as resp:
        assert resp.headers["Content-Type"] == CONTENT_TYPE
        text = resp.read().decode()
    samples = {s.name: s for f in text_string_to_metric_families(text) for s in f.samples}
    cpu = samples["ceph_perfwatch_daemon_cpu_seconds_total"]
    assert cpu.labels["ceph_daemon"] == "mon.a" and cpu.labels["hostname"] == "node9"
    assert samples["ceph_perfwatch_daemon_cgroup_cpu_limit_cores"].value == 0.5
    assert samples["ceph_perfwatch_network_link_capacity_bytes"].value == 125e6


def test_gzip_when_asked(served: str) -> None:
    req = urllib.request.Request(served + "/metrics", headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        assert resp.headers["Content-Encoding"] == "gzip"
        assert b"ceph_perfwatch_exporter_daemons" in gzip.decompress(resp.read())


def test_no_gzip_when_refused_with_q_0(served: str) -> None:
    req = urllib.request.Request(served + "/metrics", headers={"Accept-Encoding": "gzip;q=0, identity"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        assert resp.headers["Content-Encoding"] is None
        assert b"ceph_perfwatch_exporter_daemons" in resp.read()


def test_head_metrics_has_the_fields_of_get_and_no_body(served: str) -> None:
    req = urllib.request.Request(served + "/metrics", method="HEAD", headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        assert resp.status == 200 and resp.headers["Content-Type"] == CONTENT_TYPE
        assert resp.headers["Content-Encoding"] == "gzip" and int(resp.headers["Content-Length"]) > 0
        assert resp.read() == b""


def test_index_page_links_metrics_and_other_paths_are_404(served: str) -> None:
    with urllib.request.urlopen(served + "/", timeout=10) as resp:
        assert 'href="/metrics"' in resp.read().decode()
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(served + "/nope", timeout=10)
    assert info.value.code == 404


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_a_scrape_never_waits_for_a_collection_and_healthz_tells_a_stuck_one(tmp_path: Path) -> None:
    """The collection after the first one hangs (a read that never returns): /metrics still answers at
    once with the first one and its age; /healthz turns 503 once it has run longer than stale_after."""
    collector = HostCollector(
        HostSettings(hostname="node9"), root=fake_host(tmp_path).root(), clk_tck=100, page_size=4096
    )
    release = threading.Event()
    calls = []

    def collect() -> list[Sample]:
        calls.append(1)
        if len(calls) > 1:
            release.wait(30)
        return collector.collect()

    clock = Clock()
    loop = CollectionLoop(collect, "node9", 5.0, logging.getLogger("t"), clock)
    assert loop.stale_after == 60.0
    srv = serve(loop)
    url = f"http://127.0.0.1:{srv.bound_port}"
    try:
        status, text = get(url + "/healthz")
        assert status == 200 and text.startswith("ok: starting"), text
        status, text = get(url + "/metrics")
        assert status == 200 and "ceph_perfwatch_exporter_collections_total" in text
        assert "ceph_perfwatch_daemon_cpu_seconds_total" not in text, "nothing collected yet"
        loop.run_once()
        stuck = threading.Thread(target=loop.run_once, daemon=True)
        stuck.start()
        while loop.running_since is None:
            time.sleep(0.01)
        clock.now += 30.5
        status, text = get(url + "/metrics")
        assert status == 200, "a scrape does not wait for the running collection"
        found = {s.name: s for f in text_string_to_metric_families(text) for s in f.samples}
        assert found["ceph_perfwatch_daemon_cpu_seconds_total"].labels["ceph_daemon"] == "mon.a"
        assert found["ceph_perfwatch_exporter_cache_age_seconds"].value == 30.5
        assert found["ceph_perfwatch_exporter_collections_total"].value == 1
        assert get(url + "/healthz")[0] == 200, "30 s is not stuck yet"
        clock.now += 30
        status, text = get(url + "/healthz")
        assert status == 503 and "running for 60 s" in text, text
        assert "STUCK" in get(url + "/")[1]
        release.set()
        stuck.join(10)
        status, text = get(url + "/healthz")
        assert status == 200 and "ended 0.0 s ago" in text, text
    finally:
        release.set()
        srv.stop()


def test_a_failed_collection_keeps_the_last_answer_and_ages(tmp_path: Path) -> None:
    collector = HostCollector(
        HostSettings(hostname="node9"), root=fake_host(tmp_path).root(), clk_tck=100, page_size=4096
    )
    results: list[Any] = [collector.collect, RuntimeError("a bug")]

    def collect() -> list[Sample]:
        step = results.pop(0)
        if isinstance(step, Exception):
            raise step
        return step()

    clock = Clock()
    loop = CollectionLoop(collect, "node9", 15.0, logging.getLogger("t"), clock)
    loop.run_once()
    clock.now += 20
    loop.run_once()
    text = loop.body(False).decode()
    assert 'ceph_perfwatch_exporter_cache_age_seconds{hostname="node9"} 20\n' in text
    assert loop.collections == 1 and loop.health().ok
    clock.now += 100
    assert not loop.health().ok and "no collection has ended for 120 s" in loop.health().message


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "perfwatch_host_exporter", *args],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


@pytest.mark.parametrize(
    "args",
    [
        ["--port", "70000"],
        ["--port", "http"],
        ["--listen-address", "not-an-ip"],
        ["--asok-timeout", "0"],
        ["--bogus"],
        ["--collect-interval", "0.5"],
        ["--collect-interval", "301"],
        ["--daemon-user", "no such user"],
        ["--daemon-user", "nosuchuser-perfwatch"],
    ],
)
def test_bad_options_exit_2_with_one_line(args: list[str]) -> None:
    proc = run_cli(*args)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith("perfwatch-host-exporter: error:")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_serves_and_exits_0_on_sigterm() -> None:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "perfwatch_host_exporter", "--listen-address", "127.0.0.1", "--port", str(port)],
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 20
        body = b""
        while time.monotonic() < deadline and b"collection_duration" not in body:  # the first collection's end
            try:
                body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read()
            except OSError:
                time.sleep(0.1)
        assert b"ceph_perfwatch_exporter_collection_duration_seconds" in body
        list(text_string_to_metric_families(body.decode()))
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=15)
        assert proc.returncode == 0, stderr
        assert f"serving http://127.0.0.1:{port}/metrics" in stderr
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_taken_port_is_a_one_line_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        proc = run_cli("--listen-address", "127.0.0.1", "--port", str(s.getsockname()[1]))
    assert proc.returncode == 1
    assert "cannot listen" in proc.stderr


def test_the_front_page_names_the_version(served: str) -> None:
    with urllib.request.urlopen(served + "/", timeout=10) as resp:
        page = resp.read().decode()
    assert f"Version {__version__}." in page and "Host node9." in page
