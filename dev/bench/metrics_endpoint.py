"""Figures for the module's metrics path.

(a) simulated clusters (1,000 / 5,000 / 10,000 OSDs): the module's own MgrAdapter and CallPool on a stand-in
    mgr (dev/bench/synthetic_maps.py: maps built afresh on every get(), a librados handle answering at once
    with recorded Pacific payloads), each OSD with a result of every benchmark kind that measures OSDs
    (dev/bench/synthetic_module.py): collector CPU (all threads) and wall time per cycle, with the OSD map
    unchanged and new every cycle (the module reads it once per epoch), its render part, samples, body
    sizes, the Python heap the cycle's output holds, and scrape latency through the real HTTP server;
(b) on a running lab: our /metrics beside Ceph's prometheus module /metrics, same cluster.

    .venv/bin/python -m bench.metrics_endpoint [--sizes 1000,5000,10000] [--scrapes 20] [--lab-dir .lab]
        [--source module|exporters] [--no-baselines]
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
import tracemalloc
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

from bench.synthetic_maps import StandInMgr, mgr_adapter  # noqa: E402
from bench.synthetic_module import filled_board  # noqa: E402
from lab import cephcli  # noqa: E402
from lab.cluster import Lab  # noqa: E402
from perfwatch.benchmarks.measurement import Measurement  # noqa: E402
from perfwatch.collection.budget import CollectionBudget  # noqa: E402
from perfwatch.collection.collector import Collector, Settings  # noqa: E402
from perfwatch.collection.module_families import MODULE_REGISTRY  # noqa: E402
from perfwatch.common import exposition  # noqa: E402
from perfwatch.common.daemon_counters import counters  # noqa: E402
from perfwatch.common.server import HttpServer  # noqa: E402
from perfwatch.endpoint.pages import active_app  # noqa: E402

CYCLES = 5  # timed collection cycles per size


def scrape_times(url: str, n: int, gzip: bool) -> tuple[list[float], int]:
    headers = {"Accept-Encoding": "gzip"} if gzip else {}
    times, size = [], 0
    for _ in range(n):
        t0 = time.perf_counter()
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=60) as resp:
            size = len(resp.read())
        times.append(time.perf_counter() - t0)
    return times, size


def ms(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:.1f} ms, max {max(values) * 1000:.1f} ms"


def budgeted(cpu: float, wall: float, interval: float = 30.0, percent: float = 5.0, passes: int = 1000) -> str:
    """How the module's budget (collection/budget.py) spaces cycles of `cpu` s of CPU and `wall` s: passes
    every wall + interval when collecting, every interval when not."""
    budget, now, ran, spent = CollectionBudget(), 0.0, 0, 0.0
    for _ in range(passes):
        if budget.allows(now, percent):
            budget.record(now, cpu)
            ran, spent, now = ran + 1, spent + cpu, now + wall
        now += interval
    return (
        f"with collect_cpu_budget_percent {percent:g} at collect_interval {interval:g} s: a collection on "
        f"{ran} of {passes} passes, every {now / ran:.0f} s, {spent / now * 100:.1f} % of a core"
    )


def simulated(sizes: list[int], scrapes: int, source: str, baselines: bool) -> None:
    logging.basicConfig(level=logging.WARNING)
    print(
        f"(a) simulated clusters, recorded Pacific payloads, max_requests_in_flight=8, daemon_counters_source={source}"
        f", bench_export_baselines={'on' if baselines else 'off'}"
    )
    for n in sizes:
        board, store = filled_board(n)
        net_round = [
            Measurement("net", m, osd, 0.001, "seconds") for m in ("ping_front", "ping_back") for osd in range(n)
        ]
        j0 = time.process_time()
        store.judge(net_round, {}, 0.5, 3)
        judged = time.process_time() - j0
        mgr = StandInMgr(n)
        adapter = mgr_adapter(mgr)
        collector = Collector(adapter, extra_samples=lambda b=board: b.exposition({}, 3, baselines))
        settings = Settings(request_timeout=10, max_in_flight=8, read_osds=source == "module")
        cpu0 = time.process_time()
        collector.collect(settings)  # the first cycle also reads the OSDs' metadata and connects
        first = time.process_time() - cpu0
        figures = {}
        owns: list[float] = []  # the module's own measure of each cycle: collecting and command threads' CPU
        for new_map in (False, True):
            cpus, walls = [], []
            for _ in range(CYCLES):
                if new_map:
                    mgr.new_epoch()
                cpu0, wall0 = time.process_time(), time.perf_counter()
                collector.collect(settings)
                cpus.append(time.process_time() - cpu0)
                walls.append(time.perf_counter() - wall0)
                if not new_map:
                    owns.append(collector.budget.last_cpu)
            figures[new_map] = (statistics.median(cpus), min(cpus), max(cpus), statistics.median(walls))
        own = statistics.median(owns)
        budget_line = budgeted(own, figures[False][3])
        tracemalloc.start()  # a second cycle, traced: tracing slows it down several times
        collector.collect(settings)
        held, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        render = ""
        if source == "module":
            dump = json.loads(mgr.rados.dump)
            rows = [(f"osd.{i}", counters.osd_row(dump)) for i in range(n)]
            r0 = time.perf_counter()
            text = exposition.render(MODULE_REGISTRY, counters.OSD_LAYOUT.columns(rows))
            took = (time.perf_counter() - r0) * 1000
            render = f"; render of the OSD counter families {took:.0f} ms ({len(text) / 1e6:.1f} MB)"
        entry = collector.cache.get()
        server = HttpServer(active_app(collector.cache, "bench"), "127.0.0.1", 0, logging.getLogger("bench"))
        server.start()
        port = server._server.server_address[1]  # type: ignore[union-attr]
        try:
            url = f"http://127.0.0.1:{port}/metrics"
            plain, plain_size = scrape_times(url, scrapes, gzip=False)
            gz, gz_size = scrape_times(url, scrapes, gzip=True)
        finally:
            server.stop()
        samples_out = sum(1 for line in entry.text.splitlines() if line and not line.startswith(b"#"))
        lines = [
            f"  {n:>6} OSDs: cycle CPU, {label}: median {c:.2f} s of {CYCLES} (min {lo:.2f}, max {hi:.2f}): "
            f"{c / 30 * 100:.1f} % of a core at collect_interval 30 s; wall {w:.2f} s"
            for label, (c, lo, hi, w) in (("map unchanged", figures[False]), ("new map every cycle", figures[True]))
        ]
        print(
            "\n".join(lines) + f"\n          first cycle (the OSDs' metadata read too) {first:.2f} s CPU{render}\n"
            f"          the module's own measure of a cycle's CPU (collecting and command threads; map unchanged,"
            f" median) {own:.2f} s; {budget_line}\n"
            f"          judging a net probe round ({2 * n} results against the baselines): {judged:.2f} s CPU\n"
            f"          {samples_out} samples; Python heap the output holds {held / 1e6:.0f} MB, peak in a cycle "
            f"{peak / 1e6:.0f} MB\n"
            f"          scrape from cache: plain {plain_size / 1e6:.1f} MB {ms(plain)}; "
            f"gzip {gz_size / 1e6:.2f} MB {ms(gz)}"
        )


def against_prometheus_module(lab_dir: Path, scrapes: int) -> None:
    print(f"(b) lab in {lab_dir}: our /metrics beside the prometheus module's, same cluster, same run")
    try:
        lab = Lab.open(lab_dir)
    except Exception as exc:
        print(f"  skipped: {exc}")
        return
    conf = lab.config.conf_path
    active = cephcli.run(conf, "mgr", "stat")["active_name"]
    prom_port = lab.config.module_port + 10
    cephcli.run(conf, "config", "set", "mgr", f"mgr/prometheus/{active}/server_port", str(prom_port), as_json=False)
    was_enabled = "prometheus" in cephcli.run(conf, "mgr", "module", "ls")["enabled_modules"]
    cephcli.run(conf, "mgr", "module", "enable", "prometheus", as_json=False)
    theirs_url = f"http://{lab.topo.core_address}:{prom_port}/metrics"
    ours_url = lab.module_urls()[active] + "metrics"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                scrape_times(theirs_url, 1, gzip=False)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(1)
        ours, ours_size = scrape_times(ours_url, scrapes, gzip=False)
        theirs, theirs_size = scrape_times(theirs_url, scrapes, gzip=False)
        ratio = statistics.median(theirs) / statistics.median(ours)
        print(f"  perfwatch  /metrics: {ours_size / 1e3:.0f} kB, {ms(ours)}")
        print(f"  prometheus /metrics: {theirs_size / 1e3:.0f} kB, {ms(theirs)}")
        print(f"  ratio prometheus/perfwatch median scrape time: {ratio:.1f}x ({lab.config.osds} OSDs)")
    finally:
        if not was_enabled:
            cephcli.run(conf, "mgr", "module", "disable", "prometheus", as_json=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,5000,10000")
    parser.add_argument("--scrapes", type=int, default=20)
    parser.add_argument("--lab-dir", default=str(REPO / ".lab"))
    parser.add_argument(
        "--source",
        choices=("module", "exporters"),
        default="module",
        help="the module's daemon_counters_source: with exporters it reads no OSD (its other series remain)",
    )
    parser.add_argument(
        "--no-baselines", action="store_true", help="the module's bench_export_baselines off (large clusters)"
    )
    args = parser.parse_args()
    simulated([int(s) for s in args.sizes.split(",")], args.scrapes, args.source, not args.no_baselines)
    against_prometheus_module(Path(args.lab_dir).resolve(), args.scrapes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
