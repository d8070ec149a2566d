#!/usr/bin/env python3
"""The host exporter's collection time with hung OSDs on its host: N root processes called ceph-osd (a copy
of python3 by that name, so the exporter trusts them as a packaged daemon), each listening on its admin
socket and never answering, beside one that answers every command with a recorded Pacific reply. The
exporter runs with --daemon-counters and the default 2 s --asok-timeout; printed: its first collections'
duration (ceph_perfwatch_exporter_collection_duration_seconds), and whether the answering OSD was read.
--exporter-tree runs another checkout's exporter (its exporters/ and mgr_module/), to compare versions.
Runs as root; stops exactly what it started, by PID.

    sudo .venv/bin/python -m bench.exporter_hung_daemons [--hung 0,8,24] [--collections 3]
        [--hang accepted|backlog] [--exporter-tree DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FSID = "00000000-0000-4000-8000-00000000c0de"
FIXTURES = REPO / "tests" / "fixtures"

# The stand-in daemon: listens on its admin socket. A hung one, --hang accepted: takes every connection in
# and never answers (backlog 64); --hang backlog: as Ceph's admin socket whose one thread is stuck in a
# command, never accepts (Ceph listens with a backlog of 5: a sixth connect fails at once, EAGAIN). The
# answering one answers `perf dump` with the recorded reply and `config get` with its own value.
DAEMON = r"""
import json, os, socket, struct, sys, threading
path, mode, dump = sys.argv[1], sys.argv[2], sys.argv[3]
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
srv.listen(5 if mode == "backlog" else 64)
if mode == "backlog":
    threading.Event().wait()
held = []
def answer(conn):
    data = b""
    while not data.endswith(b"\0"):
        chunk = conn.recv(4096)
        if not chunk:
            return
        data += chunk
    if mode == "accepted":
        held.append(conn)
        return
    cmd = json.loads(data[:-1])
    if cmd["prefix"] == "perf dump":
        body = open(dump, "rb").read()
    else:
        body = json.dumps({cmd.get("var", "x"): "/nonexistent" if cmd.get("var") == "osd_data" else FSID}).encode()
    conn.sendall(struct.pack(">I", len(body)) + body)
    conn.close()
FSID = sys.argv[4]
while True:
    conn, _ = srv.accept()
    threading.Thread(target=answer, args=(conn,), daemon=True).start()
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def value(text: str, name: str, labels: str = "") -> float | None:
    pattern = (
        rf"^{re.escape(name)}{{[^}}]*{re.escape(labels)}[^}}]*}} (\S+)$"
        if labels
        else rf"^{re.escape(name)}(?:{{[^}}]*}})? (\S+)$"
    )
    found = re.search(pattern, text, re.MULTILINE)
    return float(found.group(1)) if found else None


def scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as resp:
        return resp.read().decode()


def one_run(tree: Path, hung: int, collections: int, hang: str) -> str:
    folder = Path(tempfile.mkdtemp(prefix="pwhung-"))
    binary = folder / "ceph-osd"
    shutil.copy2(Path("/usr/bin/python3").resolve(), binary)
    script = folder / "daemon.py"
    script.write_text(DAEMON)
    dump = FIXTURES / "pacific_osd_perf_dump.json"
    procs: list[subprocess.Popen[bytes]] = []
    exporter = None
    try:
        for n in range(hung + 1):
            sock = folder / f"ceph-osd.{n}.asok"
            mode = "answer" if n == 0 else hang
            argv = ["ceph-osd", str(script), str(sock), mode, str(dump), FSID, "--fsid", FSID, "-i", str(n),
                    "--admin-socket", str(sock)]  # fmt: skip
            procs.append(subprocess.Popen(argv, executable=str(binary)))
        deadline = time.monotonic() + 30
        while not all((folder / f"ceph-osd.{n}.asok").exists() for n in range(hung + 1)):
            if time.monotonic() > deadline:
                raise RuntimeError("the stand-in daemons did not listen within 30 s")
            time.sleep(0.05)
        port = free_port()
        env = dict(os.environ, PYTHONPATH=f"{tree / 'exporters'}:{tree / 'mgr_module'}")
        argv = [sys.executable, "-m", "perfwatch_host_exporter", "--listen-address", "127.0.0.1", "--port",
                str(port), "--cluster-fsid", FSID, "--daemon-counters", "--collect-interval", "1",
                "--hostname", "bench"]  # fmt: skip
        exporter = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        url = f"http://127.0.0.1:{port}/metrics"
        durations: list[float] = []
        seen = 0.0
        text = ""
        deadline = time.monotonic() + 60 + collections * (hung * 6 + 5)
        while len(durations) < collections:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{len(durations)} collections ended before the bench's deadline")
            try:
                text = scrape(url)
            except OSError:
                time.sleep(0.2)
                continue
            count = value(text, "ceph_perfwatch_exporter_collections_total") or 0.0
            if count > seen:
                seen = count
                took = value(text, "ceph_perfwatch_exporter_collection_duration_seconds")
                if took is not None:
                    durations.append(took)
            time.sleep(0.1)
        up = value(text, "ceph_perfwatch_daemon_up", 'ceph_daemon="osd.0"')
        hung_up = value(text, "ceph_perfwatch_daemon_up", 'ceph_daemon="osd.1"') if hung else None
        shown = ", ".join(f"{d:.2f}" for d in durations)
        return f"{hung:>3} hung OSDs: collection duration s [{shown}]; answering osd.0 daemon_up {up}, osd.1 {hung_up}"
    finally:
        if exporter is not None:
            exporter.terminate()
            exporter.wait(10)
        for proc in procs:
            proc.kill()
            proc.wait()
        shutil.rmtree(folder)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hung", default="0,8,24")
    parser.add_argument("--collections", type=int, default=3, help="collections to wait for, per run")
    parser.add_argument("--exporter-tree", type=Path, default=REPO)
    parser.add_argument("--hang", choices=("accepted", "backlog"), default="accepted", help="how a hung OSD hangs")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("run as root: the exporter trusts only root's (or ceph's) daemons", file=sys.stderr)
        return 2
    tree = args.exporter_tree.resolve()
    print(f"exporter {tree}: --daemon-counters, --asok-timeout 2 (default), --collect-interval 1, --hang {args.hang}")
    for hung in (int(h) for h in args.hung.split(",")):
        print("  " + one_run(tree, hung, args.collections, args.hang), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
