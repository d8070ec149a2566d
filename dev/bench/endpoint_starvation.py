"""Figures for the endpoint under idle, slow and non-reading clients.

Serves a small body on 127.0.0.1 with perfwatch's HttpServer and, for each scenario, holds the bad
connections open while it scrapes: how many scrapes succeed, and their latency.

Usage: .venv/bin/python -m bench.endpoint_starvation [--scrapes 20] [--timeout 5]
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import resource
import socket
import statistics
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

from perfwatch.common.server import HttpServer, Response  # noqa: E402

BODY = b"ceph_perfwatch_up 1\n" * 2000
BIG = b"x" * (32 << 20)


def app(path: str, accepts_gzip: bool) -> Response:
    return Response(200, "text/plain", BIG if path == "/big" else BODY, {})


@contextlib.contextmanager
def held(port: int, n: int, send: bytes) -> Iterator[None]:
    socks = []
    try:
        for _ in range(n):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            if send:
                sock.sendall(send)
            socks.append(sock)
        time.sleep(0.2)
        yield
    finally:
        for sock in socks:
            sock.close()


def scrapes(port: int, n: int, timeout: float) -> tuple[int, list[float]]:
    ok, times = 0, []
    for _ in range(n):
        t0 = time.perf_counter()
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=timeout) as resp:
                ok += resp.read() == BODY
        except OSError:
            pass
        times.append(time.perf_counter() - t0)
    return ok, times


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scrapes", type=int, default=20)
    p.add_argument("--timeout", type=float, default=5.0, help="per scrape, seconds")
    args = p.parse_args()
    scenarios = [
        ("no other clients", [(0, b"")]),
        ("16 idle connections", [(16, b"")]),
        ("100 idle + 100 half-sent heads", [(100, b""), (100, b"GET /metrics HTTP/1.1\r\nHost: x\r\n")]),
        ("500 idle + 500 half-sent heads", [(500, b""), (500, b"GET /metrics HTTP/1.1\r\nHost: x\r\n")]),
        ("10 clients that never read a 32 MiB response", [(10, b"GET /big HTTP/1.1\r\n\r\n")]),
    ]
    if resource.getrlimit(resource.RLIMIT_NOFILE)[0] >= 8192:  # both ends of 2,000 connections, in one process
        scenarios.append(("2000 idle (the cap is 1024: oldest dropped)", [(2000, b"")]))
    for name, holds in scenarios:
        server = HttpServer(app, "127.0.0.1", 0, logging.getLogger("bench"))
        server.start()
        try:
            with contextlib.ExitStack() as stack:
                for n, send in holds:
                    stack.enter_context(held(server.bound_port, n, send))
                t0 = time.perf_counter()
                ok, times = scrapes(server.bound_port, args.scrapes, args.timeout)
                wall = time.perf_counter() - t0
        finally:
            server.stop()
        print(
            f"{name:>46}: {ok}/{args.scrapes} scrapes ok in {wall:.2f} s; "
            f"median {statistics.median(times) * 1000:.1f} ms, max {max(times) * 1000:.1f} ms; "
            f"server counts {server.stats()}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
