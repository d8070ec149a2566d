"""What whose load costs: client 4 KiB write IOPS and latency, and the OSDs' and the active mgr's CPU, with the
module's OSD perf queries on and off, on a running lab: same load, rounds alternating off/on, medians, ratio.

The load is `rados bench write` (4 KiB, queue depth 16) into a pool of its own (made, then removed with its
objects). With attribution off the OSDs run perfwatch's tombstone query once it was on (an OSD ignores an
empty query set: docs/decisions/osd-perf-query-tombstone.md), so the first "off" round, run before anything
was ever registered, is shown apart as "never".

    .venv/bin/python -m bench.load_cost --lab-dir DIR [--rounds 3] [--seconds 20]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

from lab import cephcli  # noqa: E402
from lab.cluster import Lab  # noqa: E402

POOL = "perfwatch-load-cost"
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def daemon_pids(lab: Lab, prefix: str) -> dict[str, int]:
    return {name: ref.pid for name, ref in lab.state.daemons.items() if name.startswith(prefix)}


def bench(lab: Lab, seconds: int) -> tuple[float, float]:
    """(average IOPS, average latency in s) of one rados bench write round."""
    tool = cephcli.tool(lab.config.conf_path, "rados")
    out = subprocess.run(
        [tool, "-c", str(lab.config.conf_path), "-p", POOL, "bench", str(seconds), "write", "-b", "4096", "-t", "16",
         "--no-cleanup"],
        capture_output=True, text=True, timeout=seconds + 120, check=True,
    ).stdout  # fmt: skip
    iops = float(re.search(r"Average IOPS:\s+([0-9.]+)", out).group(1))  # type: ignore[union-attr]
    latency = float(re.search(r"Average Latency\(s\):\s+([0-9.]+)", out).group(1))  # type: ignore[union-attr]
    return iops, latency


def set_attribution(lab: Lab, on: bool) -> None:
    conf = lab.config.conf_path
    cephcli.run(
        conf, "config", "set", "mgr", "mgr/perfwatch/load_attribution", "true" if on else "false", as_json=False
    )
    time.sleep(20)  # the next pass registers or removes the queries (collect_interval of the lab: 10 s)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lab-dir", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=20)
    args = parser.parse_args()
    lab = Lab.open(Path(args.lab_dir))
    conf = lab.config.conf_path
    cephcli.run(conf, "osd", "pool", "create", POOL, "32", as_json=False)
    cephcli.run(conf, "osd", "pool", "application", "enable", POOL, "rados", as_json=False)
    results: dict[str, list[tuple[float, float, float, float]]] = {"never": [], "off": [], "on": []}
    try:
        plan = ["never"] + ["on", "off"] * args.rounds
        for mode in plan:
            if mode != "never":
                set_attribution(lab, mode == "on")
            osds, mgrs = daemon_pids(lab, "osd."), daemon_pids(lab, "mgr.")
            osd0, mgr0, t0 = (
                sum(map(cpu_seconds, osds.values())),
                {m: cpu_seconds(p) for m, p in mgrs.items()},
                time.monotonic(),
            )
            iops, latency = bench(lab, args.seconds)
            wall = time.monotonic() - t0
            osd_cpu = sum(map(cpu_seconds, osds.values())) - osd0
            mgr_cpu = max(cpu_seconds(p) - mgr0[m] for m, p in mgrs.items())  # the active one's
            results[mode].append((iops, latency, osd_cpu / max(iops * args.seconds, 1) * 1e6, mgr_cpu / wall))
            per_op = osd_cpu / max(iops * args.seconds, 1) * 1e6
            print(f"  {mode:>5}: {iops:8.0f} IOPS, {latency * 1000:6.2f} ms, OSD CPU {per_op:6.1f} us/op, "
                  f"mgr {100 * mgr_cpu / wall:5.1f} % of a core", flush=True)  # fmt: skip
    finally:
        set_attribution(lab, False)
        cephcli.run(conf, "osd", "pool", "rm", POOL, POOL, "--yes-i-really-really-mean-it", as_json=False)
    print(f"{lab.config.osds} OSDs, rados bench write 4 KiB, queue depth 16, {args.seconds} s a round; medians:")
    for mode in ("never", "off", "on"):
        rows = results[mode]
        if rows:
            med = [statistics.median(r[i] for r in rows) for i in range(4)]
            print(f"  {mode:>5} ({len(rows)} rounds): {med[0]:8.0f} IOPS, {med[1] * 1000:6.2f} ms, "
                  f"OSD CPU {med[2]:6.1f} us/op, mgr {100 * med[3]:5.1f} % of a core")  # fmt: skip
    on, off = results["on"], results["off"]
    if on and off:
        ratio = statistics.median(r[0] for r in on) / statistics.median(r[0] for r in off)
        lat = statistics.median(r[1] for r in on) / statistics.median(r[1] for r in off)
        print(f"  on/off: IOPS x{ratio:.3f}, latency x{lat:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
