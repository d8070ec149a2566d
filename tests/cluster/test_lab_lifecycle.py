"""A lab of the default topology (--hosts 1) from `up` to `down`, in a directory and on ports of its own."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import pytest

from lab import cephcli

from .labutil import REPO, leftovers, run_lab, snapshot

LIFECYCLE_DIR = (REPO / ".lab-test-default").resolve()
ARGS = (
    "--name", "pwone", "--mon-port", "23300", "--rgw-port", "27480", "--module-port", "29284",
    "--exporter-port", "29285", "--node-exporter-port", "29100",
    "--prometheus-port", "29090", "--alertmanager-port", "29093", "--ceph-metrics-port", "29283",
)  # fmt: skip


@pytest.mark.own_lab
def test_default_lab_is_healthy_refuses_a_second_up_and_down_leaves_nothing() -> None:
    if (LIFECYCLE_DIR / "lab.json").exists():
        run_lab(LIFECYCLE_DIR, "down")
    up = run_lab(LIFECYCLE_DIR, "up", *ARGS)
    assert up.returncode == 0, up.stderr
    seconds = float(re.search(r"HEALTH_OK in ([\d.]+) s", up.stdout).group(1))
    print(f"\ndefault lab reached HEALTH_OK in {seconds:.1f} s")
    state, netns, links, name = snapshot(LIFECYCLE_DIR)
    try:
        conf = LIFECYCLE_DIR / "ceph.conf"
        assert cephcli.run(conf, "health")["status"] == "HEALTH_OK"
        stat = cephcli.run(conf, "osd", "stat")
        assert (stat["num_up_osds"], stat["num_in_osds"]) == (3, 3)
        assert netns == [] and links == []  # the fast path: no namespaces
        assert len(state.loops) == 3
        assert "perfwatch" in cephcli.run(conf, "mgr", "module", "ls")["enabled_modules"]

        recorded = (LIFECYCLE_DIR / "state.json").read_text()
        again = run_lab(LIFECYCLE_DIR, "up", *ARGS)
        assert again.returncode == 0
        assert "already running" in again.stdout and "nothing changed" in again.stdout
        assert (LIFECYCLE_DIR / "state.json").read_text() == recorded

        env = run_lab(LIFECYCLE_DIR, "env")
        assert env.stdout.strip() == f"export CEPH_CONF={conf}"

        # A knob left on is undone by `down` (checked by leftovers() below); status shows it meanwhile.
        knob = run_lab(LIFECYCLE_DIR, "saturate", "cpu", "--osd", "0", "--cores", "0.5")
        assert knob.returncode == 0, knob.stderr
        status = json.loads(run_lab(LIFECYCLE_DIR, "status", "--format", "json").stdout)
        assert status["knobs"]["cpu:osd.0"]["setting"].startswith("0.5 cores")
        assert set(status["exporters"]) == {"node-exporter.pwone-host1", "exporter.pwone-host1"}
        shaped = run_lab(LIFECYCLE_DIR, "saturate", "network", "--host", "1", "--rate", "10mbit")
        assert shaped.returncode == 1 and "--hosts 2 or more" in shaped.stderr
    finally:
        down = run_lab(LIFECYCLE_DIR, "down")
    assert down.returncode == 0, down.stderr
    assert leftovers(LIFECYCLE_DIR, state, netns, links, name) == []


def test_a_taken_port_is_a_one_line_error_and_nothing_is_created(tmp_path: Path) -> None:
    directory = tmp_path / "lab"
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        proc = run_lab(directory, "up", "--mon-port", str(port), "--name", "pwport")
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"lab: error: port {port} (--mon-port) is already in use")
    assert not directory.exists()
