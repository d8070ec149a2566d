"""What kind of device a disk under an OSD is (hdd, ssd, nvme, unknown), from sysfs; cached a minute.

The media verdict judges "slow" by kind: flash saturates at latencies far below a disk's healthy ones. The
kind comes from the transport and `queue/rotational` (BlueStore's own flag): nvme is local PCIe NVMe that
does not say it rotates; ssd any other non-rotating device, NVMe over a network and cloud volumes included;
hdd a rotating SATA, SAS or SCSI disk; unknown where the flag's 1 is only the kernel's default (virtio,
loop, dm, md, virtual) or sysfs is unreadable, judged like hdd. A dm, md or multipath device takes the kind
its members share. Why: docs/decisions/device-kind.md.
"""

import posixpath
import re
from typing import Callable, Dict, List, NamedTuple, Optional, Tuple

from .devices import is_multipath
from .fsroot import Root

REFRESH_SECONDS = 60.0  # a replaced disk that reuses a name is classified again within a minute
MAX_DEPTH = 4  # dm/md levels followed to find the members' kind
KINDS = ("hdd", "ssd", "nvme", "unknown")
# Models of cloud block volumes that present as PCIe NVMe but are network storage (1-3 ms per I/O)
NETWORK_NVME_MODELS = ("Amazon Elastic Block Store", "nvme_card-pd", "PersistentDisk")
_DISK_TRANSPORTS = ("sata", "sas", "scsi")


class DeviceKind(NamedTuple):
    kind: str  # one of KINDS
    rotational: str  # "1", "0", or "" when unreadable
    transport: str  # nvme | sata | sas | scsi | virtio | loop | dm | md | virtual | <bus> | unknown


