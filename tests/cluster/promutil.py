"""A real Prometheus (Debian's package) for cluster tests: started in a temp dir, stopped by its PID."""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Prometheus:
    def __init__(
        self,
        workdir: Path,
        targets: list[str],
        scrape_interval: str = "2s",
        scrape_configs: list[dict[str, Any]] | None = None,
    ) -> None:
        """Scrapes `targets` as job perfwatch, or, given `scrape_configs`, exactly those jobs."""
        self.workdir = workdir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        workdir.mkdir(parents=True, exist_ok=True)
        config = {
            "global": {"scrape_interval": scrape_interval, "evaluation_interval": scrape_interval},
            "scrape_configs": scrape_configs
            if scrape_configs is not None
            else [{"job_name": "perfwatch", "static_configs": [{"targets": targets}]}],
        }
        (workdir / "prometheus.yml").write_text(json.dumps(config))  # JSON is YAML
        self.log = open(workdir / "prometheus.log", "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [
                "prometheus",
                f"--config.file={workdir / 'prometheus.yml'}",
                f"--storage.tsdb.path={workdir / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )

    def query(self, expr: str) -> list[dict[str, Any]]:
        url = f"{self.url}/api/v1/query?{urllib.parse.urlencode({'query': expr})}"
        with urllib.request.urlopen(url, timeout=5) as resp:
            body = json.load(resp)
        assert body["status"] == "success", body
        return body["data"]["result"]

    def wait_ready(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"prometheus exited: {(self.workdir / 'prometheus.log').read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as resp:
                    if resp.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.3)
        raise AssertionError("prometheus did not become ready")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)
        self.log.close()
