"""The synthetic cluster (dev/bench/synthetic_cluster.py) served as the many scrape targets a real one has: one
target per source and instance, as the series' own `instance` label says (each host's node_exporter and
perfwatch host exporter, the active mgr's perfwatch and prometheus modules, the standby's perfwatch module),
so that a sharded scraper has targets to share out. For dev/bench/vm_verdicts.py.

Each target is GET /metrics/<source>/<instance>, rendered at the moment of the request (counters are straight
lines in time, as SyntheticCluster makes them), every sample stamped with that moment. Only 127.0.0.1. Any
POST answers 200 and is dropped: a sink for vmalert's notifications, which it must send somewhere.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from bench.synthetic_cluster import Line, SyntheticCluster

INSTANCE = re.compile(r'instance="([^"]+)"')
CHUNK = 50_000  # lines rendered at a time


class Target:
    """One scrape target's lines; its gauges rendered once, its counters at each scrape."""

    def __init__(self, source: str, instance: str, lines: list[Line], t_ref: float) -> None:
        self.source, self.instance, self.t_ref = source, instance, t_ref
        self.path = f"/metrics/{source}/{instance}"
        self.series = len(lines)
        self.static = "".join(f"{text} {base:.12g}\n" for text, base, slope in lines if not slope).encode()
        self.moving = [(text, base, slope) for text, base, slope in lines if slope]

    def render(self, t: float) -> Iterator[bytes]:
        """The lines at time t, each stamped with t: a scraper stores them at the moment their values are of,
        however late it reads them (without the stamp, a rate is off by the server's delay over the range)."""
        ms = int(t * 1000)
        yield self.static.replace(b"\n", b" %d\n" % ms)
        d = ms / 1000 - self.t_ref
        for i in range(0, len(self.moving), CHUNK):
            lines = self.moving[i : i + CHUNK]
            yield "".join(f"{text} {base + slope * d:.12g} {ms}\n" for text, base, slope in lines).encode()


def split_targets(cluster: SyntheticCluster) -> list[Target]:
    """The cluster's series grouped by (source, instance label), sorted."""
    groups: dict[tuple[str, str], list[Line]] = {}
    for source, lines in cluster.by_source.items():
        for line in lines:
            found = INSTANCE.search(line[0])
            groups.setdefault((source, found.group(1) if found else "none"), []).append(line)
    return [Target(s, i, lines, cluster.t_ref) for (s, i), lines in sorted(groups.items())]


class TargetServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # the listen backlog: a scraper opens hundreds of connections at once (default 5)

    def __init__(self, targets: list[Target]) -> None:
        self.targets = {t.path: t for t in targets}
        self.scraped: dict[str, float] = {}  # path -> time.time() of its first scrape since reset()
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), Handler)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.server_address[1]}"

    def reset(self) -> None:
        with self.lock:
            self.scraped.clear()

    def all_scraped(self) -> float:
        """When every target had been scraped once since reset() (0 until then)."""
        with self.lock:
            return max(self.scraped.values()) if len(self.scraped) == len(self.targets) else 0.0

    def scrape_configs(self) -> list[dict[str, Any]]:
        """One job per source, a static target per instance (honor_labels: the series keep their job, instance,
        cluster and hostname). The target's own `instance` label makes each target's labels unique, which
        scrape sharding hashes; honor_labels makes the scraped one win, and it is the same."""
        jobs: dict[str, list[dict[str, Any]]] = {}
        for t in self.targets.values():
            jobs.setdefault(t.source, []).append(
                {"targets": [self.address], "labels": {"__metrics_path__": t.path, "instance": t.instance}}
            )
        return [
            {
                "job_name": f"synthetic-{source}",
                "honor_labels": True,
                "honor_timestamps": True,
                "static_configs": statics,
            }
            for source, statics in sorted(jobs.items())
        ]


class Handler(BaseHTTPRequestHandler):
    server: TargetServer

    def do_GET(self) -> None:
        target = self.server.targets.get(self.path)
        if target is None:
            self.send_error(404)
            return
        body = b"".join(target.render(time.time()))
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        with self.server.lock:
            self.server.scraped.setdefault(self.path, time.time())

    def do_POST(self) -> None:  # vmalert's notifications: read and dropped
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass
