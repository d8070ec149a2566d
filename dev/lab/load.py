"""`lab load`: client load from the lab's client host (a namespace of its own when the hosts have theirs),
through librbd (`rbd bench`), bounded in time and space, the way published Ceph test campaigns drove each
saturation.

Images are fixed-size and written over in place, so a load of any length never fills the lab's small
OSDs. They have only the `layering` feature: no exclusive lock for a killed client to leave behind.
The bench runs without librbd's cache (`--rbd_cache=false`), so a pattern's threads are the I/Os it has in
flight, as with fio's direct I/O in those campaigns (with the cache, one thread kept some 200 in flight).
Why: docs/decisions/rbd-scratch-image.md#the-labs-client-load-for-the-same-reason.
"""

from __future__ import annotations

import dataclasses
import os
import re
import signal
import subprocess
import time
from pathlib import Path

from . import cephcli, state
from .config import LabError
from .topology import Host

POOL = "perfwatch-load"
NO_CACHE = "--rbd_cache=false"  # the threads are the I/Os in flight (see above)
MIB = 1024 * 1024


@dataclasses.dataclass(frozen=True)
class Pattern:
    image: str
    io_type: str  # rbd bench --io-type
    io_size: int
    io_pattern: str  # rand | seq
    threads: int
    image_mib: int
    needs_data: bool  # reads must find written objects, or the OSDs answer without touching data

    def bench_argv(self, conf: Path, total_bytes: int, pool: str = POOL, who: Identity | None = None) -> list[str]:
        return [
            cephcli.tool(conf, "rbd"), "-c", str(conf), *(who.argv() if who else ()), "bench", f"{pool}/{self.image}",
            "--io-type", self.io_type, "--io-size", str(self.io_size), "--io-pattern", self.io_pattern,
            "--io-threads", str(self.threads), "--io-total", str(total_bytes), NO_CACHE,
        ]  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Identity:
    """A cephx client of the lab's own making, allowed RBD on one pool only: a second client whose load the
    OSDs count apart from the admin's (`lab load --client NAME`)."""

    name: str  # without "client."
    keyring: Path

    def argv(self) -> tuple[str, ...]:
        return ("--id", self.name, "--keyring", str(self.keyring))


NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$")


def check_name(what: str, name: str) -> None:
    if not NAME_RE.match(name):
        raise LabError(f"{what} {name!r}: letters, digits, _ and -, at most 40, starting with a letter or digit")


def identity(conf: Path, lab_dir: Path, name: str, pool: str) -> Identity:
    """client.NAME with RBD caps on `pool` (made, or its caps set, now), and its keyring in the lab."""
    check_name("--client", name)
    if name == "admin":
        raise LabError("--client admin: the lab's admin is the default client; name another")
    entity = f"client.{name}"
    caps = ("mon", "profile rbd", "osd", f"profile rbd pool={pool}")
    try:  # an identity that exists with other caps (bootstrap-osd, one for another pool) is refused, not changed
        cephcli.run(conf, "auth", "get-or-create", entity, *caps, as_json=False)
        key = cephcli.run(conf, "auth", "get-key", entity, as_json=False).strip()
    except cephcli.CephCommandError as exc:
        raise LabError(f"could not make {entity} with RBD caps on pool {pool} (a name in use?): {exc}") from exc
    keyring = lab_dir / f"keyring.{name}"
    keyring.write_text(f"[{entity}]\n\tkey = {key}\n")
    keyring.chmod(0o600)
    return Identity(name, keyring)


PATTERNS = {
    # 4 KiB random writes at queue depth 16: IOPS-bound, what saturates OSD CPU, then the media
    "small-random-write": Pattern("load-small", "write", 4096, "rand", 16, 256, False),
    # 4 KiB random writes with one in flight: latency-bound, a closed loop that cannot build a queue at
    # any device, CPU or link; the lab's healthy load, which must raise no saturation verdict
    "light-random-write": Pattern("load-small", "write", 4096, "rand", 1, 256, False),
    # 4 MiB writes: throughput-bound; with 3 replicas, every byte crosses the network three times
    "large-write": Pattern("load-large", "write", 4 * MIB, "seq", 16, 384, False),
    # 4 MiB random reads of written data: what saturates the hosts' links first
    "large-read": Pattern("load-large", "read", 4 * MIB, "rand", 16, 384, True),
}


@dataclasses.dataclass(frozen=True)
class LoadResult:
    pattern: str
    seconds: float
    ops: int
    where: str

    @property
    def iops(self) -> float:
        return self.ops / self.seconds if self.seconds > 0 else 0.0

    def bytes_per_second(self, io_size: int) -> float:
        return self.iops * io_size


_LINE_RE = re.compile(r"^\s*(\d+)\s+(\d+)\s+([\d.]+)\s")
# what rbd bench says when it ends, also when stopped (SIGTERM): 'elapsed: 2   ops: 157   ops/sec: 65.8 ...'
_SUMMARY_RE = re.compile(r"^elapsed:\s*(\d+)(?:\.\d*)?\s+ops:\s*(\d+)\s")


def parse_progress(text: str) -> list[tuple[int, int]]:
    """(second, cumulative ops) from `rbd bench` progress lines ('    3      7808   2597.61    10 MiB/s'), then
    from its summary line when it printed one. A busy machine may stop a short run before its first
    progress line (a 2 s warm-up under a loaded CI); the summary still counts its ops."""
    rows = []
    for line in text.splitlines():
        match = _LINE_RE.match(line) or _SUMMARY_RE.match(line)
        if match:
            rows.append((int(match.group(1)), int(match.group(2))))
    return rows


