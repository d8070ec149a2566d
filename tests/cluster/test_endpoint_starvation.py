"""Idle and slow clients cannot starve the metrics endpoints: the module's (in the active mgr) and a host
exporter's. The lab incident: 16 silent connections stopped every scrape of either for 30 s."""

from __future__ import annotations

import gzip
import http.client
import socket
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from .labutil import LabHandle


def endpoints(lab: LabHandle) -> dict[str, str]:
    active = lab.ceph("mgr", "stat")["active_name"]
    exporter = next(url for name, url in lab.lab.exporter_urls().items() if name.startswith("exporter."))
    return {"module": lab.lab.module_urls()[active] + "metrics", "exporter": exporter}


@contextmanager
def held_connections(url: str, idle: int, half_sent: int) -> Iterator[list[socket.socket]]:
    """`idle` connections that send nothing and `half_sent` whose request never ends, held open."""
    parts = urllib.parse.urlsplit(url)
    held = []
    try:
        for i in range(idle + half_sent):
            sock = socket.create_connection((parts.hostname, parts.port), timeout=5)
            if i >= idle:
                sock.sendall(f"GET {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\n".encode())
            held.append(sock)
        yield held
    finally:
        for sock in held:
            sock.close()


def request(url: str, method: str = "GET", headers: dict[str, str] | None = None) -> tuple[int, dict, bytes]:
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
    try:
        conn.request(method, parts.path, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read()
    finally:
        conn.close()


@pytest.mark.parametrize("which", ["module", "exporter"])
def test_scrapes_succeed_while_100_idle_and_100_half_sent_connections_are_held(lab: LabHandle, which: str) -> None:
    url = endpoints(lab)[which]
    with held_connections(url, idle=100, half_sent=100) as held:
        assert len(held) == 200
        answers = [request(url) for _ in range(20)]
    assert [status for status, _h, _b in answers] == [200] * 20
    assert all(b"ceph_perfwatch_" in body for _s, _h, body in answers)


@pytest.mark.parametrize("which", ["module", "exporter"])
def test_head_is_answered_and_gzip_follows_the_q_value(lab: LabHandle, which: str) -> None:
    url = endpoints(lab)[which]
    status, headers, body = request(url, "HEAD")
    assert status == 200 and body == b"" and int(headers["Content-Length"]) > 0
    status, headers, body = request(url, headers={"Accept-Encoding": "gzip;q=0"})
    assert status == 200 and "Content-Encoding" not in headers and b"ceph_perfwatch_" in body
    status, headers, body = request(url, headers={"Accept-Encoding": "gzip;q=0.5, identity;q=0.1"})
    assert headers.get("Content-Encoding") == "gzip" and b"ceph_perfwatch_" in gzip.decompress(body)
