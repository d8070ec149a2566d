"""The engines dev/bench/vm_verdicts.py runs, each a process (or several) of Debian's packages on 127.0.0.1 that
it starts and stops by PID: Prometheus (`prometheus`) and VictoriaMetrics (`victoria-metrics`: the
single-node server, two `vmagent` scrape shards and `vmalert`). Both read the same rule files unchanged and
answer the Prometheus HTTP query API, which `Engine.query` speaks.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

STEP = 15  # s, the scrape interval
SHARDS = 2  # vmagent scrape shards


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get_json(url: str, timeout: float = 300) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        return json.load(resp)


def get_text(url: str, timeout: float = 60) -> str:
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        return resp.read().decode()


class Proc:
    """One server process: its log, readiness, memory (peak RSS), CPU seconds, and a stop by its PID."""

    def __init__(self, name: str, args: list[str], workdir: Path, ready_path: str, port: int) -> None:
        self.name, self.url, self.ready_path = name, f"http://127.0.0.1:{port}", ready_path
        self.log = (workdir / f"{name}.log").open("wb")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)

    def wait_ready(self, timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited {self.proc.returncode}; see {self.log.name}")
            try:
                with urllib.request.urlopen(self.url + self.ready_path, timeout=2) as resp:
                    if resp.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"{self.name} not ready; see {self.log.name}")

    def status(self, field: str) -> int:
        """A /proc/PID/status field in bytes (VmRSS, VmHWM: the peak RSS)."""
        found = re.search(rf"{field}:\s+(\d+) kB", Path(f"/proc/{self.proc.pid}/status").read_text())
        return int(found.group(1)) * 1024 if found else 0

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / 100  # utime + stime, in clock ticks of 1/100 s

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()  # by its PID
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


class Engine:
    """What answers queries (`query`), and the processes that make it up."""

    name = ""

    def __init__(self) -> None:
        self.procs: list[Proc] = []
        self.query_url = ""
        self.query_params: dict[str, str] = {}

    def query(self, expr: str, at: float) -> list[dict[str, Any]]:
        params = {"query": expr, "time": f"{at:.3f}", **self.query_params}
        body = get_json(f"{self.query_url}/api/v1/query?{urllib.parse.urlencode(params)}")
        if body["status"] != "success":
            raise RuntimeError(body)
        return body["data"]["result"]

    def start(self, *procs: Proc) -> None:
        for proc in procs:
            self.procs.append(proc)
            proc.wait_ready()

    def stop(self) -> None:
        for proc in reversed(self.procs):
            proc.stop()


class Prometheus(Engine):
    name = "Prometheus"

    def __init__(self, workdir: Path, scrape_configs: list[dict[str, Any]], rule_files: list[Path]) -> None:
        super().__init__()
        config = workdir / "prometheus.yml"
        config.write_text(json.dumps({  # JSON is YAML
            "global": {"scrape_interval": f"{STEP}s", "scrape_timeout": f"{STEP - 1}s", "evaluation_interval": "1m"},
            "rule_files": [str(f) for f in rule_files],
            "scrape_configs": scrape_configs,
        }))  # fmt: skip
        port = free_port()
        self.query_url = f"http://127.0.0.1:{port}"
        args = [f"--config.file={config}", f"--storage.tsdb.path={workdir / 'prometheus-data'}"]
        self.start(Proc("prometheus", ["prometheus", *args, f"--web.listen-address=127.0.0.1:{port}"], workdir,
                        "/-/ready", port))  # fmt: skip

    def rules(self) -> list[dict[str, Any]]:
        return get_json(f"{self.query_url}/api/v1/rules")["data"]["groups"]


class VictoriaMetrics(Engine):
    """victoria-metrics single-node; SHARDS vmagents, each scraping its share of the targets
    (-promscrape.cluster.*) and remote-writing to it; vmalert evaluating the rules against it and writing
    their results (recorded series, ALERTS) back."""

    name = "VictoriaMetrics"

    def __init__(self, workdir: Path, scrape_configs: list[dict[str, Any]], rule_files: list[Path], sink: str) -> None:
        super().__init__()
        port = free_port()
        self.query_url = f"http://127.0.0.1:{port}"
        # step: how far back a bare selector looks (VictoriaMetrics's default for /api/v1/query is 5 m);
        # 90 s sees the last of the 1 m recorded series and leaves out series that stopped being recorded
        self.query_params = {"step": "90s"}
        self.start(Proc("victoria-metrics", [
            "victoria-metrics",
            f"-storageDataPath={workdir / 'vm-data'}",
            f"-httpListenAddr=127.0.0.1:{port}",
            "-retentionPeriod=1d",
            "-memory.allowedPercent=20",
            "-search.maxUniqueTimeseries=20000000",  # the default, 300,000, is below one rule's input at 10,000 OSDs
            "-search.maxQueryDuration=10m",
            "-search.maxConcurrentRequests=4",
        ], workdir, "/health", port))  # fmt: skip
        config = workdir / "vmagent.yml"
        config.write_text(json.dumps({
            "global": {"scrape_interval": f"{STEP}s", "scrape_timeout": f"{STEP - 1}s"},
            "scrape_configs": scrape_configs,
        }))  # fmt: skip
        self.agents = []
        for shard in range(SHARDS):
            agent_port = free_port()
            self.agents.append(Proc(f"vmagent-{shard}", [
                "vmagent",
                f"-promscrape.config={config}",
                f"-promscrape.cluster.membersCount={SHARDS}",
                f"-promscrape.cluster.memberNum={shard}",
                "-promscrape.maxScrapeSize=1GiB",  # the module's endpoint is one target of tens of MB
                "-promscrape.streamParse",
                f"-remoteWrite.url={self.query_url}/api/v1/write",
                f"-remoteWrite.tmpDataPath={workdir / f'vmagent-{shard}'}",
                f"-httpListenAddr=127.0.0.1:{agent_port}",
            ], workdir, "/health", agent_port))  # fmt: skip
        self.start(*self.agents)
        alert_port = free_port()
        self.vmalert = Proc("vmalert", [
            "vmalert",
            *[f"-rule={f}" for f in rule_files],
            f"-datasource.url={self.query_url}",
            f"-remoteWrite.url={self.query_url}",
            "-remoteWrite.maxQueueSize=10000000",  # a group's results at 10,000 OSDs, written before they drop
            "-remoteWrite.maxBatchSize=10000",
            "-remoteWrite.concurrency=2",
            "-remoteWrite.flushInterval=1s",
            "-evaluationInterval=1m",  # the groups say interval: 1m themselves
            "-disableAlertgroupLabel",  # ALERTS with the labels Prometheus gives them
            f"-notifier.url=http://{sink}",
            f"-httpListenAddr=127.0.0.1:{alert_port}",
        ], workdir, "/health", alert_port)  # fmt: skip
        self.start(self.vmalert)

    def targets(self, shard: int) -> list[str]:
        """The scrape paths one vmagent took."""
        data = get_json(f"{self.agents[shard].url}/api/v1/targets")["data"]["activeTargets"]
        return [urllib.parse.urlparse(t["scrapeUrl"]).path for t in data]

    def rules(self) -> list[dict[str, Any]]:
        return get_json(f"{self.vmalert.url}/api/v1/rules")["data"]["groups"]

    def iterations(self) -> dict[str, tuple[int, float]]:
        """vmalert's own count of each group's evaluations and the seconds they took in all
        (vmalert_iteration_duration_seconds_count and _sum)."""
        text = get_text(f"{self.vmalert.url}/metrics")
        found = re.findall(
            r'^vmalert_iteration_duration_seconds_(count|sum)\{group="([^"]+)".*\} (\S+)$', text, re.MULTILINE
        )
        count = {g: int(float(v)) for what, g, v in found if what == "count"}
        return {g: (n, sum(float(v) for what, h, v in found if what == "sum" and h == g)) for g, n in count.items()}

    def counter(self, proc: Proc, name: str) -> float:
        text = get_text(f"{proc.url}/metrics")
        return sum(float(m) for m in re.findall(rf"^{name}(?:{{.*}})? (\S+)$", text, re.MULTILINE))
