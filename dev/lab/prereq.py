"""Checks made before `up` touches anything; each failure is one line that says what to do."""

from __future__ import annotations

import errno
import os
import shutil
import socket
from collections.abc import Callable
from pathlib import Path

from . import releases
from .config import GIB, LabConfig, LabError

# binary -> the Debian package that ships it
BINARIES = {
    "ceph-mon": "ceph-mon",
    "ceph-mgr": "ceph-mgr",
    "ceph-osd": "ceph-osd",
    "radosgw": "radosgw",
    "ceph": "ceph-common",
    "monmaptool": "ceph-common",
    "ip": "iproute2",
    "losetup": "mount",
    "prometheus-node-exporter": "prometheus-node-exporter",
    "prometheus": "prometheus",
    "prometheus-alertmanager": "prometheus-alertmanager",
    "tc": "iproute2",
    "rbd": "ceph-common",
}
MGR_MODULES_DIR = Path("/usr/share/ceph/mgr")
# Ceph's binaries: a release run from a rootfs brings its own (rootfs.TOOLS), and these instead.
CEPH_PACKAGES = ("ceph-mon", "ceph-mgr", "ceph-osd", "radosgw", "ceph-common")
ROOTFS_BINARIES = {"nsenter": "util-linux", "unshare": "util-linux", "chroot": "coreutils"}


def missing_binaries(which: Callable[[str], str | None] = shutil.which) -> dict[str, str]:
    return {binary: pkg for binary, pkg in BINARIES.items() if which(binary) is None}


def check_root() -> None:
    if os.geteuid() != 0:
        raise LabError("the lab needs root (loop devices, network namespaces, cgroups): run it with sudo or as root")


def check_binaries(config: LabConfig) -> None:
    from_rootfs = bool(config.rootfs) or releases.resolve(config.release).from_rootfs
    missing = missing_binaries()
    if from_rootfs:
        missing = {b: p for b, p in missing.items() if p not in CEPH_PACKAGES}
        missing.update({b: p for b, p in ROOTFS_BINARIES.items() if shutil.which(b) is None})
    if config.osd_backing == "file":
        missing.pop("losetup", None)
    if config.hosts == 1:
        missing.pop("ip", None)
        missing.pop("tc", None)
    if missing:
        pkgs = " ".join(sorted(set(missing.values())))
        raise LabError(f"missing {', '.join(sorted(missing))}: run `apt-get install -y {pkgs}` (or `make demo`)")
    if not from_rootfs and not (MGR_MODULES_DIR / "mgr_module.py").exists():
        raise LabError(f"{MGR_MODULES_DIR}/mgr_module.py not found: run `apt-get install -y ceph-mgr`")


def port_in_use(port: int, host: str = "0.0.0.0") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # Ceph binds with SO_REUSEADDR, so TIME-WAIT leftovers are no conflict; a listener is.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            return exc.errno == errno.EADDRINUSE
    return False


def check_ports(config: LabConfig) -> None:
    per_mgr = [("--module-port", port) for port in config.module_ports()]
    per_mgr += [("--ceph-metrics-port", port) for port in config.ceph_metrics_ports()]
    for flag, port in (*config.single_ports().items(), *per_mgr):
        if port_in_use(port):
            raise LabError(f"port {port} ({flag}) is already in use: stop what holds it or pick another with {flag}")


def needed_bytes(config: LabConfig) -> int:
    # The OSD files are sparse; a fresh lab writes a small part of them, but leave room to fill them.
    return config.osds * config.osd_size_bytes + GIB


def check_space(config: LabConfig) -> None:
    probe = config.directory
    while not probe.exists():
        probe = probe.parent
    stat = os.statvfs(probe)
    free = stat.f_bavail * stat.f_frsize
    need = needed_bytes(config)
    if free < need:
        raise LabError(
            f"{probe} has {free / GIB:.1f} GiB free, the lab needs {need / GIB:.1f} GiB: "
            "free space, or use --osds/--osd-size/--dir"
        )


def check_all(config: LabConfig) -> None:
    check_root()
    check_binaries(config)
    check_ports(config)
    check_space(config)
