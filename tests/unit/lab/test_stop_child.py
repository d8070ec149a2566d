"""procs.stop_child: a child that ends when told to gives its output; one that does not is sent SIGUSR1
(where `python3 -m lab` prints its threads' stacks), killed, and named with those stacks; a grandchild
holding the pipes open costs a bounded wait, said as such. Real processes; short graces."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from lab.procs import StuckProcess, stop_child

STUCK = textwrap.dedent(
    """
    import faulthandler, signal, sys, time
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    def waits_for_a_bench_that_never_ends():
        print("started", flush=True)
        while True:
            time.sleep(0.05)
    waits_for_a_bench_that_never_ends()
    """
)


def child(code: str, ready: Path) -> subprocess.Popen[bytes]:
    """The child runs `code`, which says it has set its handlers by printing "started" (to stderr, which
    the test reads apart from what stop_child reads: a buffered read of the pipe would take that too)."""
    code = code.replace('print("started"', f"open({str(ready)!r}, 'w').write('ok'); print(\"started\"")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while not ready.exists():
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.01)
    return proc


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_a_child_that_ends_when_told_gives_what_it_printed(tmp_path: Path) -> None:
    proc = child(
        'import time\nprint("started", flush=True)\nprint("stopped cleanly", flush=True)\ntime.sleep(30)',
        tmp_path / "r",
    )
    assert stop_child(proc, grace=5) == "started\nstopped cleanly"
    assert proc.returncode is not None


def test_a_child_that_ignores_sigterm_is_named_with_its_stacks_and_killed(tmp_path: Path) -> None:
    proc = child(STUCK, tmp_path / "r")
    with pytest.raises(StuckProcess) as stuck:
        stop_child(proc, grace=0.5, dump_wait=0.5)
    said = str(stuck.value)
    assert f"pid {proc.pid}" in said and "did not end 0.5 s after SIGTERM, killed" in said
    assert "waits_for_a_bench_that_never_ends" in said  # the stack faulthandler wrote at SIGUSR1
    assert proc.returncode is not None and gone(proc.pid)


def grandchild_holding_the_pipes(code: str, pid_file: Path) -> tuple[subprocess.Popen[bytes], int]:
    """The child runs `code`, where "started" is printed once it has started `sleep 40` (which inherits its
    stdout and stderr) and written that PID to pid_file; returns the child and the sleep's PID."""
    code = code.replace(
        'print("started", flush=True)',
        'import subprocess; open(sys.argv[1], "w").write(str(subprocess.Popen(["sleep", "40"]).pid))',
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(pid_file)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while not (pid_file.exists() and pid_file.read_text()):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    return proc, int(pid_file.read_text())


def test_a_grandchild_holding_the_pipes_costs_a_bounded_wait_and_is_said(tmp_path: Path) -> None:
    proc, grandchild = grandchild_holding_the_pipes(STUCK, tmp_path / "grandchild")
    try:
        started = time.monotonic()
        with pytest.raises(StuckProcess) as stuck:
            stop_child(proc, grace=0.5, dump_wait=0.2, pipe_wait=1.0)
        assert time.monotonic() - started < 5
        said = str(stuck.value)
        assert "did not end 0.5 s after SIGTERM, killed" in said
        assert "stayed open after it was killed: a process it started holds them" in said
        assert "waits_for_a_bench_that_never_ends" in said  # the stacks, read before the pipes' wait ran out
        assert proc.returncode is not None and gone(proc.pid)
    finally:
        os.kill(grandchild, signal.SIGKILL)  # ours: the sleep the child started


def test_a_child_that_ended_but_left_its_pipes_held_is_not_said_stuck(tmp_path: Path) -> None:
    code = 'import sys, time\nprint("started", flush=True)\nprint("bench stopped", file=sys.stderr, flush=True)\n'
    proc, grandchild = grandchild_holding_the_pipes(code + "time.sleep(30)", tmp_path / "grandchild")
    try:
        with pytest.raises(StuckProcess) as stuck:
            stop_child(proc, grace=0.5, dump_wait=0.2, pipe_wait=0.5)
        said = str(stuck.value)
        assert f"ended after SIGTERM (exit {-signal.SIGTERM})" in said and "did not end" not in said
        assert "stayed open after it ended: a process it started holds them" in said
        assert "bench stopped" in said  # what it wrote before it ended
    finally:
        os.kill(grandchild, signal.SIGKILL)
