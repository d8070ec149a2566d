"""The lab's lifecycle: `up` (make a cluster, start its daemons, wait until it is ready), `down` (stop what
was started and remove what was made), stopping and starting one daemon, and the status report.

What `up` starts comes from the daemon catalogue (daemons.py, with monitoring.py for Prometheus and
Alertmanager), the files it makes from bootstrap.py, the mgr modules it enables from mgrmodules.py, its
waiting from probes.py. Each process, device, namespace and knob is recorded in the lab's state as soon
as it exists, so `down` undoes exactly what was made. `Lab` is the facade the CLI, the tests and the
benchmarks use.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from . import (
    bootstrap,
    cephcli,
    cephconf,
    cgroups,
    claims,
    knobs,
    mgrmodules,
    monitoring,
    mountns,
    net,
    osd_devices,
    prereq,
    probes,
    procs,
    releases,
    rootfs,
    security,
)
from .config import CONFIG_FILE, LabConfig, LabError, load_config
from .daemons import Catalogue
from .probes import wait_for
from .state import LabState
from .topology import Topology, plan


class LabAlreadyRunning(LabError):
    pass


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class Lab:
    """The lab in one directory: its config, topology and recorded state, and what can be done with it."""

    def __init__(self, config: LabConfig) -> None:
        self.config = config
        self.topo: Topology = plan(config)
        self.dir = config.directory
        self.state = LabState.load(self.dir) if (self.dir / CONFIG_FILE).exists() else LabState()

    @classmethod
    def open(cls, directory: Path) -> Lab:
        config = load_config(directory)
        if config is None:
            raise LabError(f"no lab in {directory} (start one with `python3 -m lab up`)")
        return cls(config)

    @property
    def catalogue(self) -> Catalogue:
        """The lab's daemons, as the catalogue derives them (with the fsid once `up` has made one)."""
        example = monitoring.ALERTMANAGER_EXAMPLE
        ceph_bin = mountns.bin_dir(self.dir) if self.state.mount_ns is not None else None
        return Catalogue(self.config, self.topo, self.state.fsid, example if example.exists() else None, ceph_bin)

    def ceph(self, *args: str, timeout: float = 30.0, as_json: bool = True) -> Any:
        return cephcli.run(self.config.conf_path, *args, timeout=timeout, as_json=as_json)

    def save_state(self) -> None:
        self.state.save(self.dir)

    # ----- what the catalogue and the probes say, for the CLI and the tests ---------------------------

    def check_osd(self, osd_id: int) -> None:
        self.catalogue.check_osd(osd_id)

    def log_path(self, daemon: str) -> Path:
        return self.catalogue.log_path(daemon)

    def exporter_urls(self) -> dict[str, str]:
        """Metrics URL of each exporter, by its daemon name."""
        return self.catalogue.exporter_urls()

    def module_urls(self) -> dict[str, str]:
        return self.catalogue.module_urls()

    def rgw_url(self) -> str:
        return self.catalogue.rgw_url()

    def monitoring_urls(self) -> dict[str, str]:
        """The URLs of the lab's Prometheus and Alertmanager, by daemon name."""
        return self.catalogue.monitoring_urls()

    def pgs_clean(self) -> bool:
        return probes.pgs_clean(self.ceph)

    def alive(self) -> dict[str, bool]:
        return {name: procs.is_alive(ref) for name, ref in self.state.daemons.items()}

    # ----- up ------------------------------------------------------------------------------------------

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
        self._reclaim_name()
        prereq.check_all(self.config)
        net.check_free(self.topo)
        release = releases.resolve(self.config.release)
        cache = rootfs.cache_dir()
        if self.dir == cache or cache in self.dir.parents:
            raise LabError(f"{self.dir} is inside the rootfs cache {cache}: put the lab directory elsewhere")
        if self.config.rootfs:  # a tree given (an image's): its release is what it holds
            root = Path(self.config.rootfs).resolve()
            version = rootfs.tree_ceph_version(root)
            release.check_version(version, f"--rootfs {root}")
            if self.config.release_version:
                release.check_exact(self.config.release_version, version, str(root))
        elif release.from_rootfs:  # built on first use (once per suite and version), before the clock starts
            root, version = rootfs.ensure(release, lambda msg: _say(f"lab: {msg}"))
            if self.config.release_version:
                release.check_exact(self.config.release_version, version, str(root))
        else:
            if self.config.install:
                raise LabError(
                    f"--install: {release.name} runs from this machine's packages, and the lab never installs "
                    "packages on this machine: pick a release that runs from a rootfs (reef, tentacle) or --rootfs"
                )
            if self.config.module_from == "rootfs":
                self._check_installed_module(Path("/"))  # before anything starts
            root, version = Path("/"), rootfs.installed_ceph_version(Path("/")) or "unknown"
            release.check_version(version, "this machine")
            if self.config.release_version:
                release.check_exact(self.config.release_version, version, "this machine")
        started = time.monotonic()
        self.config.save()
        claims.claim(self.config.name, self.dir)
        self.state = LabState(fsid=str(uuid.uuid4()), ceph_version=version)
        if root != Path("/"):
            self.state.rootfs = str(root)
        if self.config.own_layer:
            mountns.check_layer(self.layer_dir, root)
        self.save_state()
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

    def _reclaim_name(self) -> None:
        """This lab's name held by a lab in another directory (claims.py): refused while any process of that
        lab runs; when none does (it ended without `down`, e.g. a restart killed it), `down` it first."""
        name = self.config.name
        owner = claims.holder(name)
        if owner is None or owner == self.dir.resolve():
            return
        config = load_config(owner)
        if config is None or config.name != name:  # its directory is gone or now holds another lab
            claims.release(name, owner)
            return
        other = Lab(config)
        running = [daemon for daemon, ok in other.alive().items() if ok]
        if other.state.mount_ns is not None and procs.is_alive(other.state.mount_ns):
            running.append(f"its mount namespace holder (pid {other.state.mount_ns.pid})")
        refusal = claims.refusal(name, owner, running, [*other.state.links, *other.state.netns])
        if refusal:
            raise LabError(refusal)
        _say(
            f"lab: the lab in {owner} (--name {name}) ended without `down` and none of its processes runs: "
            "running `down` on it to remove what it left"
        )
        problems = other.down()
        if problems:
            raise LabError(f"`down` of the lab in {owner} left problems: {'; '.join(problems)}")

    def _log_tails(self) -> str:
        chunks = []
        for name in self.state.daemons:
            ref = self.state.daemons[name]
            path = self.log_path(name)
            path = path if path.exists() else self.catalogue.output_path(name)  # not a Ceph daemon: its output
            if not procs.is_alive(ref) and path.exists():
                lines = path.read_text(errors="replace").splitlines()[-15:]
                chunks.append(f"\n--- last lines of {path.name} ({name} is not running) ---\n" + "\n".join(lines))
        return "".join(chunks)

    def _create(self) -> None:
        t0 = time.monotonic()
        step = lambda msg: _say(f"lab: [{time.monotonic() - t0:5.1f}s] {msg}")  # noqa: E731
        config, topo, fsid = self.config, self.topo, self.state.fsid
        bootstrap.make_directories(config)
        root = Path(self.state.rootfs or "/")
        if self.state.rootfs:
            holder = self._enter_rootfs(root)
            step(f"Ceph {self.state.ceph_version} from {root}, in mount namespace pid {holder.pid}")
        net.create(topo, self.state, self.save_state)
        if topo.namespaced:
            step(f"network: bridge {topo.bridge} {topo.core_address}, {len(topo.hosts)} namespaces")
        if topo.cluster_cidr:
            step(f"cluster network {topo.cluster_cidr} on {topo.cluster_bridge}; other traffic to {topo.other_sink}")
        bootstrap.write_config_and_keys(config, topo, fsid, bootstrap.key_format(config))
        if config.secure:
            security.make(config.directory, self.catalogue.tls_addresses())
            step("TLS: the lab's CA, a certificate for its endpoints, Prometheus's client certificate and password")
        if config.module_from == "checkout":
            for note in bootstrap.link_modules(config, root):
                step(f"mgr modules: {note}")
        else:
            step(f"mgr modules: perfwatch from {self._check_installed_module(root)}")
        step("mon: mkfs")
        bootstrap.mkfs_mon(config, topo, fsid)
        self._start(f"mon.{cephconf.MON_ID}")
        step("osd: preparing devices and running mkfs")
        osd_uuids = bootstrap.mkfs_osds(config, topo, self.state, self.save_state)
        wait_for(functools.partial(probes.mon_answers, self.ceph), 60, "the mon to answer", 0.5)
        step("mon: up; registering OSDs")
        for osd in topo.osds:
            self.ceph("osd", "new", osd_uuids[osd.id], str(osd.id), as_json=False)
        # The OSDs and RGW boot while the mgr modules are configured and the first mgr loads them: none
        # needs a mgr to start, and RGW waits on each of its pools' PGs in turn, which the OSDs' boot holds back
        for osd in topo.osds:
            self._start(f"osd.{osd.id}")
        self._start(cephconf.rgw_name(config))
        catalogue = self.catalogue
        step("mon: configuring and enabling the perfwatch and prometheus modules before a mgr starts")
        mgrmodules.enable(self.ceph, catalogue, root)
        first, *standbys = config.mgrs
        self._start(f"mgr.{first}")
        wait_for(functools.partial(probes.active_mgr, self.ceph), 60, f"mgr.{first} to become active", 0.5)
        for name in catalogue.exporter_names() + list(monitoring.NAMES):  # they start while the mgr loads
            self._start(name)
        mgrmodules.check_enabled(self.ceph, catalogue, root)  # in a secure lab: client CA and password set now
        for mgr in standbys:  # the first is the active mgr; in a secure lab, a standby starts with its client CA
            self._start(f"mgr.{mgr}")
        step(
            "the active mgr has both modules and their options; daemons, exporters, Alertmanager and Prometheus started"
        )
        step("waiting for all OSDs up and in, RGW answering, the mgr's own pool made, every PG active+clean, HEALTH_OK")
        wait_for(functools.partial(probes.osds_up_in, self.ceph, config.osds), 120, f"{config.osds} OSDs up and in")
        rgw = catalogue.rgw_url()
        wait_for(functools.partial(probes.rgw_answers, rgw), 90, f"RGW on {rgw}", 0.5)
        made = functools.partial(mgrmodules.mgr_pool_made, self.ceph, not mgrmodules.mgr_makes_its_pool(root))
        wait_for(made, 60, "the mgr to make its pool", 2)
        wait_for(self.pgs_clean, 120, "every PG active+clean", 0.5)
        for note in mgrmodules.tag_mgr_pools(self.ceph):
            step(note)
        wait_for(functools.partial(probes.health_ok, self.ceph), 120, "HEALTH_OK", 0.5)
        client = security.client(catalogue.tls)
        for name, url in catalogue.exporter_urls().items():
            who = client if name.startswith("exporter.") else None  # node_exporter: plain HTTP
            wait_for(functools.partial(probes.http_answers, url, who), 30, f"{name} on {url}", 0.5)
        for name, url in catalogue.exporter_urls().items():  # answering at once, from their caches
            if name.startswith("exporter."):
                collected = functools.partial(probes.exporter_collected, url, client)
                wait_for(collected, 60, f"{name}'s first collection", 0.5)
        for name, url in catalogue.monitoring_urls().items():
            log = catalogue.output_path(name)
            ready = functools.partial(probes.http_ready, self.state.daemons[name], f"{url}-/ready", name, log)
            wait_for(ready, 60, f"{name} ready on {url}-/ready (log: {log})", 0.5)
        step("HEALTH_OK; exporters answering, Alertmanager and Prometheus ready")

    @property
    def layer_dir(self) -> Path:
        """The lab's own writable layer over the rootfs (--install, --rootfs): overlayfs's upper and work."""
        return self.dir / "rootfs-layer"

    def _enter_rootfs(self, root: Path) -> procs.ProcRef:
        """The mount namespace the release's Ceph runs in (the packages of --install installed there), and
        the lab's wrappers of its tools."""
        log = self.catalogue.output_path(mountns.HOLDER_NAME)
        module = [bootstrap.MODULE_SOURCE] if self.config.module_from == "checkout" else []
        layer = self.layer_dir if self.config.own_layer else None
        holder = mountns.start_holder(root, [self.dir], module, log, layer)
        self.state.mount_ns = holder
        self.save_state()
        mountns.write_wrappers(self.dir, holder, root, rootfs.TOOLS, self.state.ceph_version)
        if self.config.install:
            self._install_packages(holder, root)
        return holder

    def _install_packages(self, holder: procs.ProcRef, root: Path) -> None:
        """dpkg -i the --install packages inside the namespace: into the lab's layer, never into the rootfs."""
        folder = self.dir / "packages"
        folder.mkdir(exist_ok=True)
        copies = []
        for deb in self.config.install:
            copy = folder / Path(deb).name
            shutil.copyfile(deb, copy)
            copies.append(str(copy))
        code, out = mountns.run_inside(holder, root, ["dpkg", "-i", *copies], self.dir, timeout=300)
        (folder / "dpkg.log").write_text(out)
        names = ", ".join(Path(c).name for c in copies)
        if code != 0:
            raise LabError(f"dpkg -i {names} failed (exit {code}): {out.strip()[-800:]}")
        _say(f"lab: installed {names} into the lab's layer over {root} (the rootfs itself is unchanged)")

    def _check_installed_module(self, root: Path) -> str:
        """--module-from rootfs: the perfwatch the Ceph of the lab will load (its own module path); LabError
        when there is none, or when the release needs the lab's module folder to load any module at all."""
        where = prereq.MGR_MODULES_DIR / bootstrap.MODULE_NAME

        def read(path: Path) -> str | None:
            if self.state.mount_ns is None:  # this machine's packages
                return path.read_text(errors="replace") if path.is_file() else None
            code, out = mountns.run_inside(self.state.mount_ns, root, ["cat", str(path)], self.dir, timeout=30)
            return out if code == 0 else None

        if read(where / "module.py") is None:
            raise LabError(
                f"--module-from rootfs: no {where}/module.py in {root} (install ceph-mgr-perfwatch: --install "
                "<its .deb>, or run an image that has it)"
            )
        util = read(prereq.MGR_MODULES_DIR / "mgr_util.py") or ""
        if bootstrap.BCRYPT_IMPORT in util.splitlines():
            raise LabError(
                f"--module-from rootfs: {root}'s mgr_util.py imports bcrypt at the top, which fails in the mgr's "
                "sub-interpreters (Debian trixie's Reef): its modules load only through the lab's module folder"
            )
        version = read(where / "common" / "version.py") or ""
        found = re.search(r'__version__ = "([^"]+)"', version)
        return f"{where} (version {found.group(1) if found else 'unknown'}) of {root}"

    def _start(self, name: str) -> None:
        holder = self.state.mount_ns
        if holder is not None and not procs.is_alive(holder) and name.split(".")[0] in ("mon", "mgr", "osd", "client"):
            raise LabError(
                f"the lab's mount namespace (pid {holder.pid}) is gone, so {name} cannot start in it: "
                "`python3 -m lab down`, then `up`"
            )
        catalogue = self.catalogue
        for note in bootstrap.write_monitoring_config(name, catalogue):
            _say(f"lab: {note}")
        spec = catalogue.spec(name, mountinfo=cgroups.MOUNTINFO.read_text())
        env = {**os.environ, **spec.env} if spec.env else None
        ref = procs.spawn(list(spec.argv), catalogue.output_path(name), netns=spec.netns, env=env)
        self.state.daemons[name] = ref
        self.save_state()
        knobs.reapply_to(self.state, name, ref.pid)

    # ----- single daemons ------------------------------------------------------------------------------

    def stop_daemon(self, name: str, kill: bool = False) -> bool:
        """Stop one daemon we started (SIGKILL with kill=True); False if it was not running."""
        self.catalogue.check(name)
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
        """Start one daemon of the lab again (back under the knobs that name it); False if it was running."""
        self.catalogue.check(name)
        ref = self.state.daemons.get(name)
        if ref is not None and procs.is_alive(ref):
            return False
        self._start(name)
        return True

    # ----- down ----------------------------------------------------------------------------------------

    def down(self) -> list[str]:
        """Stop what we started, by PID; undo the knobs; remove namespaces, links, loop devices and the lab
        directory. Returns the problems met; with any, the directory and its state stay for another try."""
        problems: list[str] = []
        # Rank by rank (clients and exporters, OSDs, mgrs, the mon), each rank at once: a Tentacle RGW
        # stopped together with the OSDs can hang two minutes in its shutdown.
        for rank in sorted({_stop_rank(name) for name in self.state.daemons}):
            same_rank = [name for name in self.state.daemons if _stop_rank(name) == rank]
            for name in same_rank:
                procs.signal_proc(self.state.daemons[name], 15)
            for name in same_rank:
                procs.stop(self.state.daemons[name], grace=15)
                if procs.is_alive(self.state.daemons[name]):
                    problems.append(f"{name} (pid {self.state.daemons[name].pid}) would not stop")
        holder = self.state.mount_ns
        if holder is not None:  # after every daemon in it: its mounts go with it
            procs.stop(holder, grace=5)
            if procs.is_alive(holder):
                problems.append(f"the mount namespace holder (pid {holder.pid}) would not stop")
        problems += knobs.clear(self.state, self.save_state)[1]
        recorded = {knob.get("group") for knob in self.state.knobs.values()}  # already reported above
        for group in cgroups.existing(f"{self.config.name}-osd."):  # a knob whose record was lost
            if group.name not in recorded:
                problems += cgroups.remove(_controller_of(group), group.name)
        problems += osd_devices.detach_all(self.dir, self.state)
        problems += net.destroy(self.state)
        if not problems and (self.dir / CONFIG_FILE).exists():
            shutil.rmtree(self.dir)
            claims.release(self.config.name, self.dir)
        elif problems:
            self.save_state()
        return problems

    # ----- status --------------------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        alive = self.alive()
        catalogue = self.catalogue
        out: dict[str, Any] = {
            "directory": str(self.dir),
            "release": self.config.release,
            "ceph_version": self.state.ceph_version,
            "rootfs": self.state.rootfs or None,
            "module_from": self.config.module_from,
            "installed": [Path(d).name for d in self.config.install],
            "mount_namespace": None
            if self.state.mount_ns is None
            else {"pid": self.state.mount_ns.pid, "running": procs.is_alive(self.state.mount_ns)},
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
            "exporters": catalogue.exporter_urls(),
            "tls": security.describe(catalogue.tls) if catalogue.tls is not None else None,
            "client": {"netns": self.topo.client.netns, "address": self.topo.client.address},
            "knobs": {key: {**knob, "setting": knobs.describe(knob)} for key, knob in self.state.knobs.items()},
            "rgw": catalogue.rgw_url(),
            "module_endpoints": catalogue.module_urls(),
            "ceph_metrics": catalogue.ceph_metrics_urls(),
            "monitoring": catalogue.monitoring_urls(),
            "health": None,
        }
        mon = self.state.daemons.get(f"mon.{cephconf.MON_ID}")
        if mon is not None and procs.is_alive(mon):
            try:
                out["health"] = self.ceph("health", timeout=5).get("status")
            except cephcli.CephCommandError as exc:
                out["health"] = f"unknown ({exc})"
        return out


def _stop_rank(name: str) -> int:
    kind = name.split(".", 1)[0]
    return {"client": 0, "osd": 1, "mgr": 2, "mon": 3}.get(kind, 0)


def _controller_of(group: Path) -> str:
    return "blkio" if group.parent == cgroups.find_mount("blkio") else "cpu"
