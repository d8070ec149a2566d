"""Helpers for cluster tests: run the lab CLI, talk to the lab's cluster, find what a lab left behind."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from lab import cephcli, cgroups, claims, net
from lab.cluster import Lab
from lab.config import load_config
from lab.state import LabState
from lab.topology import plan

REPO = Path(__file__).resolve().parents[2]
RELEASE = os.environ.get("PERFWATCH_TEST_RELEASE") or "pacific"  # the session lab's, and side labs' unless told
EBUSY = 16  # the exit code of a command the module refuses for now (a run of that kind in progress)


def run_lab(directory: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lab", "--dir", str(directory), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def wait_until(check: Callable[[], Any], timeout: float, what: str, interval: float = 1.0) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
            if last:
                return last
        except cephcli.CephCommandError as exc:
            last = exc
        time.sleep(interval)
    raise AssertionError(f"not within {timeout} s: {what} (last: {last!r})")


class LabHandle:
    """A started lab, for tests: its Lab object and a `ceph` that returns parsed JSON."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.conf = Lab.open(directory).config.conf_path

    @property
    def lab(self) -> Lab:
        """Read afresh each time: tests stop and start daemons, which changes the recorded PIDs."""
        return Lab.open(self.dir)

    def ceph(self, *args: str, timeout: float = 30, as_json: bool = True) -> Any:
        return cephcli.run(self.conf, *args, timeout=timeout, as_json=as_json)

    def wait_healthy(self, timeout: float, what: str, ignore: tuple[str, ...] = ()) -> None:
        """Every PG active+clean and HEALTH_OK, or only the checks named in `ignore` raised; on timeout the
        failure says which checks were raised."""

        def healthy() -> bool:
            if not self.lab.pgs_clean():
                return False
            health = self.ceph("health")
            return health["status"] == "HEALTH_OK" or set(health["checks"]) <= set(ignore)

        try:
            wait_until(healthy, timeout, what)
        except AssertionError as exc:
            detail = self.ceph("health", "detail", as_json=False)
            pgs = self.ceph("pg", "stat")["pg_summary"]["num_pg_by_state"]
            raise AssertionError(f"{exc}\nceph health detail:\n{detail}\npg states: {pgs}") from None

    def env(self) -> dict[str, str]:
        import os

        return {**os.environ, "CEPH_CONF": str(self.conf)}


# The refusals a test waits out: the module is right to refuse, and the cause passes by itself.
PASSING_REFUSALS = (
    # a run of that kind in progress: the module's own schedule starts light probes (rados every minute)
    "is still running",
    # a heavy round's health guard: a pool just created (the mgr's .mgr, the module's scratch pool, an RGW
    # bucket's) has PGs not yet reported active+clean, even when the test's own look at `pg stat` a moment
    # earlier found every PG clean (`pg stat` counts a new pool's PGs only once the mgr has their stats)
    "PGs are not active+clean",
    # a writing kind's free-space check just after a mgr restart, before the OSDs' figures reach it
    "no free-space figures for",
)


def client_global_id(lab: LabHandle, entity: str) -> str | None:
    """client.<global id> of the mon session of cephx `entity` (client.hammer), as the OSDs name its ops (a
    mon session's own `name` is client.? on Pacific: the global id is a field of its own)."""
    sessions: Any = lab.ceph("tell", "mon.a", "sessions")
    for session in sessions if isinstance(sessions, list) else []:
        if session.get("entity_name") == entity and isinstance(session.get("global_id"), int):
            return f"client.{session['global_id']}"
    return None


