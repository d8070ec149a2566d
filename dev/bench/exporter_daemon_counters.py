"""What one host exporter spends on its own OSDs' counters (`--daemon-counters`, the module's
`daemon_counters_source` set to `exporters`): per collection, for N OSDs on the host, the CPU of decoding
each OSD's `perf dump` reply (a recorded Pacific OSD's, as the compact JSON an admin socket returns),
reading it with the module's table, the per-daemon status series, and rendering all of it with the
exporter's registry. Left out: the admin sockets' round trips (the daemons' and the kernel's side) and the
exporter's other work (processes, cgroups, devices, NICs), done with or without --daemon-counters.
The cost is per host: what grows with a cluster is the number of hosts.

    python3 -m bench.exporter_daemon_counters [--osds 12 24 48] [--cycles 20]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

from perfwatch.common.daemon_counters import counters  # noqa: E402
from perfwatch.common.exposition import render  # noqa: E402
from perfwatch_host_exporter import daemon_counters  # noqa: E402
from perfwatch_host_exporter.families import EXPORTER_REGISTRY  # noqa: E402

FIXTURES = REPO / "tests" / "fixtures"
FSID = "2f3c6a52-93a4-4a52-9b41-0c6a0c9e2b7d"


def replies() -> dict[str, str]:
    compact = (",", ":")
    return {
        counters.PERF_DUMP["prefix"]: json.dumps(
            json.loads((FIXTURES / "pacific_osd_perf_dump.json").read_text()), separators=compact
        ),
    }


def one_collection(n: int, texts: dict[str, str]) -> tuple[str, int]:
    """The counter part of one collection of a host with n OSDs: (the rendered page, its samples)."""
    samples = []
    for osd in range(n):
        label = f"osd.{osd}"
        got = daemon_counters.read(lambda command: json.loads(texts[command["prefix"]]), label)
        status = daemon_counters.status_samples(label, got, True, time.time(), {})
        samples.extend(daemon_counters.placed(got.samples + status, FSID, "host-1"))
    return render(EXPORTER_REGISTRY, samples), len(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--osds", type=int, nargs="+", default=[12, 24, 48], help="OSDs on the host")
    parser.add_argument("--cycles", type=int, default=20, help="timed collections per size")
    args = parser.parse_args()
    texts = replies()
    print("one host exporter's OSD counters per collection (recorded Pacific replies; socket round trips left out)")
    print(f"{'OSDs':>5} {'CPU median':>11} {'min':>8} {'max':>8} {'samples':>8} {'page':>9}  share of a core at 30 s")
    for n in args.osds:
        one_collection(n, texts)  # warm-up: imports, the registry's caches
        cpu = []
        page, count = "", 0
        for _ in range(args.cycles):
            t0 = time.process_time()
            page, count = one_collection(n, texts)
            cpu.append(time.process_time() - t0)
        median = statistics.median(cpu)
        print(
            f"{n:>5} {median * 1000:>9.1f} ms {min(cpu) * 1000:>6.1f} ms {max(cpu) * 1000:>6.1f} ms"
            f" {count:>8,} {len(page.encode()) / 1e6:>6.2f} MB  {median / 30 * 100:.2f} %"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
