"""What the production rules cost at scale: their evaluation time and the series they add, in a real
Prometheus (Debian's), for a synthetic cluster of N OSDs (dev/bench/synthetic_cluster.py: every input series
the rules read, with the labels of the real sources; it names any input the rules read that it lacks).

    python3 -m bench.rule_cost [--osds 1000 10000] [--osds-per-host 24] [--evaluations 3] [--detail] [--keep DIR]
        [--counters-from module|exporters] [--no-baselines] [--repeats 5] [--prometheus PATH]

Prometheus evaluates alerts/generated/production/{recording,alerts}.yml and scrapes the synthetic series every
15 s; once the rules' longest range (5 m) is full, after --evaluations of each group, it prints per group:
  live   Prometheus's evaluationTime (median, max), and how long its threads waited for a CPU (schedstat).
  alone  each rule's expression queried as count(expr), scrapes and rules unloaded, after a full garbage
         collection: the CPU Prometheus spends on it, best of --repeats (its own work) and median, and the
         samples it reads; summed over a group, about its evaluation time on an idle core.
"this machine" (CPU per series of a plain aggregation) scales the figures to another CPU. Then: the series
each recording rule adds, rule errors, the alerts (pending), and whether the verdicts find exactly what the
synthetic cluster made saturated or missing.
--prometheus 3 runs the Prometheus 3 LTS that `make deps` unpacks (dev/tooling/prometheus3.py; fetched if it
is not), or give any prometheus binary. About 9 minutes at 1,000 OSDs and 12 at 10,000; niced (--nice). Only
127.0.0.1; stops what it starts by PID; removes its directory unless --keep (then DIR/osds-N keeps
Prometheus's data, config and log). Why it measures so: docs/decisions/rule-cost-measurement.md.
"""

from __future__ import annotations

import argparse
import bisect
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NamedTuple

from bench.synthetic_cluster import SyntheticCluster
from tooling import prometheus3

REPO = Path(__file__).resolve().parents[2]
RULES = REPO / "alerts" / "generated" / "production"
STEP = 15  # s, the scrape interval
REPEATS = 5  # runs of each expression alone (--repeats)
PROMETHEUS = "prometheus"  # the binary (--prometheus): on PATH unless told
UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}

Group = dict[str, Any]  # one group as /api/v1/rules returns it


def seconds(duration: str) -> float:
    return sum(float(n) * UNITS[u] for n, u in re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)", duration))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def rfc3339(stamp: str) -> float:
    """Prometheus's lastEvaluation (nanoseconds, Z or offset) as Unix seconds."""
    found = re.fullmatch(r"(.+?)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)", stamp)
    if found is None:
        raise ValueError(stamp)
    whole = datetime.fromisoformat(found.group(1) + found.group(3).replace("Z", "+00:00")).timestamp()
    return whole + float("0." + (found.group(2) or "0"))


def schedstat(pid: int) -> tuple[float, float]:
    """Seconds the process's threads have run on a CPU and have waited for one (/proc/PID/task/*/schedstat)."""
    ran = waited = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            fields = (task / "schedstat").read_text().split()
        except OSError:
            continue  # the thread ended
        ran, waited = ran + int(fields[0]), waited + int(fields[1])
    return ran / 1e9, waited / 1e9


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


class Exposition(ThreadingHTTPServer):
    """Serves the synthetic cluster's series at their values of the moment: /metrics/<source>."""

    daemon_threads = True

    def __init__(self, cluster: SyntheticCluster) -> None:
        self.renders = {f"/metrics/{source}": cluster.exposition(source) for source in cluster.by_source}
        self.first_scrape: dict[str, float] = {}  # path -> time.time() its first response was sent
        self.scrapes: list[float] = []  # seconds to render and send each
        super().__init__(("127.0.0.1", 0), Handler)

    def all_scraped(self) -> float:
        """When every source had been scraped once (0 until then)."""
        return max(self.first_scrape.values()) if len(self.first_scrape) == len(self.renders) else 0.0