def start_bench(lab: LabHandle, *args: str, timeout: float = 120) -> str:
    """Start a benchmark run and return its id. While `bench run` is refused with EBUSY for a reason in
    PASSING_REFUSALS, wait and try again (up to `timeout` s); any other refusal is the test's to see."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return lab.ceph("perfwatch", "bench", "run", *args)["run_id"]
        except cephcli.CephCommandError as exc:
            passing = exc.returncode == EBUSY and any(reason in exc.stderr for reason in PASSING_REFUSALS)
            if not passing or time.monotonic() > deadline:
                raise
            print(f"bench run {' '.join(args)} refused for now, trying again: {exc.stderr.strip()}")
        time.sleep(1)


def finished(lab: LabHandle, run_id: str, timeout: float = 120) -> dict:
    """The record of run `run_id` once `bench status` lists it among the recent (ended) runs. If it does
    not end in time, the failure says where it was: its status, and what the active mgr logged of it."""
    seen: dict[str, Any] = {}

    def done() -> dict | None:
        status = lab.ceph("perfwatch", "bench", "status")
        seen.update(status)
        return next((r for r in status["recent"] if r["run_id"] == run_id), None)

    try:
        return wait_until(done, timeout, f"{run_id} to finish", 0.5)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\nlast bench status: {json.dumps(seen)}\n{mgr_log_of(lab, run_id)}") from None


def mgr_log_of(lab: LabHandle, needle: str, tail: int = 40) -> str:
    """The active mgr's log lines naming `needle`, and its last `tail` lines (a failure's evidence: the lab
    and its logs are gone once the session ends)."""
    try:
        name = lab.ceph("mgr", "stat")["active_name"]
        with contextlib.suppress(cephcli.CephCommandError):  # Tentacle's mgr wrote its log only when it stopped
            lab.ceph("tell", f"mgr.{name}", "log", "flush", as_json=False)
        lines = (lab.dir / "log" / f"ceph-mgr.{name}.log").read_text(errors="replace").splitlines()
    except (OSError, cephcli.CephCommandError) as exc:
        return f"(no mgr log: {exc})"
    named = [line for line in lines if needle in line][-tail:]
    return "\n".join([f"mgr.{name} log, lines naming {needle}:", *named, f"its last {tail} lines:", *lines[-tail:]])


def free_ports(count: int) -> int:
    """The first of `count` consecutive TCP ports free on 127.0.0.1, below the ephemeral range (a port
    in it may be taken by an outgoing connection between the check and the bind)."""
    for base in range(21000, 32000, 50):
        try:
            for port in range(base, base + count):
                with socket.socket() as sock:
                    sock.bind(("127.0.0.1", port))
        except OSError:
            continue
        return base
    raise AssertionError("no block of free ports in 21000-32000")


def port_flags(base: int) -> list[str]:
    """The port options of a lab on the ten ports from `base` (free_ports(10): below the ephemeral range,
    where an outgoing connection could hold a port just as the lab wants it)."""
    ports = {"--mon-port": base, "--rgw-port": base + 1, "--exporter-port": base + 2}
    ports |= {"--node-exporter-port": base + 3, "--module-port": base + 4}  # module: base+4, base+5
    ports |= {"--prometheus-port": base + 6, "--alertmanager-port": base + 7}
    ports |= {"--ceph-metrics-port": base + 8}  # Ceph's prometheus module: base+8, base+9
    return [str(x) for pair in ports.items() for x in pair]


@contextlib.contextmanager
def side_lab(name: str, *args: str, timeout: float = 300) -> Iterator[tuple[Path, str]]:
    """A small lab (1 host, 1 OSD) beside the session lab, on ports of its own, in a folder of its own, of
    the session's release unless `args` name one (--release, or --rootfs: the release it holds): yields
    that folder and what `up` printed; `down` after (asserted only when the test passed, so a failure is
    reported as itself). So a test marked every_release runs its side lab on each release in turn."""
    directory = Path(tempfile.mkdtemp(prefix=f"{name}-"))
    flags = port_flags(free_ports(10))
    if not {"--release", "--rootfs"} & set(args):
        flags += ["--release", RELEASE]
    started = time.monotonic()
    passed = False
    try:
        up = run_lab(directory, "up", "--hosts", "1", "--osds", "1", "--name", name, *flags, *args, timeout=timeout)
        assert up.returncode == 0, f"the {name} lab did not start:\n{up.stdout}\n{up.stderr}"
        print(f"\n{name} lab up in {time.monotonic() - started:.0f} s: {up.stdout.strip()}")
        yield directory, up.stdout + up.stderr
        passed = True
    finally:
        down = run_lab(directory, "down")
        if not (directory / "lab.json").exists():
            shutil.rmtree(directory, ignore_errors=True)  # up refused before it wrote anything
        print(f"{name} lab: {time.monotonic() - started:.0f} s from up to down")
        if passed:
            assert down.returncode == 0, f"{name} lab down: {down.stdout}{down.stderr}"


def s3_user(lab: LabHandle) -> dict:
    """Access and secret key of a test RGW user (created once per lab)."""
    user = subprocess.run(
        [cephcli.tool(lab.conf, "radosgw-admin"), "-c", str(lab.conf),
         "user", "create", "--uid", "pwtest", "--display-name", "perfwatch test"],
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    if user.returncode != 0:  # already there from an earlier test in this session
        user = subprocess.run(
            [cephcli.tool(lab.conf, "radosgw-admin"), "-c", str(lab.conf), "user", "info", "--uid", "pwtest"],
            capture_output=True, text=True, check=True, timeout=60,
        )  # fmt: skip
    return json.loads(user.stdout)["keys"][0]


def s3_client(lab: LabHandle) -> Any:
    """A boto3 S3 client for the test user, against the lab's RGW."""
    import boto3

    key = s3_user(lab)
    return boto3.client(
        "s3", endpoint_url=lab.lab.rgw_url(), aws_access_key_id=key["access_key"],
        aws_secret_access_key=key["secret_key"], region_name="us-east-1",
    )  # fmt: skip


