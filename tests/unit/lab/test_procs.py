import subprocess
import sys
from pathlib import Path

from lab import procs


def test_parse_stat_survives_parentheses_and_spaces_in_the_command_name() -> None:
    fields = " ".join(str(n) for n in range(4, 30))
    state, start = procs.parse_stat(f"1234 (evil) (name ) S {fields}")
    assert state == "S"
    assert start == 22  # field 22


def test_a_recorded_pid_with_another_start_time_is_not_ours(tmp_path: Path) -> None:
    ref = procs.spawn([sys.executable, "-c", "import time; time.sleep(30)"], tmp_path / "log")
    try:
        assert procs.is_alive(ref)
        impostor = procs.ProcRef(ref.pid, ref.start_ticks + 1)
        assert not procs.is_alive(impostor)
        assert not procs.signal_proc(impostor, 15)
        assert procs.is_alive(ref), "a signal must never reach a process we did not start"
    finally:
        procs.stop(ref, grace=5)
    assert not procs.is_alive(ref)


def test_stop_escalates_to_sigkill_when_sigterm_is_ignored(tmp_path: Path) -> None:
    code = (
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(60)"
    )
    log = tmp_path / "log"
    ref = procs.spawn([sys.executable, "-c", code], log)
    for _ in range(100):
        if log.exists() and "ready" in log.read_text():
            break
        subprocess.run(["sleep", "0.05"], check=True)
    procs.stop(ref, grace=0.5)
    assert not procs.is_alive(ref)
