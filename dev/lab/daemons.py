"""The daemon catalogue: which daemons a lab has, how each is started (command line, network namespace,
environment), where it logs, and the URLs its services answer on.

Pure: a LabConfig, a Topology and the cluster's fsid in (and, for a host exporter in a namespace of its
own, the machine's mountinfo text; for Alertmanager, the configuration file to use); names, command lines,
paths, URLs and Prometheus's scrape targets out. Nothing here starts, reads or probes anything, so the
catalogue is unit-tested without a lab.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import Any

from . import cephconf, cgroups, monitoring, security
from .config import REPO_ROOT, LabConfig, LabError
from .monitoring import Target
from .topology import Host, Topology

NODE_EXPORTER = "prometheus-node-exporter"  # Debian's name for node_exporter
# node_exporter's default also hides loop devices; the lab's OSDs live on them. Partitions stay hidden.
DISK_EXCLUDE = r"^(ram|zram|fd|(h|s|v|xv)d[a-z]|nvme\d+n\d+p|loop\d+p)\d+$"
# The perfwatch host exporter runs from the checkout: its package, and the module's pure parts it shares.
EXPORTER_PYTHONPATH = os.pathsep.join([str(REPO_ROOT / "exporters"), str(REPO_ROOT / "mgr_module")])


@dataclasses.dataclass(frozen=True)
class DaemonSpec:
    """How to start one daemon of the lab."""

    name: str  # "mon.a", "osd.0", "exporter.core", ...
    argv: tuple[str, ...]
    netns: str | None = None  # the network namespace it runs in; None: the root namespace
    env: dict[str, str] = dataclasses.field(default_factory=dict)  # added to the environment it inherits


@dataclasses.dataclass(frozen=True)
class Catalogue:
    config: LabConfig
    topo: Topology
    fsid: str = ""  # "" before `up` made one: host exporters are then not restricted to this cluster
    # Alertmanager's configuration: the checkout's example when it exists; None: the lab's fallback file
    alertmanager_config: Path | None = None
    # The lab's wrappers of the Ceph tools of a release run from a rootfs (mountns.py); None: the machine's
    ceph_bin: Path | None = None

    # ----- names -------------------------------------------------------------------------------------

    def names(self) -> list[str]:
        """Every daemon of the lab, in the order `up` starts them."""
        return (
            [f"mon.{cephconf.MON_ID}"]
            + [f"mgr.{m}" for m in self.config.mgrs]
            + [f"osd.{o.id}" for o in self.topo.osds]
            + [cephconf.rgw_name(self.config)]
            + self.exporter_names()
            + list(monitoring.NAMES)
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

    def check(self, name: str) -> None:
        """LabError naming the lab's daemons when `name` is not one of them."""
        if name not in self.names():
            raise LabError(f"no daemon {name!r} in this lab; daemons: {', '.join(self.names())}")

    def check_osd(self, osd_id: int) -> None:
        if osd_id not in [o.id for o in self.topo.osds]:
            raise LabError(f"no osd.{osd_id} in this lab (OSD ids are 0..{len(self.topo.osds) - 1})")

    # ----- paths -------------------------------------------------------------------------------------

    def log_path(self, name: str) -> Path:
        """The log a Ceph daemon writes itself (ceph.conf's `log file`)."""
        return self.config.directory / "log" / f"ceph-{name}.log"

    def output_path(self, name: str) -> Path:
        """Where a daemon's stdout and stderr go."""
        return self.config.directory / "log" / f"{name}.stdout"

    # ----- URLs --------------------------------------------------------------------------------------

    def _exporter_endpoint(self, name: str) -> tuple[str, str]:
        """(host:port, host name) of an exporter; the core's host name is "core"."""
        kind, where = name.split(".", 1)
        host = self._exporter_host(where)
        address = self.topo.core_address if host is None else host.address
        port = self.config.node_exporter_port if kind == "node-exporter" else self.config.exporter_port
        return f"{address}:{port}", "core" if host is None else host.crush_name

    @property
    def tls(self) -> security.LabTls | None:
        """Where a secure lab's certificates and password are; None for a lab on plain HTTP."""
        return security.tls_of(self.config.directory) if self.config.secure else None

    @property
    def perfwatch_scheme(self) -> str:
        """The scheme of perfwatch's endpoints (the module's and the host exporters')."""
        return "https" if self.config.secure else "http"

    def tls_addresses(self) -> list[str]:
        """Every address a perfwatch endpoint of the lab listens on: the names its certificate carries."""
        return sorted({self.topo.core_address, "127.0.0.1", *(h.address for h in self.topo.hosts)})

    def exporter_urls(self) -> dict[str, str]:
        """Metrics URL of each exporter, by its daemon name."""
        urls = {}
        for name in self.exporter_names():
            scheme = "http" if name.startswith("node-exporter.") else self.perfwatch_scheme
            urls[name] = f"{scheme}://{self._exporter_endpoint(name)[0]}/metrics"
        return urls

    def module_ports(self) -> dict[str, int]:
        """The perfwatch endpoint port of each mgr (see LabConfig.module_ports)."""
        return dict(zip(self.config.mgrs, self.config.module_ports(), strict=True))

    def module_urls(self) -> dict[str, str]:
        scheme = self.perfwatch_scheme
        return {mgr: f"{scheme}://{self.topo.core_address}:{port}/" for mgr, port in self.module_ports().items()}

    def ceph_metrics_ports(self) -> dict[str, int]:
        """The port of Ceph's own prometheus module on each mgr (see LabConfig.ceph_metrics_ports)."""
        return dict(zip(self.config.mgrs, self.config.ceph_metrics_ports(), strict=True))

    def ceph_metrics_urls(self) -> dict[str, str]:
        return {mgr: f"http://{self.topo.core_address}:{p}/" for mgr, p in self.ceph_metrics_ports().items()}

    def rgw_url(self) -> str:
        return f"http://{self.topo.core_address}:{self.config.rgw_port}/"

    def monitoring_urls(self) -> dict[str, str]:
        """The lab's Prometheus and Alertmanager, by daemon name, in the order `up` starts them."""
        ports = {
            monitoring.PROMETHEUS: self.config.prometheus_port,
            monitoring.ALERTMANAGER: self.config.alertmanager_port,
        }
        return {name: f"http://{self.topo.core_address}:{ports[name]}/" for name in monitoring.NAMES}

    # ----- what the lab's Prometheus scrapes ---------------------------------------------------------

    def scrape_jobs(self) -> dict[str, list[Target]]:
        """Scrape targets by job: every mgr's perfwatch endpoint (standbys answer an empty 200), every
        host exporter and node_exporter (labelled with their simulated host's CRUSH name, which is how
        rules join node_exporter's series to the exporter's device map), every mgr's Ceph module."""
        core = self.topo.core_address
        jobs: dict[str, list[Target]] = {job: [] for job in monitoring.JOBS}
        jobs[monitoring.JOB_MODULE] = [Target(f"{core}:{port}") for port in self.module_ports().values()]
        for name in self.exporter_names():
            endpoint, hostname = self._exporter_endpoint(name)
            job = monitoring.JOB_NODE if name.startswith("node-exporter.") else monitoring.JOB_HOST
            jobs[job].append(Target(endpoint, (("hostname", hostname),)))
        jobs[monitoring.JOB_CEPH] = [Target(f"{core}:{port}") for port in self.ceph_metrics_ports().values()]
        return jobs

    def prometheus_config(self, rule_files: list[Path]) -> dict[str, Any]:
        """The lab's Prometheus configuration, with those of the lab's rule files that exist."""
        alertmanager = f"{self.topo.core_address}:{self.config.alertmanager_port}"
        tls = self.tls
        settings = security.scrape_settings(tls) if tls is not None else {}
        secured = {job: settings for job in (monitoring.JOB_MODULE, monitoring.JOB_HOST)} if settings else {}
        return monitoring.prometheus_config(self.fsid, self.scrape_jobs(), alertmanager, rule_files, secured)

    # ----- how to start each daemon ------------------------------------------------------------------

    def spec(self, name: str, *, mountinfo: str) -> DaemonSpec:
        """How to start daemon `name`. `mountinfo` is this machine's /proc/self/mountinfo text: a host
        exporter in a namespace of its own mounts those cgroup hierarchies again (see cgroups.remount_script)."""
        self.check(name)
        directory, core = self.config.directory, self.topo.core_address
        if name == monitoring.PROMETHEUS:
            return DaemonSpec(name, monitoring.prometheus_argv(directory, core, self.config.prometheus_port))
        if name == monitoring.ALERTMANAGER:
            config_file = self.alertmanager_config or monitoring.fallback_alertmanager_config_path(directory)
            argv = monitoring.alertmanager_argv(directory, config_file, core, self.config.alertmanager_port)
            return DaemonSpec(name, argv)
        conf = str(self.config.conf_path)
        kind, ident = name.split(".", 1)
        if kind == "node-exporter":
            return self._node_exporter(name, ident)
        if kind == "exporter":
            return self._host_exporter(name, ident, mountinfo)
        if kind == "mon":
            return DaemonSpec(name, (self._ceph("ceph-mon"), "-f", "-c", conf, "-i", ident))
        if kind == "mgr":
            return DaemonSpec(name, (self._ceph("ceph-mgr"), "-f", "-c", conf, "-i", ident))
        if kind == "osd":
            argv = (self._ceph("ceph-osd"), "-f", "-c", conf, "-i", ident)
            return DaemonSpec(name, argv, self.topo.host_of(int(ident)).netns)
        return DaemonSpec(name, (self._ceph("radosgw"), "-f", "-c", conf, "-n", name))  # the lab's one RGW

    def _ceph(self, tool: str) -> str:
        """A Ceph binary: the lab's wrapper of the release's own when it runs from a rootfs."""
        return tool if self.ceph_bin is None else str(self.ceph_bin / tool)

    def _exporter_host(self, where: str) -> Host | None:
        """The simulated host an exporter watches; None for the core's."""
        return None if where == "core" else self.topo.host_named(where)

    def _node_exporter(self, name: str, where: str) -> DaemonSpec:
        host = self._exporter_host(where)
        address = self.topo.core_address if host is None else host.address
        argv = (
            NODE_EXPORTER,
            f"--web.listen-address={address}:{self.config.node_exporter_port}",
            f"--collector.diskstats.device-exclude={DISK_EXCLUDE}",
            "--collector.qdisc",
        )
        return DaemonSpec(name, argv, None if host is None else host.netns)

    def _host_exporter(self, name: str, where: str, mountinfo: str) -> DaemonSpec:
        host = self._exporter_host(where)
        address = self.topo.core_address if host is None else host.address
        netns = None if host is None else host.netns
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
            str(self.config.directory / "run"),
            "--collect-interval",
            str(monitoring.EXPORTER_COLLECT_INTERVAL),
        ]
        if self.tls is not None:
            argv += ["--web.config.file", str(self.tls.web_config)]
        if self.config.exporter_counters:
            argv += ["--daemon-counters"]
        if self.fsid:  # set by `up` before any daemon starts, and kept in state.json after
            # Only this lab's daemons: another lab (or a cluster) on this machine has its own exporters.
            argv += ["--cluster-fsid", self.fsid]
        if netns is not None:  # `ip netns exec` hides /sys/fs/cgroup: mount the hierarchies again there
            argv = ["sh", "-c", cgroups.remount_script(mountinfo) + ' && exec "$@"', "sh", *argv]
        return DaemonSpec(name, tuple(argv), netns, {"PYTHONPATH": EXPORTER_PYTHONPATH})