def snapshot(directory: Path) -> tuple[LabState, list[str], list[str], str]:
    """What a lab in `directory` created: its state, namespace and link names, and the lab's name."""
    config = load_config(directory)
    assert config is not None, f"no lab in {directory}"
    topo = plan(config)
    everyone = net.namespaced_hosts(topo)
    netns = [h.netns for h in everyone if h.netns]
    links = [n for n in [topo.bridge, *(h.veth for h in everyone)] if n]
    return LabState.load(directory), netns, links, config.name


def leftovers(directory: Path, state: LabState, netns: list[str], links: list[str], name: str) -> list[str]:
    """Everything of a lab that still exists after `down`: processes, namespaces, links, loops, mounts, files."""
    from lab import procs

    found = [f"process {name} pid {ref.pid}" for name, ref in state.daemons.items() if procs.is_alive(ref)]
    if state.mount_ns is not None and procs.is_alive(state.mount_ns):
        found.append(f"the mount namespace holder pid {state.mount_ns.pid}")
    for proc in Path("/proc").glob("[0-9]*"):  # anything else started for it: a wrapper, nsenter, a load
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        ours = (f"{directory}/ceph.conf", f"{directory}/bin/")  # a Ceph daemon, tool or wrapper of this lab
        if any(mark in cmdline for mark in ours) and int(proc.name) != os.getpid():
            found.append(f"process pid {proc.name}: {cmdline[:200]}")
    found += [f"netns {ns}" for ns in netns if net.netns_exists(ns)]
    found += [f"link {link}" for link in links if net.link_exists(link)]
    for loop in Path("/sys/block").glob("loop*"):
        backing = loop / "loop" / "backing_file"
        if backing.exists() and backing.read_text().strip().startswith(str(directory)):
            found.append(f"loop device /dev/{loop.name} -> {backing.read_text().strip()}")
    mounts = Path("/proc/mounts").read_text().splitlines()
    found += [f"mount {m}" for m in mounts if str(directory) in m or any(f"/run/netns/{ns} " in m for ns in netns)]
    found += [f"cgroup {group}" for group in cgroups.existing(f"{name}-osd.")]
    if claims.holder(name) == directory.resolve():
        found.append(f"the claim on the lab name {name!r} ({claims.claims_dir() / name})")
    if directory.exists():
        found.append(f"directory {directory}")
    return found