class Handler(BaseHTTPRequestHandler):
    server: Exposition

    def do_GET(self) -> None:
        t0 = time.time()
        if self.path not in self.server.renders:
            self.send_error(404)
            return
        body = b"".join(self.server.renders[self.path](t0))
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.server.first_scrape.setdefault(self.path, time.time())
        self.server.scrapes.append(time.time() - t0)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class CpuSampler(threading.Thread):
    """Prometheus's schedstat every 50 ms, to tell what happened during a live evaluation."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.samples: list[tuple[float, float, float]] = []  # (time.time(), ran, waited)
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.05):
            with contextlib.suppress(OSError):
                self.samples.append((time.time(), *schedstat(self.pid)))

    def at(self, t: float) -> tuple[float, float]:
        i = bisect.bisect_left(self.samples, (t,))
        if i == 0 or i == len(self.samples):
            return self.samples[min(i, len(self.samples) - 1)][1:]
        (t0, r0, w0), (t1, r1, w1) = self.samples[i - 1], self.samples[i]
        f = (t - t0) / (t1 - t0)
        return r0 + f * (r1 - r0), w0 + f * (w1 - w0)

    def during(self, start: float, seconds: float) -> tuple[float, float]:
        """(ran, waited) between start and start + seconds, interpolated."""
        (r0, w0), (r1, w1) = self.at(start), self.at(start + seconds)
        return max(0.0, r1 - r0), max(0.0, w1 - w0)


class Prometheus:
    def __init__(self, workdir: Path, target: str, sources: list[str], rule_files: list[Path]) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.config = workdir / "prometheus.yml"
        self.configure(rule_files, target, sources)
        self.log = (workdir / "prometheus.log").open("wb")
        self.proc = subprocess.Popen(
            [
                PROMETHEUS,
                f"--config.file={self.config}",
                f"--storage.tsdb.path={workdir / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )

    def configure(self, rule_files: list[Path], target: str, sources: list[str]) -> None:
        jobs = [
            {
                "job_name": f"synthetic-{source}",
                "metrics_path": f"/metrics/{source}",
                "honor_labels": True,
                "static_configs": [{"targets": [target]}],
            }
            for source in sources
        ]
        config = {
            "global": {"scrape_interval": f"{STEP}s", "scrape_timeout": f"{STEP - 1}s", "evaluation_interval": "1m"},
            "rule_files": [str(f) for f in rule_files],
            "scrape_configs": jobs,
        }
        self.config.write_text(json.dumps(config))  # JSON is YAML

    def unload(self) -> None:
        """No scrape, no rules: reload an empty config (SIGHUP) and wait until Prometheus is idle."""
        self.configure([], "", [])
        self.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 120
        while self.api("rules")["groups"] or self.api("targets")["activeTargets"]:
            if time.monotonic() > deadline:
                raise RuntimeError("prometheus did not unload its rules and scrape")
            time.sleep(1)
        ran = schedstat(self.proc.pid)[0]
        while time.monotonic() < deadline:  # staleness markers written, nothing left to do
            time.sleep(1)
            ran, before = schedstat(self.proc.pid)[0], ran
            if ran - before < 0.05:
                break

    def api(self, path: str, **params: str) -> Any:
        url = f"{self.url}/api/v1/{path}?{urllib.parse.urlencode(params)}"
        with urllib.request.urlopen(url, timeout=180) as resp:
            body = json.load(resp)
        if body["status"] != "success":
            raise RuntimeError(body)
        return body["data"]

    def query(self, expr: str, at: float) -> list[dict[str, Any]]:
        return self.api("query", query=expr, time=f"{at:.3f}")["result"]

    def scalar(self, expr: str, at: float) -> float:
        result = self.query(expr, at)
        return float(result[0]["value"][1]) if result else 0.0

    def own_metric(self, name: str) -> float:
        """The sum of one of Prometheus's own metrics over its series (it does not scrape itself here)."""
        with urllib.request.urlopen(f"{self.url}/metrics", timeout=30) as resp:
            text = resp.read().decode()
        return sum(float(m) for m in re.findall(rf"^{name}(?:{{.*}})? (\S+)$", text, re.MULTILINE))

    def rss_bytes(self) -> int:
        found = re.search(r"VmRSS:\s+(\d+) kB", Path(f"/proc/{self.proc.pid}/status").read_text())
        return int(found.group(1)) * 1024 if found else 0

    def wait_ready(self, timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"prometheus exited {self.proc.returncode}; see its log")
            try:
                with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as resp:
                    if resp.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.5)
        raise RuntimeError("prometheus not ready")

    def stop(self) -> None:
        self.proc.terminate()  # by its PID
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def measure_live(prom: Prometheus, server: Exposition, evaluations: int, window: float) -> dict[str, list[Group]]:
    """Polls /api/v1/rules until every group has `evaluations` evaluations that started with `window` s of
    live samples behind them; the groups in file order (recording.yml's, then alerts.yml's)."""
    seen: dict[str, dict[str, Group]] = {}  # group -> lastEvaluation -> the group then
    deadline, groups = time.monotonic() + window + (evaluations + 4) * 60, []
    while time.monotonic() < deadline:
        groups = prom.api("rules")["groups"]
        for group in groups:
            seen.setdefault(group["name"], {})
            if server.all_scraped() and rfc3339(group["lastEvaluation"]) >= server.all_scraped() + window:
                seen[group["name"]][group["lastEvaluation"]] = group
        if groups and all(len(evals) >= evaluations for evals in seen.values()):
            break
        time.sleep(5)
    else:
        print(f"  (timed out: {min(len(e) for e in seen.values()) if seen else 0} evaluations)")
    files = sorted({Path(g["file"]) for g in groups}, key=lambda f: f.name != "recording.yml")
    order = [name for f in files for name in re.findall(r"^- name: (\S+)", f.read_text(), re.MULTILINE)]
    return {name: [seen[name][k] for k in sorted(seen[name])][:evaluations] for name in sorted(seen, key=order.index)}


