"""Fidelity of the module's rados round: its 4 KiB write IOPS at queue depth 16 beside `rados bench -b 4096
-t 16 write` for the same duration, one after the other, on the same lab. Prints both and their ratio.

Usage: .venv/bin/python -m bench.rados_fidelity [--lab-dir .lab] [--seconds 10] [--repeat 2]
A lab must be running (python3 -m lab up).
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

from lab import cephcli  # noqa: E402
from lab.cluster import Lab  # noqa: E402

POOL = "perfwatch"  # the module's scratch pool: both tools write to the same pool


def module_round(conf: Path, seconds: int) -> float:
    run = cephcli.run(conf, "perfwatch", "bench", "run", "--kind", "rados", "--seconds", str(seconds),
                      "--queue-depth", "16")  # fmt: skip
    deadline = time.monotonic() + seconds * 3 + 60
    while time.monotonic() < deadline:
        for record in cephcli.run(conf, "perfwatch", "bench", "history", "--kind", "rados", "--limit", "20"):
            if record["run_id"] == run["run_id"]:
                if record["state"] != "done":
                    raise SystemExit(f"module round {record['state']}: {record['message']}")
                return next(r["value"] for r in record["results"] if r["metric"] == "write_iops_4k")
        time.sleep(1)
    raise SystemExit("module round did not finish")


def rados_bench(conf: Path, seconds: int) -> float:
    proc = subprocess.run(
        [cephcli.tool(conf, "rados"), "-c", str(conf), "-p", POOL, "-N", "fidelity",
         "bench", str(seconds), "write", "-b", "4096", "-t", "16"],
        capture_output=True, text=True, check=True, timeout=seconds + 120,
    )  # fmt: skip
    found = re.search(r"Average IOPS:\s+([\d.]+)", proc.stdout)
    if found is None:
        raise SystemExit(f"rados bench printed no average IOPS:\n{proc.stdout[-500:]}")
    return float(found.group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lab-dir", default=str(REPO / ".lab"))
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    lab = Lab.open(Path(args.lab_dir).resolve())
    conf = lab.config.conf_path
    # Make sure the scratch pool exists (the module creates it on its first write).
    if lab.ceph("osd", "pool", "ls").count(POOL) == 0:
        module_round(conf, 1)
    ours, theirs = [], []
    for i in range(args.repeat):
        ours.append(module_round(conf, args.seconds))
        theirs.append(rados_bench(conf, args.seconds))
        print(f"  pass {i + 1}: module {ours[-1]:.0f} IOPS, rados bench {theirs[-1]:.0f} IOPS")
    m, r = statistics.median(ours), statistics.median(theirs)
    print(f"rados 4 KiB writes, QD 16, {args.seconds} s, {lab.config.osds} OSDs on {lab.config.hosts} host(s):")
    print(f"  module round  {m:.0f} IOPS (median of {args.repeat})")
    print(f"  rados bench   {r:.0f} IOPS (median of {args.repeat})")
    print(f"  ratio module/rados bench: {m / r:.2f} (goal: 0.85-1.15)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
