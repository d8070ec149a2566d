"""Starting and stopping the lab's processes, by PID only.

A PID is recorded with the process start time (field 22 of /proc/PID/stat), so a PID the kernel has
since given to another process is never signalled.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import subprocess
import time
from pathlib import Path


@dataclasses.dataclass(frozen=True)
class ProcRef:
    pid: int
    start_ticks: int

    def to_dict(self) -> dict[str, int]:
        return {"pid": self.pid, "start_ticks": self.start_ticks}

    @classmethod
    def from_dict(cls, data: dict[str, int]) -> ProcRef:
        return cls(pid=int(data["pid"]), start_ticks=int(data["start_ticks"]))


def parse_stat(text: str) -> tuple[str, int]:
    """(state letter, start time in clock ticks) from the text of /proc/PID/stat.

    The command name is in parentheses and may itself hold spaces and parentheses: split after the last ')'.
    """
    rest = text[text.rindex(")") + 2 :].split()
    # rest[0] is field 3 (state); field 22 (starttime) is rest[19].
    return rest[0], int(rest[19])


def read_stat(pid: int) -> tuple[str, int] | None:
    try:
        return parse_stat(Path(f"/proc/{pid}/stat").read_text())
    except (FileNotFoundError, ProcessLookupError, ValueError, IndexError):
        return None


def is_alive(ref: ProcRef) -> bool:
    stat = read_stat(ref.pid)
    return stat is not None and stat[1] == ref.start_ticks and stat[0] not in ("Z", "X")


def spawn(argv: list[str], log_path: Path, netns: str | None = None, env: dict[str, str] | None = None) -> ProcRef:
    """Start a daemon in its own session (it outlives us), in /, its stdout/stderr appended to log_path."""
    if netns:
        argv = ["ip", "netns", "exec", netns, *argv]  # `ip netns exec` execs: the PID stays the daemon's
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=env,
            cwd="/",  # holds no folder busy; and Debian's Reef resolves its default osd_class_dir from the cwd
        )
    for _ in range(100):
        stat = read_stat(proc.pid)
        if stat is not None:
            return ProcRef(proc.pid, stat[1])
        time.sleep(0.01)
    raise RuntimeError(f"{argv[0]} (pid {proc.pid}) exited at once; see {log_path}")


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def signal_proc(ref: ProcRef, sig: int) -> bool:
    """Send sig if ref is still the process we started; True if it was sent."""
    if not is_alive(ref):
        return False
    try:
        os.kill(ref.pid, sig)
    except ProcessLookupError:
        return False
    return True


def stop(ref: ProcRef, grace: float = 10.0) -> None:
    """SIGTERM, wait up to `grace` seconds, then SIGKILL. Only ever signals the recorded process."""
    if not signal_proc(ref, signal.SIGTERM):
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        _reap(ref.pid)
        if not is_alive(ref):
            return
        time.sleep(0.1)
    signal_proc(ref, signal.SIGKILL)
    for _ in range(50):
        _reap(ref.pid)
        if not is_alive(ref):
            return
        time.sleep(0.1)


class StuckProcess(Exception):
    """A child that did not end when told to; the message holds its threads' stacks where it gave them."""


def stop_child(
    proc: subprocess.Popen[bytes], grace: float = 60.0, dump_wait: float = 3.0, pipe_wait: float = 10.0
) -> str:
    """Ends a child started with stdout and stderr piped (SIGTERM, then up to `grace` s) and returns what it
    printed. One that does not end is sent SIGUSR1 first (a `python3 -m lab` command then prints every
    thread's stack, faulthandler), then killed and reaped, and StuckProcess says what it printed, stacks
    included. Every wait is bounded: when the pipes stay open (a process it started holds them), it says
    so, with what was read until then, instead of waiting for them."""
    if proc.poll() is None:
        proc.terminate()
    try:
        out, _ = proc.communicate(timeout=grace)
        return out.decode(errors="replace").strip()
    except subprocess.TimeoutExpired:
        pass
    ended = proc.poll()  # not None: it did end, only its pipes did not close
    if ended is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGUSR1)
        time.sleep(dump_wait)  # the stacks are written by the child's own faulthandler, at once
        proc.kill()
    held = ""
    try:
        out, err = proc.communicate(timeout=pipe_wait)
    except subprocess.TimeoutExpired as exc:  # it holds all that both communicate() calls read
        out, err = exc.output or b"", exc.stderr or b""
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)
        after = "it ended" if ended is not None else "it was killed"
        held = f"; its output pipes stayed open after {after}: a process it started holds them (read until then below)"
    args = proc.args if isinstance(proc.args, (list, tuple)) else [proc.args]
    command = " ".join(str(a) for a in args)
    if ended is None:
        what, stacks = f"did not end {grace:g} s after SIGTERM, killed", " (stacks at SIGUSR1)"
    else:
        what, stacks = f"ended after SIGTERM (exit {ended})", ""
    said = f"stdout:\n{out.decode(errors='replace')}\nstderr{stacks}:\n{err.decode(errors='replace')}"
    raise StuckProcess(f"pid {proc.pid} ({command}) {what}{held}\n{said}")