class Cost(NamedTuple):
    best: float  # CPU s, the least of REPEATS runs: the expression's own work
    median: float  # CPU s, median: with the garbage collection its allocations brought on, as it came
    samples: int  # samples it read (the query's totalQueryableSamples)


def collect_garbage(prom: Prometheus) -> None:
    """A full Go garbage collection in Prometheus now (its pprof heap profile with gc=1), so that a query
    measured next does not pay for one its predecessors' allocations brought on."""
    with urllib.request.urlopen(f"{prom.url}/debug/pprof/heap?gc=1", timeout=120) as resp:
        resp.read()
    time.sleep(0.2)


def cost_alone(prom: Prometheus, expr: str, at: float) -> Cost:
    cpu, samples = [], 0
    for _ in range(REPEATS):
        collect_garbage(prom)
        ran = schedstat(prom.proc.pid)[0]
        data = prom.api("query", query=f"count({expr})", time=f"{at:.3f}", stats="all")
        cpu.append(schedstat(prom.proc.pid)[0] - ran)
        samples = data.get("stats", {}).get("samples", {}).get("totalQueryableSamples", 0)
    return Cost(min(cpu), statistics.median(cpu), samples)


def report_groups(
    groups: dict[str, list[Group]], sampler: CpuSampler, prom: Prometheus, at: float, detail: bool
) -> None:
    print(
        "  rule groups. live: evaluationTime, median and max over the measured evaluations, and how long\n"
        "  Prometheus's threads waited for a CPU meanwhile. alone: the CPU its rules take queried one by one\n"
        f"  with nothing else running (best of {REPEATS}, and median: with the garbage collection they brought on)"
    )
    over = []
    for name, evals in groups.items():
        if not evals:
            print(f"    {name:<28} not evaluated")
            continue
        times = [g["evaluationTime"] for g in evals]
        waited = statistics.median(sampler.during(rfc3339(g["lastEvaluation"]), g["evaluationTime"])[1] for g in evals)
        alone = {r["name"]: cost_alone(prom, r["query"], at) for r in evals[-1]["rules"]}
        best, median = sum(c.best for c in alone.values()), sum(c.median for c in alone.values())
        samples = sum(c.samples for c in alone.values())
        if best >= 1:
            over.append(name)
        print(
            f"    {name:<28} {len(alone):>2} rules  live {statistics.median(times):6.3f} s, max {max(times):6.3f} s "
            f"(waited {waited:5.2f} s, n={len(times)})  alone {best:.3f} s, median {median:.3f} s; reads "
            f"{samples:,} samples{'  OVER 1 s' if best >= 1 else ''}"
        )
        costly = sorted(alone, key=lambda r: -alone[r].best)
        print("      costliest: " + ", ".join(f"{r} {alone[r].best:.3f} s" for r in costly[:3]))
        for r in costly if detail else []:
            print(f"        {alone[r].best:7.4f} s  {alone[r].samples:>10,} samples  {r}")
        errors = {(r["name"], r.get("lastError", "")) for g in evals for r in g["rules"] if r.get("health") == "err"}
        for rule, error in sorted(errors):
            print(f"      ERROR {rule}: {error}")
    print(f"  groups over 1 s of CPU alone: {', '.join(over) or 'none'}")