def check_seconds(seconds: float) -> None:
    if not 1 <= seconds <= 3600:
        raise LabError(f"--seconds {seconds}: must be between 1 and 3600")


POOL_PGS = 8  # a load pool's PGs when `load` makes it (--pg-num)


def check_pg_num(pg_num: int) -> None:
    if not 1 <= pg_num <= 128:
        raise LabError(f"--pg-num {pg_num}: must be between 1 and 128 (the lab's OSDs hold at most 250 PGs each)")


def _prepare(conf: Path, pattern: Pattern, pool: str, pg_num: int) -> None:
    pools = cephcli.run(conf, "osd", "pool", "ls")
    if pool not in pools:
        cephcli.run(conf, "osd", "pool", "create", pool, str(pg_num), as_json=False)
        cephcli.run(conf, "osd", "pool", "application", "enable", pool, "rbd", as_json=False)
    images = cephcli.run_tool("rbd", conf, "ls", "--format", "json", pool)
    if pattern.image not in images:
        create = ("create", "--size", f"{pattern.image_mib}M", "--image-feature", "layering", f"{pool}/{pattern.image}")
        cephcli.run_tool("rbd", conf, *create, as_json=False)
    if pattern.needs_data and not _filled(conf, pattern, pool):
        fill = dataclasses.replace(pattern, io_type="write", io_pattern="seq")
        total = pattern.image_mib * MIB
        argv = fill.bench_argv(conf, total, pool)
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise LabError(f"filling {pattern.image} failed: {proc.stderr.strip()[-400:]}")
        meta = ("image-meta", "set", f"{pool}/{pattern.image}", "perfwatch.filled", "1")
        cephcli.run_tool("rbd", conf, *meta, as_json=False)


def _filled(conf: Path, pattern: Pattern, pool: str) -> bool:
    try:
        meta = ("image-meta", "get", f"{pool}/{pattern.image}", "perfwatch.filled")
        cephcli.run_tool("rbd", conf, *meta, as_json=False)
    except cephcli.CephCommandError:
        return False
    return True


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    """Signal `timeout` and the bench under it (timeout made itself a process group leader)."""
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):  # not (yet) a group of its own: signal the process alone
        proc.send_signal(sig)  # (nothing once it has been reaped)


def run(
    conf: Path,
    lab_dir: Path,
    client: Host,
    pattern_name: str,
    seconds: float,
    pool: str = POOL,
    client_name: str | None = None,
    pg_num: int = POOL_PGS,
) -> LoadResult:
    """Run one pattern for `seconds` from the `client` host (the lab's client namespace) against the cluster
    of `conf`, in `pool` (made with `pg_num` PGs if missing), as the admin or as client.`client_name` (made,
    with RBD caps on that pool only); returns what the client measured. The bench is recorded in the state of the lab in
    `lab_dir` while it runs, so `down` stops it if this process cannot."""
    if pattern_name not in PATTERNS:
        raise LabError(f"--pattern {pattern_name!r}: one of {', '.join(PATTERNS)}")
    check_seconds(seconds)
    check_name("--pool", pool)
    check_pg_num(pg_num)
    pattern = PATTERNS[pattern_name]
    try:
        _prepare(conf, pattern, pool, pg_num)
    except cephcli.CephCommandError as exc:
        raise LabError(f"preparing the load pool or image failed: {exc}") from exc
    who = identity(conf, lab_dir, client_name, pool) if client_name is not None else None
    # More bytes than the client could move in the time: the clock, not the total, ends the run.
    total = 1 << 50
    argv = pattern.bench_argv(conf, total, pool, who)
    # `timeout` is the guard if this process dies: the bench still ends (SIGTERM, then SIGKILL) after
    # its time. It leads a process group of its own, with rbd in it: we signal that whole group.
    argv = ["timeout", "--signal=TERM", "--kill-after=10", f"{seconds + 15:.0f}", *argv]
    if client.netns:
        argv = ["ip", "netns", "exec", client.netns, *argv]  # execs: the PID stays timeout's
    log = lab_dir / "log" / f"load.{os.getpid()}.out"
    started = time.monotonic()
    with open(log, "w") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        state.record_process(lab_dir, f"load.{proc.pid}", proc.pid)  # so `down` stops it if we die first
        try:
            try:
                proc.wait(timeout=seconds)
            except subprocess.TimeoutExpired:
                _signal_group(proc, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                _signal_group(proc, signal.SIGKILL)
                proc.wait()
        except BaseException:  # Ctrl-C: the bench must not outlive us
            _signal_group(proc, signal.SIGKILL)
            proc.wait()
            raise
        finally:
            state.forget_process(lab_dir, f"load.{proc.pid}")
    elapsed = time.monotonic() - started
    text = log.read_text(errors="replace")
    log.unlink()
    rows = parse_progress(text)
    if not rows:
        raise LabError(f"the load produced no progress lines (exit {proc.returncode}): {text.strip()[-400:]}")
    last_second, ops = rows[-1]
    return LoadResult(pattern_name, float(min(last_second, elapsed)), ops, client.netns or "the root namespace")
