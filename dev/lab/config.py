"""The lab's configuration: what the operator asked for, validated, persisted in the lab directory."""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DIR = REPO_ROOT / ".lab"
CONFIG_FILE = "lab.json"
GIB = 1024**3

MODULE_SOURCES = ("checkout", "rootfs")
MEDIA = ("disk", "flash")  # --media: what the OSD devices say they are (queue/rotational 1 or 0)
DB_DEVICES = ("none", "shared")  # --db-device: RocksDB/WAL on the data device, or on one device per host
MAX_OSDS_PER_DEVICE = 4  # the campaigns' MySQL nodes split each NVMe into four OSDs

# Linux interface names are at most 15 characters; ours are "<name>-h<N>" and "<name>-br".
_NAME_RE = re.compile(r"^[a-z][a-z0-9]{0,7}$")


class LabError(Exception):
    """A problem the operator can fix; printed as one line, never as a stack trace."""


@dataclasses.dataclass(frozen=True)
class LabConfig:
    directory: Path = DEFAULT_DIR
    name: str = "pwlab"
    hosts: int = 1
    osds: int = 3
    osd_size_gib: float = 3.0  # sparse: costs only what is written
    osd_backing: str = "loop"  # "loop": a loop device over a sparse file; "file": BlueStore on the file
    # The devices of the campaigns' hardware (layout.py): flash, several OSDs per device, a DB device per host
    media: str = "disk"
    osds_per_device: int = 1
    db_device: str = "none"
    db_size_gib: float = 1.0  # each OSD's block.db partition on the shared DB device
    mon_port: int = 3300
    rgw_port: int = 7480
    module_port: int = 9284
    exporter_port: int = 9285  # the perfwatch host exporter, one per simulated host (and one for the core)
    node_exporter_port: int = 9100  # node_exporter, one per simulated host
    prometheus_port: int = 9090  # the lab's Prometheus, on the core address
    alertmanager_port: int = 9093  # the lab's Alertmanager, on the core address
    ceph_metrics_port: int = 9283  # Ceph's own prometheus mgr module: one port per mgr, like --module-port
    subnet_index: int = 0  # hosts > 1: 198.18.<subnet_index>.0/24
    # hosts > 1: each host also gets a link of its own for Ceph's cluster network (eth1, 198.19.<subnet>.0/25)
    # and one that carries no Ceph traffic (eth2, 198.19.<subnet>.128/25), as real hosts have
    cluster_network: bool = False
    # the host exporters read the OSDs' counters (--daemon-counters) and the module leaves them to them
    # (daemon_counters_source=exporters), as a large cluster would run
    exporter_counters: bool = False
    mgrs: tuple[str, ...] = ("x", "y")
    release: str = "pacific"  # which Ceph the lab runs: a name of releases.RELEASES (checked by `up`)
    release_version: str = ""  # an exact version asked for (`--release 18.2.7`); "": whatever the source has
    # A filesystem tree to run Ceph from instead of the release's cached rootfs (a container image's, as
    # `buildah mount` shows it); "": the release's own. The release is then whatever the tree holds.
    rootfs: str = ""
    # Where the mgr loads perfwatch from: "checkout" (this checkout's mgr_module/, through the lab's module
    # folder) or "rootfs" (/usr/share/ceph/mgr/perfwatch of the Ceph the lab runs, as a package or an
    # image installs it; no `mgr module path` is set).
    module_from: str = "checkout"
    # Debian packages installed with dpkg, before the cluster is made, into the lab's own layer over the
    # rootfs (the rootfs itself is never changed).
    install: tuple[str, ...] = ()
    # perfwatch's endpoints (the module's and the host exporters') ask for TLS, a client certificate and
    # a password, and the lab's Prometheus gives them (security.py)
    secure: bool = False

    def validate(self) -> None:
        if not _NAME_RE.match(self.name):
            raise LabError(f"lab name {self.name!r} must be 1-8 lower-case letters or digits, starting with a letter")
        if self.osds < 1 or self.osds > 32:
            raise LabError(f"--osds {self.osds}: must be between 1 and 32")
        if self.hosts < 1 or self.hosts > self.osds:
            raise LabError(f"--hosts {self.hosts}: must be between 1 and the OSD count ({self.osds})")
        if self.hosts > 1 and self.hosts > 200:
            raise LabError("--hosts: at most 200 simulated hosts fit in one /24")
        if not 1.0 <= self.osd_size_gib <= 1024:
            raise LabError(f"--osd-size {self.osd_size_gib} GiB: must be between 1 and 1024 GiB")
        if self.osd_backing not in ("loop", "file"):
            raise LabError(f"--backing {self.osd_backing!r}: must be 'loop' or 'file'")
        self._validate_devices()
        ports = self.single_ports()
        ports |= {"--module-port": self.module_port, "--ceph-metrics-port": self.ceph_metrics_port}
        for flag, port in ports.items():
            if not 1024 <= port <= 65535 - len(self.mgrs):
                raise LabError(f"{flag} {port}: must be between 1024 and {65535 - len(self.mgrs)}")
        if len(set(ports.values())) != len(ports):
            raise LabError(f"ports must differ: {ports}")
        per_mgr = self.module_ports() + self.ceph_metrics_ports()
        if max(per_mgr) > 65535:
            raise LabError(f"the per-mgr ports {per_mgr} run past 65535: pick lower --module-port/--ceph-metrics-port")
        if self.cluster_network and self.hosts < 2:
            raise LabError("--cluster-network needs hosts in namespaces of their own: --hosts 2 or more")
        if not 0 <= self.subnet_index <= 255:
            raise LabError(f"--subnet-index {self.subnet_index}: must be between 0 and 255")
        if len(self.mgrs) < 1 or len(set(self.mgrs)) != len(self.mgrs):
            raise LabError(f"mgr names must be unique and at least one: {self.mgrs}")
        self._validate_sources()

    def _validate_devices(self) -> None:
        """--media, --osds-per-device, --db-device, --db-size: alone and together."""
        if self.media not in MEDIA:
            raise LabError(f"--media {self.media!r}: must be one of {', '.join(MEDIA)}")
        if self.db_device not in DB_DEVICES:
            raise LabError(f"--db-device {self.db_device!r}: must be one of {', '.join(DB_DEVICES)}")
        if not 1 <= self.osds_per_device <= MAX_OSDS_PER_DEVICE:
            raise LabError(f"--osds-per-device {self.osds_per_device}: must be between 1 and {MAX_OSDS_PER_DEVICE}")
        if not 0.25 <= self.db_size_gib <= 64:
            raise LabError(f"--db-size {self.db_size_gib} GiB: must be between 0.25 and 64 GiB")
        if self.osd_backing == "file" and not self.classic_devices:
            raise LabError("--media flash, --osds-per-device and --db-device need loop devices, not --backing file")

    @property
    def classic_devices(self) -> bool:
        """One plain loop device per OSD (or a file): the lab's devices before the campaigns' layouts."""
        return self.osds_per_device == 1 and self.db_device == "none" and self.media == "disk"

    def _validate_sources(self) -> None:
        """--rootfs, --module-from and --install: what exists and what can be combined."""
        if self.module_from not in MODULE_SOURCES:
            raise LabError(f"--module-from {self.module_from!r}: must be one of {', '.join(MODULE_SOURCES)}")
        if self.rootfs:
            root = Path(self.rootfs)
            if not root.is_absolute() or not root.is_dir():
                raise LabError(f"--rootfs {self.rootfs}: not a directory (give the absolute path of a filesystem tree)")
            if root.resolve() == Path("/"):
                raise LabError("--rootfs /: this machine's own Ceph is --release pacific, without --rootfs")
        for deb in self.install:
            path = Path(deb)
            if not path.is_absolute() or not path.is_file() or not path.name.endswith(".deb"):
                raise LabError(f"--install {deb}: not a Debian package file (an absolute path to a .deb)")
        if len({Path(d).name for d in self.install}) != len(self.install):
            raise LabError(f"--install: two packages with the same file name: {list(self.install)}")

    @property
    def own_layer(self) -> bool:
        """Whether the lab runs its Ceph from a writable layer of its own over the rootfs (overlayfs): when
        it installs packages, or runs a tree it was given (which is never written to)."""
        return bool(self.install or self.rootfs)

    def module_ports(self) -> list[int]:
        """The perfwatch endpoint port of each mgr: --module-port, then the next ports no other option uses."""
        return _ports_from(self.module_port, len(self.mgrs), {*self.single_ports().values(), self.ceph_metrics_port})

    def ceph_metrics_ports(self) -> list[int]:
        """The port of Ceph's prometheus module on each mgr: --ceph-metrics-port, then the next ports that
        neither another option nor the perfwatch endpoints use (9283, 9287 by default)."""
        return _ports_from(
            self.ceph_metrics_port, len(self.mgrs), {*self.single_ports().values(), *self.module_ports()}
        )

    def single_ports(self) -> dict[str, int]:
        """Every port option but --module-port and --ceph-metrics-port (one port per mgr each), by its flag."""
        return {
            "--mon-port": self.mon_port,
            "--rgw-port": self.rgw_port,
            "--exporter-port": self.exporter_port,
            "--node-exporter-port": self.node_exporter_port,
            "--prometheus-port": self.prometheus_port,
            "--alertmanager-port": self.alertmanager_port,
        }

    @property
    def osd_size_bytes(self) -> int:
        return int(self.osd_size_gib * GIB)

    @property
    def conf_path(self) -> Path:
        return self.directory / "ceph.conf"

    def to_json(self) -> str:
        data = dataclasses.asdict(self)
        data["directory"] = str(self.directory)
        data["mgrs"] = list(self.mgrs)
        data["install"] = list(self.install)
        return json.dumps(data, indent=2, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> LabConfig:
        data = json.loads(text)
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise LabError(f"lab.json has unknown keys {sorted(unknown)}: written by a newer lab?")
        data["directory"] = Path(data["directory"])
        data["mgrs"] = tuple(data.get("mgrs", ("x", "y")))
        data["install"] = tuple(data.get("install", ()))
        return cls(**data)

    def save(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        tmp = self.directory / (CONFIG_FILE + ".tmp")
        tmp.write_text(self.to_json())
        os.replace(tmp, self.directory / CONFIG_FILE)


def _ports_from(first: int, count: int, taken: set[int]) -> list[int]:
    """`count` ports: `first`, then the next ones not in `taken`."""
    ports: list[int] = []
    port = first
    while len(ports) < count:
        if port not in taken:
            ports.append(port)
        port += 1
    return ports


def resolve_directory(arg: str | None) -> Path:
    """The lab directory: --dir, else $PERFWATCH_LAB_DIR, else .lab/ in the checkout."""
    raw = arg or os.environ.get("PERFWATCH_LAB_DIR") or str(DEFAULT_DIR)
    return Path(raw).expanduser().resolve()


def load_config(directory: Path) -> LabConfig | None:
    """The configuration a lab in `directory` was started with, or None when there is no lab there."""
    path = directory / CONFIG_FILE
    if not path.exists():
        return None
    try:
        return LabConfig.from_json(path.read_text())
    except (ValueError, TypeError) as exc:
        raise LabError(f"{path} is unreadable ({exc}); remove the directory by hand") from exc
