"""Times `python3 -m lab up` to HEALTH_OK and `down`, for each topology, and prints the figures.

Usage: python3 -m bench.lab_startup [--runs N]. Uses its own directory and ports; as root.
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
TOPOLOGIES = {"--hosts 1": ["--hosts", "1"], "--hosts 3": ["--hosts", "3", "--subnet-index", "9"]}


def lab(directory: Path, *args: str) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "lab", "--dir", str(directory), *args]
    return subprocess.run(argv, cwd=REPO, capture_output=True, text=True, check=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    directory = REPO / ".lab-bench"
    ports = ["--name", "pwbench", "--mon-port", "24300", "--rgw-port", "24301", "--module-port", "24302"]
    for label, topo in TOPOLOGIES.items():
        ups, downs = [], []
        for _ in range(args.runs):
            up = lab(directory, "up", *topo, *ports)
            if up.returncode != 0:
                print(f"{label}: up failed: {up.stderr.strip()}", file=sys.stderr)
                lab(directory, "down")
                return 1
            found = re.search(r"HEALTH_OK in ([\d.]+) s", up.stdout)
            if found is None:
                print(f"{label}: no start-up time in the output: {up.stdout.strip()}", file=sys.stderr)
                return 1
            ups.append(float(found.group(1)))
            t0 = time.monotonic()
            lab(directory, "down")
            downs.append(time.monotonic() - t0)
        print(
            f"lab {label}: up to HEALTH_OK {', '.join(f'{s:.1f}' for s in ups)} s "
            f"(median {statistics.median(ups):.1f} s); down {statistics.median(downs):.1f} s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
