"""The production rules, unchanged, on a horizontally scalable engine: the synthetic cluster of N OSDs
(dev/bench/synthetic_cluster.py) scraped by two vmagent shards into VictoriaMetrics and evaluated by vmalert,
against Debian's Prometheus on the same input. Same verdicts or not, rule by rule.

    python3 -m bench.vm_verdicts [--osds 1000] [--osds-per-host 24] [--evaluations 2] [--max-evaluations 12]
        [--rtol 1e-6] [--keep DIR]

The cluster is served as the targets a real one has (dev/bench/scrape_targets.py). One engine at a time:
Prometheus until every group has --evaluations evaluations on a full 5 m range; then victoria-metrics, two
vmagents and vmalert with the same rule files, compared after each round of evaluations until the same twice
in a row or --max-evaluations rounds have passed.
Prints: targets and series each vmagent shard took; per rule (recorded series, ALERTS): series in each
engine, label sets only in one, values that differ beyond --rtol (rules that read time(), and ALERTS, by
label set only); the synthetic cluster's expected verdict counts in both; SAME or DIFFERENT; rule errors;
group evaluation times, CPU and peak RSS (VmHWM) of every engine process.
Needs Debian's `prometheus` and `victoria-metrics` (apt-get install prometheus victoria-metrics). About 17
minutes at 1,000 OSDs and 26 at 10,000; at 5,000 OSDs and more, run it under `flock /tmp/perfwatch-heavy.lock`
so heavy runs never overlap. Only 127.0.0.1; stops what it starts by PID; removes its directory unless --keep
(then DIR/osds-N keeps the data, configs and logs). Why it compares so: docs/decisions/rule-cost-measurement.md.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import resource
import shutil
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from bench.scrape_targets import TargetServer, split_targets
from bench.synthetic_cluster import SyntheticCluster
from bench.vm_engines import SHARDS, Engine, Proc, Prometheus, VictoriaMetrics

REPO = Path(__file__).resolve().parents[2]
RULES = REPO / "alerts" / "generated" / "production"
UNITS = {"s": 1, "m": 60, "h": 3600}

Key = tuple[tuple[str, str], ...]  # a series' labels, __name__ left out
Snapshot = dict[str, dict[Key, float]]  # rule -> series -> value (ALERTS: 1 firing, 0 pending)
Rows = dict[str, tuple[int, int, int, int, int, int]]  # rule -> compare()'s figures


@dataclass
class Result:
    """What one engine found: its last snapshot, group evaluation times (group -> lastEvaluation -> s), rule
    errors, the synthetic cluster's checks as it counts them, and (VictoriaMetrics) the comparison."""

    snap: Snapshot
    evals: dict[str, dict[str, float]]
    errors: list[str]
    checks: dict[str, int]
    rows: Rows = field(default_factory=dict)
    rounds: int = 0
    converged: bool = False


def read_rules(files: list[Path]) -> tuple[dict[str, str], dict[str, str], float]:
    """(recorded name -> its group, recorded name -> expression, the longest range any rule reads, s)."""
    group_of, expr_of = {}, {}
    for f in files:
        for group in yaml.safe_load(f.read_text())["groups"]:
            for rule in group["rules"]:
                if "record" in rule:
                    group_of[rule["record"]], expr_of[rule["record"]] = group["name"], rule["expr"]
    ranges = re.findall(r"\[(\d+)([smh])\]", " ".join(expr_of.values()))
    return group_of, expr_of, max(int(n) * UNITS[u] for n, u in ranges)


def longest_chain(expr_of: dict[str, str]) -> list[str]:
    """The longest chain of recorded series that read one another, from the raw inputs' end to the last."""
    reads = {name: [r for r in expr_of if r != name and re.search(rf"(?<![\w:]){re.escape(r)}(?![\w:])", expr)]
             for name, expr in expr_of.items()}  # fmt: skip
    memo: dict[str, list[str]] = {}

    def chain(name: str) -> list[str]:
        if name not in memo:
            memo[name] = [*max((chain(r) for r in reads[name]), key=len, default=[]), name]
        return memo[name]

    return max((chain(name) for name in expr_of), key=len)


def snapshot(engine: Engine, names: list[str], at: float) -> Snapshot:
    out: Snapshot = {}
    for name in names:
        out[name] = {}
        for r in engine.query(f'{{__name__="{name}"}}', at):
            labels = {k: v for k, v in r["metric"].items() if k != "__name__"}
            if name == "ALERTS":
                state = labels.pop("alertstate", "")
                out[name][tuple(sorted(labels.items()))] = 1.0 if state == "firing" else 0.0
            else:
                out[name][tuple(sorted(labels.items()))] = float(r["value"][1])
    return out


