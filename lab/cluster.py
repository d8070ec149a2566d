"""Bringing the lab cluster up and down: the I/O side of the lab."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from . import cephcli, cephconf, cgroups, keyring, knobs, net, prereq, procs
from .config import CONFIG_FILE, REPO_ROOT, LabConfig, LabError, load_config
from .state import LabState
from .topology import Topology, plan

MODULE_SOURCE = REPO_ROOT / "mgr_module" / "perfwatch"
MODULE_NAME = "perfwatch"
NODE_EXPORTER = "prometheus-node-exporter"  # Debian's name for node_exporter
# node_exporter's default also hides loop devices; the lab's OSDs live on them. Partitions stay hidden.
DISK_EXCLUDE = r"^(ram|zram|fd|(h|s|v|xv)d[a-z]|nvme\d+n\d+p)\d+$"


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def wait_for(check: Callable[[], Any], timeout: float, what: str, interval: float = 1.0) -> Any:
    """Poll check() until it returns something truthy; LabError naming `what` after timeout seconds."""
    deadline = time.monotonic() + timeout
    last_error = ""
    while True:
        try:
            result = check()
            if result:
                return result
        except (cephcli.CephCommandError, OSError) as exc:
            last_error = f" (last error: {exc})"
        if time.monotonic() >= deadline:
            raise LabError(f"timed out after {timeout:.0f} s waiting for {what}{last_error}")
        time.sleep(interval)


class Lab:
    def __init__(self, config: LabConfig) -> None:
        self.config = config
        self.topo: Topology = plan(config)
        self.dir = config.directory
        self.state = LabState.load(self.dir) if (self.dir / CONFIG_FILE).exists() else LabState()

    # ----- small helpers -------------------------------------------------------------------------

    @classmethod
    def open(cls, directory: Path) -> Lab:
        config = load_config(directory)
        if config is None:
            raise LabError(f"no lab in {directory} (start one with `python3 -m lab up`)")
        return cls(config)

    def ceph(self, *args: str, timeout: float = 30.0, as_json: bool = True) -> Any:
        return cephcli.run(self.config.conf_path, *args, timeout=timeout, as_json=as_json)

    def ceph_tool(self, tool: str, *args: str, timeout: float = 60.0, as_json: bool = True) -> Any:
        return cephcli.run_tool(tool, self.config.conf_path, *args, timeout=timeout, as_json=as_json)

    def _save(self) -> None:
        self.state.save(self.dir)

    def log_path(self, daemon: str) -> Path:
        return self.dir / "log" / f"ceph-{daemon}.log"

    def daemon_names(self) -> list[str]:
        return (
            [f"mon.{cephconf.MON_ID}"]
            + [f"mgr.{m}" for m in self.config.mgrs]
            + [f"osd.{o.id}" for o in self.topo.osds]
            + [cephconf.rgw_name(self.config)]
            + self.exporter_names()
        )

    def exporter_names(self) -> list[str]:
        """Per simulated host a node_exporter and a perfwatch host exporter; with namespaced hosts, one
        more perfwatch exporter for the core (mon, mgrs, RGW), which no simulated host holds."""
        names = []
        for host in self.topo.hosts:
            names += [f"node-exporter.{host.crush_name}", f"exporter.{host.crush_name}"]
        if self.topo.namespaced:
            names.append("exporter.core")
        return names

    def exporter_urls(self) -> dict[str, str]:
        """Metrics URL of each exporter, by its daemon name."""
        urls = {}
        for name in self.exporter_names():
            kind, where = name.split(".", 1)
            address = self.topo.core_address if where == "core" else self.topo.host_named(where).address
            port = self.config.node_exporter_port if kind == "node-exporter" else self.config.exporter_port
            urls[name] = f"http://{address}:{port}/metrics"
        return urls

    def _exporter_argv(self, name: str) -> tuple[list[str], str | None, dict[str, str] | None]:
        kind, where = name.split(".", 1)
        host = None if where == "core" else self.topo.host_named(where)
        address = self.topo.core_address if host is None else host.address
        netns = None if host is None else host.netns
        if kind == "node-exporter":
            argv = [
                NODE_EXPORTER,
                f"--web.listen-address={address}:{self.config.node_exporter_port}",
                f"--collector.diskstats.device-exclude={DISK_EXCLUDE}",
                "--collector.qdisc",
            ]
            return argv, netns, None
        argv = [
            sys.executable,
            "-m",
            "perfwatch_host_exporter",
            "--listen-address",
            address,
            "--port",
            str(self.config.exporter_port),
            "--hostname",
            "core" if host is None else host.crush_name,
            "--same-netns",
            "--asok-dir",
            str(self.dir / "run"),
        ]
        if self.state.fsid:  # set by `up` before any daemon starts, and kept in state.json after
            # Only this lab's daemons: another lab (or a cluster) on this machine has its own exporters.
            argv += ["--cluster-fsid", self.state.fsid]
        if netns is not None:  # `ip netns exec` hides /sys/fs/cgroup: mount the hierarchies again there
            argv = ["sh", "-c", cgroups.remount_script() + ' && exec "$@"', "sh", *argv]
        paths = [str(REPO_ROOT / "exporters"), str(REPO_ROOT / "mgr_module")]
        return argv, netns, {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}

    def daemon_argv(self, name: str) -> tuple[list[str], str | None]:
        if name not in self.daemon_names():
            raise LabError(f"no daemon {name!r} in this lab; daemons: {', '.join(self.daemon_names())}")
        conf = str(self.config.conf_path)
        kind, ident = name.split(".", 1)
        if kind in ("exporter", "node-exporter"):
            argv, netns, _env = self._exporter_argv(name)
            return argv, netns
        if kind == "mon":
            return ["ceph-mon", "-f", "-c", conf, "-i", ident], None
        if kind == "mgr":
            return ["ceph-mgr", "-f", "-c", conf, "-i", ident], None
        if kind == "osd":
            return ["ceph-osd", "-f", "-c", conf, "-i", ident], self.topo.host_of(int(ident)).netns
        return ["radosgw", "-f", "-c", conf, "-n", name], None  # the lab's one RGW

    def check_osd(self, osd_id: int) -> None:
        if osd_id not in [o.id for o in self.topo.osds]:
            raise LabError(f"no osd.{osd_id} in this lab (OSD ids are 0..{len(self.topo.osds) - 1})")

    def alive(self) -> dict[str, bool]:
        return {name: procs.is_alive(ref) for name, ref in self.state.daemons.items()}

    def is_running(self) -> bool:
        return any(self.alive().values())

    # ----- up ------------------------------------------------------------------------------------

    def up(self) -> float:
        """Start the lab; returns the seconds it took to reach HEALTH_OK. Cleans up after a failure."""
        self.config.validate()
        existing = load_config(self.dir)
        if existing is not None:
            running = Lab(existing)
            alive = running.alive()
            if any(alive.values()):
                dead = [n for n, ok in alive.items() if not ok]
                note = f"; {len(dead)} of its daemons are not running: {', '.join(dead)}" if dead else ""
                raise LabAlreadyRunning(
                    f"a lab is already running in {self.dir} ({sum(alive.values())} daemons up{note}); "
                    "nothing changed. Use `status`, or `down` first"
                )
            raise LabError(f"{self.dir} holds a stopped lab: run `python3 -m lab down` first to remove it")
        prereq.check_all(self.config)
        net.check_free(self.topo)
        started = time.monotonic()
        self.config.save()
        self.state = LabState(fsid=str(uuid.uuid4()))
        self._save()
        try:
            self._create()
        except BaseException as exc:
            detail = str(exc) if isinstance(exc, LabError) else f"{type(exc).__name__}: {exc}"
            tail = self._log_tails()
            _say("lab: start-up failed, removing what was created")
            self.down()
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise LabError(f"{detail}{tail}") from exc
        return time.monotonic() - started

    def _log_tails(self) -> str:
        chunks = []
        for name in self.state.daemons:
            ref = self.state.daemons[name]
            path = self.log_path(name)
            if not procs.is_alive(ref) and path.exists():
                lines = path.read_text(errors="replace").splitlines()[-15:]
                chunks.append(f"\n--- last lines of {path.name} ({name} is not running) ---\n" + "\n".join(lines))
        return "".join(chunks)

    def _create(self) -> None:
        t0 = time.monotonic()
        step = lambda msg: _say(f"lab: [{time.monotonic() - t0:5.1f}s] {msg}")  # noqa: E731
        for sub in ("run", "log", "crash", "mon", "mgr", "osd", "rgw", "devices"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        net.create(self.topo, self.state, self._save)
        if self.topo.namespaced:
            step(f"network: bridge {self.topo.bridge} {self.topo.core_address}, {len(self.topo.hosts)} namespaces")
        self._write_config_and_keys()
        self._link_modules()
        step("mon: mkfs")
        self._run(
            [
                "monmaptool",
                "--create",
                "--clobber",
                "--enable-all-features",
                "--fsid",
                self.state.fsid,
                "--addv",
                cephconf.MON_ID,
                cephconf.mon_addr(self.config, self.topo),
                str(self.dir / "monmap"),
            ]
        )
        self._run(
            [
                "ceph-mon",
                "-c",
                str(self.config.conf_path),
                "--mkfs",
                "-i",
                cephconf.MON_ID,
                "--monmap",
                str(self.dir / "monmap"),
                "--keyring",
                str(self.dir / "mon-initial.keyring"),
            ]
        )
        self._start(f"mon.{cephconf.MON_ID}")
        step("osd: preparing devices and running mkfs")
        osd_uuids = self._mkfs_osds()
        wait_for(lambda: self.ceph("mon", "stat", timeout=5), 60, "the mon to answer", 0.5)
        step("mon: up; registering OSDs")
        for osd in self.topo.osds:
            self.ceph("osd", "new", osd_uuids[osd.id], str(osd.id), as_json=False)
        for mgr in self.config.mgrs:
            self._start(f"mgr.{mgr}")
            if mgr == self.config.mgrs[0]:
                wait_for(self._active_mgr, 60, f"mgr.{mgr} to become active", 0.5)
        for osd in self.topo.osds:
            self._start(f"osd.{osd.id}")
        self._start(cephconf.rgw_name(self.config))
        for name in self.exporter_names():
            self._start(name)
        step("daemons and exporters started; enabling the perfwatch module")
        self._enable_module()
        step("waiting for all OSDs up and in, RGW answering, every PG active+clean, HEALTH_OK")
        wait_for(self._osds_up_in, 120, f"{self.config.osds} OSDs up and in")
        wait_for(self.rgw_answers, 90, f"RGW on {self.rgw_url()}")
        wait_for(self.pgs_clean, 120, "every PG active+clean")
        wait_for(self._health_ok, 120, "HEALTH_OK")
        for name, url in self.exporter_urls().items():
            wait_for(functools.partial(_answers, url), 30, f"{name} on {url}", 0.5)
        step("HEALTH_OK; exporters answering")

    def _run(self, argv: list[str], netns: str | None = None, timeout: float = 120) -> None:
        if netns:
            argv = ["ip", "netns", "exec", netns, *argv]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0:
            raise LabError(f"`{' '.join(argv)}` failed: {(proc.stderr or proc.stdout).strip()[-800:]}")

    def _write_config_and_keys(self) -> None:
        self.config.conf_path.write_text(cephconf.render(self.config, self.topo, self.state.fsid))
        names = [
            "mon.",
            "client.admin",
            *(f"mgr.{m}" for m in self.config.mgrs),
            *(f"osd.{o.id}" for o in self.topo.osds),
            cephconf.rgw_name(self.config),
        ]
        entities = {n: keyring.Entity(n, keyring.make_key(), keyring.caps_for(n)) for n in names}
        # The mon imports every entity of its initial keyring at mkfs: one step registers all daemons.
        (self.dir / "mon-initial.keyring").write_text(keyring.render(list(entities.values())))
        (self.dir / "keyring").write_text(keyring.render([entities["client.admin"]]))
        for name, entity in entities.items():
            kind, ident = name.split(".", 1)
            if kind in ("mgr", "osd", "mon"):
                where = self.dir / kind / f"ceph-{ident or cephconf.MON_ID}"
            elif name.startswith("client.rgw."):
                where = self.dir / "rgw"
            else:
                continue
            where.mkdir(parents=True, exist_ok=True)
            if kind != "mon":  # mon mkfs writes its own keyring
                (where / "keyring").write_text(keyring.render([entity]))
        for path in self.dir.rglob("keyring"):
            path.chmod(0o600)

    def _link_modules(self) -> None:
        """A module folder that links every module Ceph ships, plus ours from the checkout."""
        target = self.dir / "mgr-modules"
        target.mkdir(exist_ok=True)
        for entry in prereq.MGR_MODULES_DIR.iterdir():
            if entry.name != MODULE_NAME:
                (target / entry.name).symlink_to(entry)
        (target / MODULE_NAME).symlink_to(MODULE_SOURCE)

    def _mkfs_osds(self) -> dict[int, str]:
        uuids = {o.id: str(uuid.uuid4()) for o in self.topo.osds}
        for osd in self.topo.osds:
            data = self.dir / "osd" / f"ceph-{osd.id}"
            data.mkdir(parents=True, exist_ok=True)
            if self.config.osd_backing == "loop":
                image = self.dir / "devices" / f"osd.{osd.id}.img"
                with open(image, "wb") as fh:
                    fh.truncate(self.config.osd_size_bytes)
                dev = subprocess.run(
                    ["losetup", "--find", "--show", "--direct-io=on", str(image)],
                    capture_output=True,
                    text=True,
                    timeout=30,
                )
                if dev.returncode != 0:
                    raise LabError(f"losetup failed: {dev.stderr.strip()} (try --backing file)")
                self.state.loops[str(osd.id)] = dev.stdout.strip()
                self._save()
                (data / "block").symlink_to(dev.stdout.strip())

        def mkfs(osd_id: int) -> None:
            self._run(
                [
                    "ceph-osd",
                    "-c",
                    str(self.config.conf_path),
                    "-i",
                    str(osd_id),
                    "--mkfs",
                    "--osd-uuid",
                    uuids[osd_id],
                    "--no-mon-config",
                ]
            )

        with ThreadPoolExecutor(max_workers=4) as pool:
            list(pool.map(mkfs, uuids))
        return uuids

    def _start(self, name: str) -> None:
        argv, netns = self.daemon_argv(name)
        env = self._exporter_argv(name)[2] if name.startswith("exporter.") else None
        ref = procs.spawn(argv, self.dir / "log" / f"{name}.stdout", netns=netns, env=env)
        self.state.daemons[name] = ref
        self._save()
        knobs.reapply_to(self, name, ref.pid)

    def save_state(self) -> None:
        self._save()

    def record_process(self, name: str, pid: int) -> None:
        """A helper process (a load) recorded like a daemon, so `down` stops it if its owner cannot."""
        stat = procs.read_stat(pid)
        if stat is not None:
            self.state = LabState.load(self.dir)  # another command may have changed it meanwhile
            self.state.daemons[name] = procs.ProcRef(pid, stat[1])
            self._save()

    def forget_process(self, name: str) -> None:
        self.state = LabState.load(self.dir)
        if self.state.daemons.pop(name, None) is not None:
            self._save()

    def _active_mgr(self) -> str | None:
        stat = self.ceph("mgr", "stat", timeout=5)
        return stat.get("active_name") if stat and stat.get("available") else None

    def _enable_module(self) -> None:
        def listed() -> bool:
            ls = self.ceph("mgr", "module", "ls", timeout=10)
            if MODULE_NAME in ls.get("enabled_modules", []):
                return True
            for mod in ls.get("disabled_modules", []):
                if mod.get("name") == MODULE_NAME:
                    if not mod.get("can_run", True):
                        raise LabError(f"the mgr cannot run {MODULE_NAME}: {mod.get('error_string')}")
                    return True
            return False

        wait_for(listed, 60, f"the active mgr to list the {MODULE_NAME} module", 0.5)
        # Both mgrs share this machine: each gets its own endpoint port (active and standby both listen).
        for mgr, port in self.module_ports().items():
            self.ceph("config", "set", "mgr", f"mgr/{MODULE_NAME}/{mgr}/server_port", str(port), as_json=False)
        self.ceph("mgr", "module", "enable", MODULE_NAME, as_json=False)

    def module_ports(self) -> dict[str, int]:
        """The perfwatch endpoint port of each mgr (see LabConfig.module_ports)."""
        return dict(zip(self.config.mgrs, self.config.module_ports(), strict=True))

    def module_urls(self) -> dict[str, str]:
        return {mgr: f"http://{self.topo.core_address}:{port}/" for mgr, port in self.module_ports().items()}

    def _osds_up_in(self) -> bool:
        stat = self.ceph("osd", "stat", timeout=10)
        want = self.config.osds
        return stat.get("num_up_osds") == want and stat.get("num_in_osds") == want

    def pgs_clean(self) -> bool:
        summary = self.ceph("pg", "stat", timeout=10)["pg_summary"]
        clean = sum(s["num"] for s in summary.get("num_pg_by_state", []) if s["name"] == "active+clean")
        return summary.get("num_pgs", 0) > 0 and clean == summary["num_pgs"]

    def _health_ok(self) -> bool:
        return self.ceph("health", timeout=10).get("status") == "HEALTH_OK"

    def rgw_url(self) -> str:
        return f"http://{self.topo.core_address}:{self.config.rgw_port}/"

    def rgw_answers(self) -> bool:
        try:
            with urllib.request.urlopen(self.rgw_url(), timeout=3) as resp:
                return resp.status == 200 and b"ListAllMyBucketsResult" in resp.read()
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False

    # ----- single daemons ------------------------------------------------------------------------

    def stop_daemon(self, name: str, kill: bool = False) -> bool:
        """Stop one daemon we started (SIGKILL with kill=True); False if it was not running."""
        self.daemon_argv(name)  # validates the name
        ref = self.state.daemons.get(name)
        if ref is None or not procs.is_alive(ref):
            return False
        if kill:
            procs.signal_proc(ref, 9)
            wait_for(lambda: not procs.is_alive(ref), 10, f"{name} to exit", 0.1)
        else:
            procs.stop(ref)
        return True

    def start_daemon(self, name: str) -> bool:
        """Start one daemon of the lab again; False if it was already running."""
        self.daemon_argv(name)
        ref = self.state.daemons.get(name)
        if ref is not None and procs.is_alive(ref):
            return False
        self._start(name)
        return True

    # ----- down ----------------------------------------------------------------------------------

    def down(self) -> list[str]:
        """Stop what we started, by PID; remove namespaces, links, loop devices and the lab directory."""
        problems: list[str] = []
        order = sorted(self.state.daemons, key=_stop_rank)
        for name in order:
            procs.signal_proc(self.state.daemons[name], 15)
        for name in order:
            procs.stop(self.state.daemons[name], grace=15)
            if procs.is_alive(self.state.daemons[name]):
                problems.append(f"{name} (pid {self.state.daemons[name].pid}) would not stop")
        problems += knobs.clear(self)[1]
        recorded = {knob.get("group") for knob in self.state.knobs.values()}  # already reported above
        for group in cgroups.existing(f"{self.config.name}-osd."):  # a knob whose record was lost
            if group.name not in recorded:
                problems += cgroups.remove(_controller_of(group), group.name)
        for osd_id, dev in self.state.loops.items():
            problems += _detach_loop(dev, self.dir / "devices" / f"osd.{osd_id}.img")
        problems += net.destroy(self.state)
        if not problems and (self.dir / CONFIG_FILE).exists():
            shutil.rmtree(self.dir)
        elif problems:
            self._save()
        return problems

    # ----- status --------------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        alive = self.alive()
        out: dict[str, Any] = {
            "directory": str(self.dir),
            "conf": str(self.config.conf_path),
            "hosts": [
                {
                    "name": h.crush_name,
                    "netns": h.netns,
                    "address": h.address,
                    "osds": [o.id for o in self.topo.osds if o.host == h],
                }
                for h in self.topo.hosts
            ],
            "daemons": {
                name: {"pid": self.state.daemons[name].pid, "running": alive[name]} for name in self.state.daemons
            },
            "loop_devices": dict(self.state.loops),
            "exporters": self.exporter_urls(),
            "client": {"netns": self.topo.client.netns, "address": self.topo.client.address},
            "knobs": {key: {**knob, "setting": knobs.describe(knob)} for key, knob in self.state.knobs.items()},
            "rgw": self.rgw_url(),
            "module_endpoints": self.module_urls(),
            "health": None,
        }
        mon = self.state.daemons.get(f"mon.{cephconf.MON_ID}")
        if mon is not None and procs.is_alive(mon):
            try:
                out["health"] = self.ceph("health", timeout=5).get("status")
            except cephcli.CephCommandError as exc:
                out["health"] = f"unknown ({exc})"
        return out


class LabAlreadyRunning(LabError):
    pass


def _stop_rank(name: str) -> int:
    kind = name.split(".", 1)[0]
    return {"client": 0, "osd": 1, "mgr": 2, "mon": 3}.get(kind, 0)


def _controller_of(group: Path) -> str:
    return "blkio" if group.parent == cgroups.find_mount("blkio") else "cpu"


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=3) as resp:
            return resp.status == 200
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def _detach_loop(dev: str, image: Path) -> list[str]:
    """Detach a loop device, but only while it is still backed by our image file."""
    backing = Path("/sys/block") / Path(dev).name / "loop" / "backing_file"
    if not backing.exists():
        return []
    if Path(backing.read_text().strip()) != image:
        return []  # the kernel reused the number for someone else's file: not ours to touch
    # A device still held open (an OSD's last I/O draining) is only marked for autoclear by
    # `losetup -d`: wait until the kernel really lets it go, and retry once.
    for _attempt in range(2):
        proc = subprocess.run(["losetup", "-d", dev], capture_output=True, text=True, timeout=30)
        deadline = time.monotonic() + 15
        while backing.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        if not backing.exists():
            return []
    return [f"loop device {dev} is still attached to {image}: {proc.stderr.strip() or 'busy'}"]