def inputs_read(rule_files: list[Path]) -> set[str]:
    """The raw metrics the rules' expressions select (every selector of these rules has matchers; recorded
    names have a colon). Not the annotations' templates: their text has braces too."""
    exprs = [r["expr"] for f in rule_files for g in json.loads(f.with_suffix(".json").read_text())["groups"]
             for r in g["rules"]]  # fmt: skip
    return {m for e in exprs for m in re.findall(r"(?<![\w:])([a-zA-Z_]\w*)\{", e)}


def run(
    n: int,
    per_host: int,
    evaluations: int,
    workdir: Path,
    detail: bool = False,
    counters_from: str = "module",
    baselines: bool = True,
) -> None:
    rule_files = [workdir / "recording.yml", workdir / "alerts.yml"]
    for f in rule_files:  # read at each run: the rules measured are the ones of this moment
        shutil.copy(RULES / f.name, f)
        shutil.copy(RULES / f.with_suffix(".json").name, f.with_suffix(".json"))  # the same rules, as JSON
    window = max(seconds(w) for w in re.findall(r"\[(\w+)\]", rule_files[0].read_text()))
    cluster = SyntheticCluster(n, per_host, counters_from=counters_from, baselines=baselines)
    print(f"daemon counters from the {counters_from}, baselines {'on' if baselines else 'off'}")
    src = ", ".join(f"{s} {c:,}" for s, c in sorted(cluster.sources.items(), key=lambda kv: -kv[1]))
    print(f"{n:,} OSDs on {len(cluster.hosts)} hosts: {cluster.series_count:,} input series ({src})")
    lacking = sorted(inputs_read(rule_files) - cluster.metric_names())
    print(f"  inputs the rules read that the synthetic cluster lacks: {', '.join(lacking) or 'none'}", flush=True)
    server = Exposition(cluster)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    sources = sorted(cluster.by_source)
    prom = Prometheus(workdir, f"127.0.0.1:{server.server_address[1]}", sources, rule_files)
    try:
        prom.wait_ready()
        sampler = CpuSampler(prom.proc.pid)
        sampler.start()
        ran0, started = schedstat(prom.proc.pid)[0], time.monotonic()
        groups = measure_live(prom, server, evaluations, window)
        sampler.done.set()
        sampler.join()
        at = time.time()
        cores = (schedstat(prom.proc.pid)[0] - ran0) / (time.monotonic() - started)
        scrape = prom.query('max by (job) (max_over_time(scrape_duration_seconds{job=~"synthetic-.*"}[10m]))', at)
        durations = ", ".join(f"{r['metric']['job'][10:]} {float(r['value'][1]):.1f} s" for r in scrape)
        head, rss = prom.api("status/tsdb")["headStats"]["numSeries"], prom.rss_bytes()
        failures = prom.own_metric("prometheus_rule_evaluation_failures_total")
        missed = prom.own_metric("prometheus_rule_group_iterations_missed_total")
        print(
            f"  live: {time.monotonic() - started:.0f} s; scrape render+send median "
            f"{statistics.median(server.scrapes):.2f} s; scrape_duration max {durations}; Prometheus used "
            f"{cores:.2f} cores, RSS {rss / 2**30:.1f} GiB, head series {head:,}; load average {load()}"
        )
        server.shutdown()
        prom.unload()
        per_osd = cost_alone(prom, 'max by (cluster, ceph_daemon) (ceph_perfwatch_daemon_up{job="perfwatch"})', at)
        per_series = (per_osd.best - cost_alone(prom, "vector(1)", at).best) / n
        print(
            f"  this machine: {per_series * 1e6:.1f} us of CPU per series for a plain max by over {n:,} gauges "
            f"(best of {REPEATS}, less a query's fixed cost); load average {load()}"
        )
        report_groups(groups, sampler, prom, at, detail)
        print(f"  rule evaluation failures {failures:.0f}, missed group iterations {missed:.0f}")
        print("  series each recording rule adds:")
        total = 0
        for evals in groups.values():
            for rule in (r for r in evals[-1]["rules"] if r["type"] == "recording"):
                # a name several rules record (one per resource) is told apart by the labels each rule sets
                labels = [f'__name__="{rule["name"]}"'] + [f'{k}="{v}"' for k, v in (rule.get("labels") or {}).items()]
                count = int(prom.scalar(f"count({{{', '.join(labels)}}})", at))
                total += count
                print(f"    {count:>8,}  {rule['name']}{'{' + ', '.join(labels[1:]) + '}' if labels[1:] else ''}")
        print(f"    {total:>8,}  in all ({total / cluster.series_count:.2f} per input series)")
        alerts = prom.query("count by (alertname, alertstate) (ALERTS)", at)
        print("  alerts: " + (", ".join(
            f"{a['metric']['alertname']} {a['value'][1]} {a['metric']['alertstate']}"
            for a in sorted(alerts, key=lambda a: a["metric"]["alertname"])
        ) or "none"))  # fmt: skip
        print("  verdicts and inputs against what the synthetic cluster holds:")
        for what, expr, expected in cluster.checks:
            got = int(prom.scalar(expr, at))
            print(f"    {what:<32} {got:>5} (expected {expected}){'' if got == expected else '  MISMATCH'}")
    finally:
        prom.stop()
        server.shutdown()
        server.server_close()
        thread.join()


