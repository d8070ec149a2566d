#!/usr/bin/env python3
"""The host exporter's scrape latency with fake daemons of a local user beside it: N processes of `nobody`
called ceph-osd (a copy of python3 by that name), each claiming osd.N of the cluster the exporter reports
(--fsid) with a FIFO for its config, and one more without --fsid (an exporter that believed it would read
the FIFO to find its cluster, and wait for good). Prints the latency of many scrapes (min, median, p99, max),
the exporter's own collection time, how many daemons it reported (the fakes it believed) and refused, and
its resident memory. --exporter-tree runs another checkout's exporter (its exporters/ and mgr_module/), to
compare versions. Runs as root (it starts processes as nobody); stops exactly what it started.

    sudo .venv/bin/python -m bench.exporter_scrape [--fakes 200] [--scrapes 500] [--exporter-tree DIR] [--no-blocker]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NOBODY = 65534
FSID = "00000000-0000-4000-8000-00000000b0b0"  # no cluster: the host's own daemons are left out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_fakes(folder: Path, count: int, blocker: bool) -> list[subprocess.Popen[bytes]]:
    binary = folder / "ceph-osd"
    shutil.copy2(Path("/usr/bin/python3").resolve(), binary)
    fifo = folder / "fifo"
    os.mkfifo(fifo)
    fifo.chmod(0o666)
    sleeper = "import time; time.sleep(3600)"
    procs = []
    for n in range(count):
        argv = ["ceph-osd", "-c", sleeper, "--conf", str(fifo), "--fsid", FSID, "--id", str(n)]
        procs.append(subprocess.Popen(argv, executable=str(binary), user=NOBODY, group=NOBODY))
    if blocker:
        argv = ["ceph-osd", "-c", sleeper, "--conf", str(fifo), "--id", "99"]  # no --fsid: its config is read
        procs.append(subprocess.Popen(argv, executable=str(binary), user=NOBODY, group=NOBODY))
    return procs


def scrape(url: str) -> tuple[float, str]:
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=30) as resp:
        text = resp.read().decode()
    return time.perf_counter() - started, text


def value(text: str, name: str) -> float | None:
    found = re.search(rf"^{re.escape(name)}(?:{{[^}}]*}})? (\S+)$", text, re.MULTILINE)
    return float(found.group(1)) if found else None


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fakes", type=int, default=200)
    parser.add_argument("--scrapes", type=int, default=500)
    parser.add_argument("--exporter-tree", type=Path, default=REPO)
    parser.add_argument("--no-blocker", action="store_true", help="leave out the fake without --fsid")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("run as root: it starts processes as nobody", file=sys.stderr)
        return 2
    folder = Path(tempfile.mkdtemp(prefix="pwbench-"))
    folder.chmod(0o755)
    fakes = start_fakes(folder, args.fakes, not args.no_blocker)
    port = free_port()
    tree = args.exporter_tree.resolve()
    env = dict(os.environ, PYTHONPATH=f"{tree / 'exporters'}:{tree / 'mgr_module'}")
    argv = [sys.executable, "-m", "perfwatch_host_exporter", "--listen-address", "127.0.0.1", "--port", str(port),
            "--cluster-fsid", FSID]  # fmt: skip
    if "--collect-interval" in subprocess.run([*argv[:3], "--help"], env=env, capture_output=True, text=True).stdout:
        argv += ["--collect-interval", "5"]
    exporter = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/metrics"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                _, text = scrape(url)
                if (
                    "collections_total" not in text
                    or (value(text, "ceph_perfwatch_exporter_collections_total") or 0) >= 1
                ):
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                print(f"exporter {tree}: {len(fakes)} fake daemons of nobody: /metrics did not answer within 60 s")
                return 1
            time.sleep(0.2)
        times = []
        for _ in range(args.scrapes):
            seconds, text = scrape(url)
            times.append(seconds * 1000)
        times.sort()
        p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
        duration = value(text, "ceph_perfwatch_exporter_collection_duration_seconds")
        if duration is None:
            duration = value(text, "ceph_perfwatch_exporter_scrape_duration_seconds")
        refused = value(
            text,
            'ceph_perfwatch_exporter_refused_total{hostname="' + socket.gethostname() + '",reason="untrusted_process"}',
        )
        print(f"exporter {tree}: {len(fakes)} fake daemons of nobody, {args.scrapes} scrapes")
        median = statistics.median(times)
        print(f"  scrape latency ms: min {times[0]:.2f}, median {median:.2f}, p99 {p99:.2f}, max {times[-1]:.2f}")
        rss = rss_mb(exporter.pid)
        daemons = value(text, "ceph_perfwatch_exporter_daemons")
        print(f"  collection duration s: {duration}; daemons reported {daemons}; untrusted_process refused {refused}")
        print(f"  RSS {rss:.1f} MB")
        return 0
    finally:
        exporter.terminate()
        exporter.wait(10)
        for proc in fakes:
            proc.kill()
            proc.wait()
        shutil.rmtree(folder)


if __name__ == "__main__":
    sys.exit(main())
