"""Labs from `up` to `down`, each in a directory and on ports of its own: the default topology (--hosts 1), and
a two-host lab killed without `down` whose name the next `up` takes back."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
from pathlib import Path

import pytest

from lab import cephcli, claims, net, procs
from lab.state import LabState

from .labutil import REPO, free_ports, leftovers, port_flags, run_lab, snapshot, wait_until

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


KILLED_DIR = (REPO / ".lab-test-killed").resolve()
NEXT_DIR = (REPO / ".lab-test-next").resolve()
TWO_HOSTS = ("--hosts", "2", "--name", "pwkill", "--subnet-index", "7", "--osd-size", "4")


def _kill_everything_of(directory: Path, state: LabState) -> list[int]:
    """SIGKILL every process of the lab, as a machine restart that keeps /run would: the recorded ones
    and any other whose command line names the lab's files. Nothing is cleaned up."""
    pids = {ref.pid for ref in state.daemons.values() if procs.is_alive(ref)}
    if state.mount_ns is not None and procs.is_alive(state.mount_ns):
        pids.add(state.mount_ns.pid)
    for proc in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError):
            if str(directory).encode() in (proc / "cmdline").read_bytes() and int(proc.name) != os.getpid():
                pids.add(int(proc.name))
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return sorted(pids)


@pytest.mark.own_lab
def test_a_lab_killed_without_down_is_removed_by_the_next_up_of_its_name_and_a_running_one_is_refused() -> None:
    for directory in (KILLED_DIR, NEXT_DIR):
        if (directory / "lab.json").exists():
            run_lab(directory, "down")
    ports = port_flags(free_ports(10))  # both labs: the name is checked before the ports
    first = run_lab(KILLED_DIR, "up", *TWO_HOSTS, *ports)
    assert first.returncode == 0, first.stderr
    state, netns, links, name = snapshot(KILLED_DIR)
    next_state = state
    try:
        # The name of a running lab, from another directory: refused, nothing of either lab touched.
        taken = run_lab(NEXT_DIR, "up", *TWO_HOSTS, *ports)
        assert taken.returncode == 1
        assert f"the lab name 'pwkill' is taken by the lab running in {KILLED_DIR}" in taken.stderr
        assert not NEXT_DIR.exists()
        assert all(procs.is_alive(ref) for ref in state.daemons.values())

        killed = _kill_everything_of(KILLED_DIR, state)
        wait_until(lambda: not any(procs.is_alive(ref) for ref in state.daemons.values()), 30, "the lab is dead")
        assert all(net.netns_exists(ns) for ns in netns) and state.loops  # what a restart leaves behind
        print(f"\nkilled {len(killed)} processes; left: {len(netns)} namespaces, {len(state.loops)} loop devices")

        next_up = run_lab(NEXT_DIR, "up", *TWO_HOSTS, *ports)
        assert next_up.returncode == 0, next_up.stderr
        next_state = snapshot(NEXT_DIR)[0]
        assert f"the lab in {KILLED_DIR} (--name pwkill) ended without `down`" in next_up.stderr
        assert leftovers(KILLED_DIR, state, [], [], name) == []  # its loops, cgroups, directory: all gone
        assert cephcli.run(NEXT_DIR / "ceph.conf", "health")["status"] == "HEALTH_OK"
        assert claims.holder("pwkill") == NEXT_DIR
    finally:
        for directory in (NEXT_DIR, KILLED_DIR):
            if (directory / "lab.json").exists():
                down = run_lab(directory, "down")
                assert down.returncode == 0, down.stderr
    assert leftovers(NEXT_DIR, next_state, netns, links, name) == []