def main() -> int:
    global REPEATS, PROMETHEUS
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--osds", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--osds-per-host", type=int, default=24)
    parser.add_argument("--evaluations", type=int, default=3, help="measured live evaluations per group")
    parser.add_argument("--nice", type=int, default=10, help="niceness of this script and Prometheus")
    parser.add_argument("--detail", action="store_true", help="every rule's CPU alone and samples, costliest first")
    parser.add_argument("--keep", metavar="DIR", help="leave the Prometheus data, config and log in DIR/osds-N")
    parser.add_argument(
        "--counters-from",
        choices=("module", "exporters"),
        default="module",
        help="who exports the OSDs' daemon counters (the module's daemon_counters_source)",
    )
    parser.add_argument("--no-baselines", action="store_true", help="the module's bench_export_baselines off")
    parser.add_argument("--repeats", type=int, default=REPEATS, help="runs of each expression alone (best of them)")
    parser.add_argument(
        "--prometheus",
        metavar="PATH",
        default=PROMETHEUS,
        help="the Prometheus binary to run (default: prometheus on PATH, Debian's); 3: Debian testing's 3.x LTS",
    )
    args = parser.parse_args()
    if args.evaluations < 1:
        parser.error("--evaluations: at least 1")
    if args.prometheus == "3":
        try:
            args.prometheus = str((prometheus3.cached() or prometheus3.fetch()) / "prometheus")
        except (prometheus3.FetchError, OSError, subprocess.SubprocessError) as exc:
            print(f"--prometheus 3: {exc}", file=sys.stderr)
            return 1
    found = shutil.which(args.prometheus)
    if found is None:
        print(f"{args.prometheus}: no such executable (Debian: apt-get install prometheus)", file=sys.stderr)
        return 1
    PROMETHEUS = found
    os.nice(args.nice)  # a Ceph lab may share the machine; Prometheus inherits it
    print(f"load average {load()}; {os.cpu_count()} CPUs; Prometheus {prometheus_version()}")
    if args.repeats < 1:
        parser.error("--repeats: at least 1")
    REPEATS = args.repeats
    mode = (args.counters_from, not args.no_baselines)
    for n in args.osds:
        if args.keep:
            workdir = Path(args.keep).resolve() / f"osds-{n}"
            shutil.rmtree(workdir, ignore_errors=True)
            workdir.mkdir(parents=True)
            run(n, args.osds_per_host, args.evaluations, workdir, args.detail, *mode)
        else:
            with tempfile.TemporaryDirectory(prefix="rule-cost-") as tmp:
                run(n, args.osds_per_host, args.evaluations, Path(tmp), args.detail, *mode)
    return 0


def prometheus_version() -> str:
    out = subprocess.run([PROMETHEUS, "--version"], capture_output=True, text=True, check=False)
    found = re.search(r"version (\S+)", out.stdout + out.stderr)
    return found.group(1) if found else "?"


if __name__ == "__main__":
    sys.exit(main())
