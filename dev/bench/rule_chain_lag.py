#!/usr/bin/env python3
"""How long the production rules' verdict chain lags behind its inputs, in production terms.

Prometheus evaluates each rule group every evaluation_interval (1 m in production), at an offset within it
that a hash of the group's name and file path decides; a rule reading another group's result reads what that
group recorded at its last evaluation. So each group a chain crosses adds between 0 and one interval of
delay, and a saturation alert's `for:` starts that much after its inputs say so. This starts Debian's
Prometheus with the production rule files (no targets: only the schedule matters) and prints each group's
offset and, for the chains from the verdicts' first recording group to the saturation alerts, the delay each
hop adds here and its bounds. Other file paths (another installation) give other figures, in the same bounds.

    python3 -m bench.rule_chain_lag [--rules DIR]
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
import time
from pathlib import Path

from bench.rule_cost import RULES, Prometheus, rfc3339, seconds

# The groups each saturation alert's value passes through, from the raw inputs to the alert, in order (one
# chain per resource: each resource's verdict has its own group); a group of a chain that the rule files do
# not have (merged into another, or rules older than the split) is skipped, and chains met twice count once.
CHAINS = (
    ("perfwatch-signals", "perfwatch-osd", "perfwatch-verdicts", "perfwatch-saturation-alerts"),
    ("perfwatch-media", "perfwatch-saturation-alerts"),
    ("perfwatch-cpu", "perfwatch-saturation-alerts"),
    ("perfwatch-network", "perfwatch-saturation-alerts"),
)
UNSET = "0001-01-01"


def offsets(prom: Prometheus, wait: float) -> tuple[dict[str, float], float]:
    """Each group's evaluation offset within its interval, and the interval (seconds)."""
    deadline = time.monotonic() + wait
    while True:
        groups = prom.api("rules")["groups"]
        if groups and all(not g["lastEvaluation"].startswith(UNSET) for g in groups):
            break
        if time.monotonic() > deadline:
            raise SystemExit(f"not every group evaluated within {wait:.0f} s")
        time.sleep(1)
    interval = float(groups[0]["interval"])
    return {g["name"]: rfc3339(g["lastEvaluation"]) % interval for g in groups}, interval


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rules", type=Path, default=RULES, help="folder with recording.yml and alerts.yml")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="rule-chain-lag-") as tmp:
        prom = Prometheus(Path(tmp), "", [], [args.rules / "recording.yml", args.rules / "alerts.yml"])
        try:
            prom.wait_ready()
            found, interval = offsets(prom, wait=seconds("1m") * 2 + 30)
        finally:
            prom.proc.terminate()
            prom.proc.wait(timeout=60)
    print(f"evaluation interval {interval:g} s; each group's offset within it:")
    for name, offset in sorted(found.items(), key=lambda kv: kv[1]):
        print(f"  {offset:6.2f} s  {name}")
    chains = list(dict.fromkeys(tuple(name for name in c if name in found) for c in CHAINS))
    for chain in (c for c in chains if len(c) > 1):
        print(f"\nverdict chain: {' -> '.join(chain)} ({len(chain) - 1} hop(s) between groups)")
        total = 0.0
        for before, after in itertools.pairwise(chain):
            hop = (found[after] - found[before]) % interval
            total += hop
            print(f"  {before} -> {after}: waits {hop:5.2f} s here (0 to {interval:g} s, by the groups' hashes)")
        hops = len(chain) - 1
        print(
            f"delay from the inputs' first recording to the alert's evaluation: {total:.2f} s here; between 0 "
            f"and {hops * interval:g} s, {hops * interval / 2:g} s expected, on top of the alert's `for:`"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