class DeviceKinds:
    """Classifies disks by name (as in /proc/diskstats) in the host's sysfs; problems go to `on_error`."""

    def __init__(self, host: Root, on_error: Callable[[str], None], clock: Callable[[], float]) -> None:
        self.host = host
        self.on_error = on_error
        self.clock = clock
        self._cache: Dict[str, Tuple[float, DeviceKind]] = {}

    def kind(self, disk: str) -> DeviceKind:
        now = self.clock()
        cached = self._cache.get(disk)
        if cached is not None and now - cached[0] < REFRESH_SECONDS:
            return cached[1]
        try:
            found = self._classify(disk, 0)
        except (OSError, ValueError) as exc:
            self.on_error("{}: device kind: {}".format(disk, getattr(exc, "strerror", None) or exc))
            found = DeviceKind("unknown", "", "unknown")
        self._cache[disk] = (now, found)
        return found

    def keep_only(self, disks: List[str]) -> None:
        """Forget the disks no OSD uses any more."""
        wanted = set(disks)
        for name in [d for d in self._cache if d not in wanted]:
            del self._cache[name]

    def _classify(self, disk: str, depth: int) -> DeviceKind:
        if not disk or "/" in disk or disk in (".", ".."):
            raise ValueError("not a device name: {!r}".format(disk))
        sysdir = self.host.resolve("/sys/class/block/" + disk)
        if not self.host.exists(sysdir):
            raise ValueError("/sys/class/block/{} not found".format(disk))
        rotational = self._rotational(disk, sysdir)
        transport = self._transport(disk, sysdir)
        if transport in ("dm", "md", "multipath") and depth < MAX_DEPTH:
            members = self._members_kind(sysdir, depth)
            if members is not None:
                return DeviceKind(members, rotational, transport)
        return DeviceKind(kind_of(transport, rotational), rotational, transport)

    def _rotational(self, disk: str, sysdir: str) -> str:
        path = posixpath.join(sysdir, "queue", "rotational")
        try:
            value = self.host.read_text(path).strip()
        except OSError as exc:
            self.on_error("{}: {}: {}".format(disk, path, exc.strerror or exc))
            return ""
        if value not in ("0", "1"):
            self.on_error("{}: {}: unexpected {!r}".format(disk, path, value[:20]))
            return ""
        return value

    def _transport(self, disk: str, sysdir: str) -> str:
        if is_multipath(self.host, sysdir):
            return "multipath"
        for marker in ("loop", "dm", "md"):
            if self.host.exists(posixpath.join(sysdir, marker)):
                return marker
        device_link = posixpath.join(sysdir, "device")
        if not self.host.lexists(device_link):
            return "nvme" if _nvme_name(disk) else "virtual"
        device = self.host.resolve(device_link)
        subsystem_link = posixpath.join(device, "subsystem")
        subsystem = posixpath.basename(self.host.resolve(subsystem_link)) if self.host.lexists(subsystem_link) else ""
        if subsystem.startswith("nvme") or _nvme_name(disk):
            return self._nvme_transport(device)
        if subsystem == "scsi":
            if "/end_device-" in device or self.host.exists(posixpath.join(device, "sas_address")):
                return "sas"
            if "/ata" in device:
                return "sata"
            if "/virtio" in device:
                return "virtio"  # virtio-scsi: the host behind it could be anything
            return "scsi"
        return subsystem or "unknown"

    def _nvme_transport(self, controller: str) -> str:
        """nvme for local PCIe flash; nvme-<fabric> for NVMe over a network (the controller's `transport`:
        tcp, rdma, fc), nvme-cloud for a cloud's network volume that presents as PCIe NVMe (its `model`):
        both serve in milliseconds, as SSDs, not in NVMe's tens of microseconds."""
        transport = self._attribute(controller, "transport") or self._subsystem_transport(controller)
        if transport and transport != "pcie":
            return "nvme-" + transport
        model = self._attribute(controller, "model")
        if any(name in model for name in NETWORK_NVME_MODELS):
            return "nvme-cloud"
        return "nvme"

    def _subsystem_transport(self, subsystem: str) -> str:
        """Under native NVMe multipath the namespace's `device` is its subsystem (nvme-subsysN), which has
        no transport of its own: its controllers (entries nvmeM) do. A fabric when any controller is one
        (a shared namespace reached over the network); "" when none says."""
        try:
            entries = self.host.listdir(subsystem)
        except OSError:
            return ""
        found = ""
        for entry in sorted(entries):
            if re.match(r"nvme[0-9]+$", entry):
                transport = self._attribute(posixpath.join(subsystem, entry), "transport")
                if transport and transport != "pcie":
                    return transport
                found = found or transport
        return found

    def _attribute(self, directory: str, name: str) -> str:
        path = posixpath.join(directory, name)
        try:
            return self.host.read_text(path).strip() if self.host.exists(path) else ""
        except OSError:
            return ""

    def _members_kind(self, sysdir: str, depth: int) -> Optional[str]:
        """The kind every member (slave) of a dm or md device shares; None if they differ or none is known."""
        slaves = posixpath.join(sysdir, "slaves")
        if not self.host.exists(slaves):
            return None
        kinds = set()
        for slave in self.host.listdir(slaves):
            member_dir = self.host.resolve(posixpath.join(slaves, slave))
            if self.host.exists(posixpath.join(member_dir, "partition")):
                member_dir = posixpath.dirname(member_dir)  # a partition: its disk's kind
            member = posixpath.basename(member_dir)
            kinds.add(self._classify(member, depth + 1).kind)
        return kinds.pop() if len(kinds) == 1 else None


def kind_of(transport: str, rotational: str) -> str:
    """The kind from a transport and the rotational flag (module docstring)."""
    if transport == "nvme":
        return "hdd" if rotational == "1" else "nvme"
    if transport.startswith("nvme-"):  # over a network (nvme-tcp, -rdma, -fc) or a cloud's network volume
        return "hdd" if rotational == "1" else "ssd"
    if rotational == "0":
        return "ssd"
    if rotational == "1" and transport in _DISK_TRANSPORTS:
        return "hdd"
    return "unknown"


def _nvme_name(disk: str) -> bool:
    """nvme<ctrl>n<ns> (a namespace; partitions are folded to their disk before this)."""
    if not disk.startswith("nvme"):
        return False
    ctrl, sep, ns = disk[4:].partition("n")
    return bool(sep) and ctrl.isdigit() and ns.isdigit()