def close(a: float, b: float, rtol: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= 1e-12 + rtol * max(abs(a), abs(b))


def compare(p: Snapshot, v: Snapshot, rtol: float, by_labels_only: set[str]) -> Rows:
    """rule -> (series in P, in VM, only in P, only in VM, values differing, max relative difference in ppm)."""
    rows = {}
    for name in p:
        a, b = p[name], v.get(name, {})
        common = a.keys() & b.keys()
        differ = [k for k in common if name not in by_labels_only and not close(a[k], b[k], rtol)]
        rel = [abs(a[k] - b[k]) / max(abs(a[k]), abs(b[k]), 1e-300) for k in common if name not in by_labels_only]
        worst = max((r for r in rel if not math.isnan(r)), default=0.0)
        rows[name] = (
            len(a),
            len(b),
            len(a.keys() - b.keys()),
            len(b.keys() - a.keys()),
            len(differ),
            round(worst * 1e6),
        )
    return rows


def same(rows: Rows) -> bool:
    return all(r[2] == r[3] == r[4] == 0 for r in rows.values())


def track(evals: dict[str, dict[str, float]], groups: list[dict[str, Any]], since: float, stamp: Any) -> None:
    """Notes each group's evaluation (lastEvaluation -> evaluationTime) that started after `since`."""
    for g in groups:
        started = stamp(g["lastEvaluation"])
        if since and started >= since:
            evals.setdefault(g["name"], {})[g["lastEvaluation"]] = g["evaluationTime"]
        else:
            evals.setdefault(g["name"], {})


def rfc3339(stamp: str) -> float:
    """An API's lastEvaluation (nanoseconds, Z or offset) as Unix seconds."""
    found = re.fullmatch(r"(.+?)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)", stamp)
    if found is None:
        raise ValueError(stamp)
    whole = datetime.fromisoformat(found.group(1) + found.group(3).replace("Z", "+00:00")).timestamp()
    return whole + float("0." + (found.group(2) or "0"))


def round_moment(groups: list[dict[str, Any]]) -> tuple[float, float]:
    """The moment to read one round of vmalert's results at, and how far back to look from it. vmalert writes
    a group's recorded series at the start of its evaluation aligned down to its interval, and ALERTS at the
    start itself: from the earliest aligned start to the latest start, no older round comes in."""
    starts = [(rfc3339(g["lastEvaluation"]), g["interval"]) for g in groups]
    at = max(start for start, _ in starts) + 1
    return at, at - min(start // interval * interval for start, interval in starts) + 1


def errors(groups: list[dict[str, Any]]) -> list[str]:
    return sorted(
        {f"{g['name']} / {r['name']}: {r['lastError']}" for g in groups for r in g["rules"] if r.get("lastError")}
    )


def checks(engine: Engine, cluster: SyntheticCluster, at: float) -> dict[str, int]:
    """The synthetic cluster's own checks (PromQL counts of what the verdicts must find), asked of the engine."""
    out = {}
    for what, expr, _ in cluster.checks:
        result = engine.query(expr, at)
        out[what] = int(float(result[0]["value"][1])) if result else 0
    return out


def memory(procs: list[Proc]) -> str:
    return ", ".join(f"{p.name} {p.status('VmHWM') / 2**30:.2f} GiB" for p in procs)


def wait_filled(server: TargetServer, window: float, engine: Engine) -> float:
    """Waits until every target has been scraped once and `window` seconds more; returns that moment."""
    while not server.all_scraped():
        for proc in engine.procs:
            if proc.proc.poll() is not None:
                raise RuntimeError(f"{proc.name} exited; see {proc.log.name}")
        time.sleep(2)
    filled = server.all_scraped() + window
    clock = time.strftime("%H:%M:%S", time.localtime(filled))
    print(f"  every target scraped once; the {window:.0f} s range is full at {clock}", flush=True)
    time.sleep(max(0.0, filled - time.time()))
    return filled


def run_prometheus(
    workdir: Path,
    server: TargetServer,
    rule_files: list[Path],
    names: list[str],
    window: float,
    evaluations: int,
    cluster: SyntheticCluster,
) -> Result:
    print("Prometheus", flush=True)
    server.reset()
    prom = Prometheus(workdir, server.scrape_configs(), rule_files)
    try:
        cpu0, t0 = prom.procs[0].cpu_seconds(), time.time()
        filled = wait_filled(server, window, prom)
        evals: dict[str, dict[str, float]] = {}
        while True:
            groups = prom.rules()
            track(evals, groups, filled, rfc3339)
            if evals and all(len(e) >= evaluations for e in evals.values()):
                break
            time.sleep(5)
        at = time.time()
        snap = snapshot(prom, names, at)
        print(
            f"  {sum(len(s) for s in snap.values()):,} series read; Prometheus used "
            f"{(prom.procs[0].cpu_seconds() - cpu0) / (at - t0):.2f} cores; peak RSS: {memory(prom.procs)}"
        )
        return Result(snap, evals, errors(groups), checks(prom, cluster, at))
    finally:
        prom.stop()


def run_vm(
    workdir: Path,
    server: TargetServer,
    rule_files: list[Path],
    names: list[str],
    window: float,
    prom: Snapshot,
    rtol: float,
    by_labels_only: set[str],
    max_evaluations: int,
    cluster: SyntheticCluster,
) -> Result:
    print("VictoriaMetrics", flush=True)
    server.reset()
    vm = VictoriaMetrics(workdir, server.scrape_configs(), rule_files, server.address)
    try:
        cpu0, t0 = sum(p.cpu_seconds() for p in vm.procs), time.time()
        wait_filled(server, window, vm)
        taken = [vm.targets(shard) for shard in range(SHARDS)]
        for shard, paths in enumerate(taken):
            series = sum(server.targets[p].series for p in paths)
            print(f"  vmagent shard {shard}: {len(paths)} targets, {series:,} series")
        print(
            f"  targets taken twice: {len(set(taken[0]) & set(taken[1]))}, by neither: "
            f"{len(server.targets.keys() - set(taken[0]) - set(taken[1]))}"
        )
        evals: dict[str, dict[str, float]] = {}
        rounds, in_a_row, before = 0, 0, vm.iterations()
        rows: Rows = {}
        snap: Snapshot = {}
        groups: list[dict[str, Any]] = []
        while rounds < max_evaluations and in_a_row < 2:
            time.sleep(5)
            now = vm.iterations()
            if any(now.get(g, (0, 0.0))[0] <= n for g, (n, _) in before.items()):
                continue  # a round: every group evaluated once more since the last one
            for g, (n, took) in now.items():  # the mean time of the group's evaluations since then
                evals.setdefault(g, {})[str(n)] = (took - before[g][1]) / (n - before[g][0])
            before, rounds = now, rounds + 1
            groups = vm.rules()
            at, step = round_moment(groups)
            # VictoriaMetrics hides the last -search.latencyOffset (30 s) of samples from queries
            time.sleep(max(0.0, at + 31 - time.time()))
            vm.query_params["step"] = f"{step:.0f}s"
            snap = snapshot(vm, names, at)
            rows = compare(prom, snap, rtol, by_labels_only)
            in_a_row = in_a_row + 1 if same(rows) else 0
            off = sorted(n for n, r in rows.items() if r[2] or r[3] or r[4])
            print(
                f"  round {rounds}: " + (f"{len(off)} rules differ: {', '.join(off[:5])}" if off else "same"),
                flush=True,
            )
        cpu = (sum(p.cpu_seconds() for p in vm.procs) - cpu0) / (time.time() - t0)
        print(f"  the VictoriaMetrics processes used {cpu:.2f} cores; peak RSS: {memory(vm.procs)}")
        dropped = vm.counter(vm.vmalert, "vmalert_remotewrite_dropped_rows_total")
        print(f"  vmalert remote-write rows dropped: {dropped:.0f}")
        return Result(
            snap,
            evals,
            errors(groups),
            checks(vm, cluster, time.time()),
            rows,
            rounds,
            in_a_row >= 2,
        )
    finally:
        vm.stop()


def timings(name: str, evals: dict[str, dict[str, float]]) -> dict[str, str]:
    return {
        g: f"{statistics.median(e.values()):.3f}/{max(e.values()):.3f} s (n={len(e)})" if e else "-"
        for g, e in evals.items()
    } | {"": name}


def report(prom: Result, vm: Result, group_of: dict[str, str], cluster: SyntheticCluster, rtol: float) -> bool:
    rows = vm.rows
    print(
        f"\nper rule: series in Prometheus / VictoriaMetrics, label sets only in one, values off by more than {rtol:g} "
        "(relative), the largest difference in ppm"
    )
    for name, (np_, nv, op, ov, diff, ppm) in sorted(rows.items(), key=lambda kv: (group_of.get(kv[0], "~"), kv[0])):
        flag = "" if op == ov == diff == 0 else "  DIFFERENT"
        group = group_of.get(name, "alerts")
        print(f"  {group:<22} {name:<58} {np_:>7,} {nv:>7,}  only {op}/{ov}  values {diff}  {ppm} ppm{flag}")
    for name in ("ALERTS",):
        a, b = prom.snap.get(name, {}), vm.snap.get(name, {})
        states = sum(1 for k in a.keys() & b.keys() if a[k] != b[k])
        fa, fb = sum(a.values()), sum(b.values())
        print(
            f"  ALERTS firing/pending: Prometheus {fa:.0f}/{len(a) - fa:.0f}, "
            f"VictoriaMetrics {fb:.0f}/{len(b) - fb:.0f}; "
            f"the same alert in another state (the engines ran for different times): {states}"
        )
    print("\nthe synthetic cluster's verdicts: expected, Prometheus, VictoriaMetrics")
    for what, _, expected in cluster.checks:
        got = [prom.checks[what], vm.checks[what]]
        mark = "" if got[0] == got[1] == expected else "  MISMATCH"
        print(f"  {what:<32} {expected:>6} {got[0]!s:>6} {got[1]!s:>6}{mark}")
    print(f"\nrule errors: Prometheus {len(prom.errors)}, vmalert {len(vm.errors)}")
    for e in prom.errors + vm.errors:
        print(f"  {e}")
    print(
        "\ngroup evaluation time, median/max over the evaluations after the fill "
        "(Prometheus: its evaluationTime; vmalert: its iteration duration, the mean of each round's)"
    )
    pt, vt = timings("Prometheus", prom.evals), timings("vmalert", vm.evals)
    for g in ["", *sorted((set(pt) | set(vt)) - {""})]:
        print(f"  {g or 'group':<30} {pt.get(g, '-'):<26} {vt.get(g, '-')}")
    verdict = same(rows) and vm.converged
    print(
        f"\n{'SAME' if verdict else 'DIFFERENT'}: {len(rows)} rules (recorded series and ALERTS), "
        f"{sum(r[0] for r in rows.values()):,} series in Prometheus; VictoriaMetrics "
        f"{'the same twice in a row' if vm.converged else 'not settled'} after {vm.rounds} rounds of evaluations"
    )
    return verdict


def run(args: argparse.Namespace, n: int, workdir: Path) -> bool:
    rule_files = [workdir / "recording.yml", workdir / "alerts.yml"]
    for f in rule_files:  # read at each run: the rules compared are the ones of this moment
        shutil.copy(RULES / f.name, f)
    group_of, expr_of, window = read_rules(rule_files)
    names = [*group_of, "ALERTS"]
    # ALERTS by label set too: an alert's state (pending, firing) depends on how long each engine has run
    by_labels_only = {name for name, expr in expr_of.items() if "time()" in expr} | {"ALERTS"}
    links = longest_chain(expr_of)
    cluster = SyntheticCluster(n, args.osds_per_host)
    targets = split_targets(cluster)
    print(
        f"{n:,} OSDs on {len(cluster.hosts)} hosts: {cluster.series_count:,} input series in {len(targets)} "
        f"targets; {len(group_of)} recorded names (compared by label set only: "
        f"{', '.join(sorted(by_labels_only)) or 'none'})\n"
        f"the longest chain of recorded series, {len(links)} links (vmalert reads its own results back through "
        f"remote write, so a change travels it one link per evaluation at most): {' <- '.join(reversed(links))}",
        flush=True,
    )
    server = TargetServer(targets)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        prom = run_prometheus(workdir, server, rule_files, names, window, args.evaluations, cluster)
        vm = run_vm(
            workdir,
            server,
            rule_files,
            names,
            window,
            prom.snap,
            args.rtol,
            by_labels_only,
            args.max_evaluations,
            cluster,
        )
        print(f"this script's peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GiB")
        return report(prom, vm, group_of, cluster, args.rtol)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--osds", type=int, default=1000)
    parser.add_argument("--osds-per-host", type=int, default=24)
    parser.add_argument(
        "--evaluations",
        type=int,
        default=2,
        help="Prometheus's evaluations of each group after the fill, at least 2: a group reads other groups' results, "
        "and with 1 it may read those of their last evaluation before the fill (rates of a range not yet full)",
    )
    parser.add_argument("--max-evaluations", type=int, default=12, help="vmalert's rounds at most, after the fill")
    parser.add_argument("--rtol", type=float, default=1e-6, help="relative tolerance of values")
    parser.add_argument("--nice", type=int, default=10, help="niceness of this script and the engines")
    parser.add_argument("--keep", metavar="DIR", help="leave data, configs and logs in DIR/osds-N")
    args = parser.parse_args()
    if args.evaluations < 2:
        parser.error("--evaluations: at least 2")
    missing = [b for b in ("prometheus", "victoria-metrics", "vmagent", "vmalert") if shutil.which(b) is None]
    if missing:
        print(f"not found: {', '.join(missing)} (Debian: apt-get install prometheus victoria-metrics)", file=sys.stderr)
        return 2
    os.nice(args.nice)
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}; {os.cpu_count()} CPUs")
    if args.keep:
        workdir = Path(args.keep).resolve() / f"osds-{args.osds}"
        shutil.rmtree(workdir, ignore_errors=True)
        workdir.mkdir(parents=True)
        return 0 if run(args, args.osds, workdir) else 1
    with tempfile.TemporaryDirectory(prefix="vm-verdicts-") as tmp:
        return 0 if run(args, args.osds, Path(tmp)) else 1


if __name__ == "__main__":
    sys.exit(main())
