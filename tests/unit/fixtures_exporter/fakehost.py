"""A fake host in a temporary directory for the host exporter's tests: /proc, /sys, /dev, cgroup mounts.

The sysfs layout copies the kernel's: devices under /sys/devices/.../block/<disk>[/<partition>], with
relative symlinks from /sys/class/block/<name>, /sys/block/<disk> and /sys/dev/block/<major>:<minor>.
Device nodes and files with particular device numbers are plain files whose stat() the FakeStat fakes.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from perfwatch_host_exporter.fsroot import Root, StatResult, os_stat

PCI = "devices/pci0000:00/0000:00:05.0"
CEPH_UID = 64045  # Debian's ceph user
PASSWD = f"root:x:0:0:root:/root:/bin/bash\nceph:x:{CEPH_UID}:{CEPH_UID}:Ceph:/var/lib/ceph:/usr/sbin/nologin\n"
VIRTUAL = "devices/virtual/block"
# sysfs paths of the device behind a disk (its `device` link), by transport, and the bus it is on
DEVICE_PATHS = {
    "sata": ("devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:{n}", "bus/scsi"),
    "sas": ("devices/pci0000:00/0000:00:03.0/host1/port-1:0/end_device-1:0/target1:0:0/1:0:0:{n}", "bus/scsi"),
    "usb": ("devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host6/target6:0:0/6:0:0:{n}", "bus/scsi"),
    "virtio-scsi": ("devices/pci0000:00/0000:00:06.0/virtio3/host2/target2:0:0/2:0:0:{n}", "bus/scsi"),
    "virtio": ("devices/pci0000:00/0000:00:05.0/virtio{n}", "bus/virtio"),
    "nvme": ("devices/pci0000:00/0000:00:04.0/nvme/nvme{n}", "class/nvme"),
}


class FakeStat:
    """stat() with overrides by real path (symlinks in the path resolved first, as the kernel would)."""

    def __init__(self) -> None:
        self.overrides: dict[str, StatResult] = {}

    def set(self, path: Path, result: StatResult) -> None:
        self.overrides[os.path.realpath(path)] = result

    def __call__(self, path: str) -> StatResult:
        found = self.overrides.get(os.path.realpath(path))
        return found if found is not None else os_stat(path)


class FakeHost:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.base.mkdir(parents=True, exist_ok=True)
        self.stat = FakeStat()
        self.devnums: dict[str, tuple[int, int]] = {}
        self.sysdirs: dict[str, str] = {}  # device name -> its sysfs dir (relative to /sys)
        self.write("proc/self/mountinfo", "")
        self.write("proc/self/cgroup", "0::/\n")  # the exporter's own: the root of its cgroup namespace
        self.write("etc/passwd", PASSWD)
        self.link("proc/self/ns/net", "net:[4026531840]")
        (self.base / "sys/class/net").mkdir(parents=True)

    def root(self) -> Root:
        return Root(str(self.base), self.stat)

    # --- files ---------------------------------------------------------------------------------------
    def path(self, rel: str) -> Path:
        return self.base / rel.lstrip("/")

    def write(self, rel: str, text: str | bytes) -> Path:
        path = self.path(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)
        return path

    def link(self, rel: str, target: str) -> Path:
        path = self.path(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(target)
        return path

    # --- processes -----------------------------------------------------------------------------------
    def process(
        self,
        pid: int,
        comm: str,
        argv: list[str],
        *,
        stat_comm: str | None = None,
        utime: int = 0,
        stime: int = 0,
        threads: int = 1,
        start: int = 1000,
        rss_pages: int = 0,
        cgroup: str = "0::/\n",
        netns: str = "net:[4026531840]",
        root: str = "../..",
        mountinfo: str = "",
        environ: dict[str, str] | None = None,
        uid: int = 0,
        exe: str | None = None,
    ) -> None:
        """A process; its /proc/PID/root links to the fake host's root unless `root` says otherwise
        (a relative link, from /proc/PID: "../../containers/x" is the fake host's /containers/x).
        It runs as `uid` (all four of /proc/PID/status) the binary `exe` (default /usr/bin/<argv[0]'s
        basename>)."""
        proc = f"proc/{pid}"
        self.write(proc + "/comm", comm + "\n")
        self.write(
            proc + "/status", f"Name:\t{comm}\nUmask:\t0022\nState:\tS (sleeping)\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\n"
        )
        if exe is None and argv:
            exe = "/usr/bin/" + os.path.basename(argv[0])
        if exe:  # "" for none (a kernel thread)
            self.link(proc + "/exe", exe)
        self.write(proc + "/cmdline", b"".join(a.encode() + b"\0" for a in argv))
        fields = ["S", "1", str(pid), str(pid), "0", "-1", "4194560", "100", "0", "0", "0"]  # fields 3..13
        fields += [str(utime), str(stime), "0", "0", "20", "0", str(threads), "0", str(start)]  # 14..22
        fields += ["123456789", str(rss_pages)] + ["0"] * 28  # 23, 24, ...
        self.write(proc + "/stat", "{} ({}) {}\n".format(pid, stat_comm or comm, " ".join(fields)))
        self.write(proc + "/cgroup", cgroup)
        self.write(proc + "/mountinfo", mountinfo)
        self.write(proc + "/environ", b"".join(f"{k}={v}".encode() + b"\0" for k, v in (environ or {}).items()))
        self.link(proc + "/ns/net", netns)
        self.link(proc + "/root", root)

    @staticmethod
    def bind_mount(line_id: int, source_root: str, mountpoint: str) -> str:
        """One /proc/PID/mountinfo line: a bind mount of `source_root` (its path in the source
        filesystem) at `mountpoint`, as a container runtime makes them."""
        return f"{line_id} 100 253:0 {source_root} {mountpoint} rw,relatime - xfs /dev/mapper/vg-root rw\n"

    # --- cgroups -------------------------------------------------------------------------------------
    def mount(self, mountpoint: str, fstype: str, super_options: str, root: str = "/") -> None:
        line = "{n} 23 0:{n} {root} {mp} rw,nosuid,nodev,noexec,relatime shared:{n} - {fs} {fs} {so}\n".format(
            n=30 + len(self.read("proc/self/mountinfo").splitlines()),
            root=root,
            mp=mountpoint.replace(" ", "\\040"),
            fs=fstype,
            so=super_options,
        )
        self.write("proc/self/mountinfo", self.read("proc/self/mountinfo") + line)
        self.path(mountpoint).mkdir(parents=True, exist_ok=True)

    def read(self, rel: str) -> str:
        return self.path(rel).read_text()

    def cpu_v1_slice(self, mountpoint: str, service: str) -> None:
        """A cgroup v1 cpu,cpuacct hierarchy at `mountpoint` with the root unlimited, system.slice at
        0.1 cores (the tighter quota, where throttling is counted: 5000 periods, 900 throttled, 7 s) and
        `service` under it at 0.2 cores (1200 periods, 300 throttled, 4.5 s)."""
        self.mount(mountpoint, "cgroup", "rw,cpu,cpuacct")
        self.cgroup_files(mountpoint, cpu_cfs_quota_us=-1, cpu_cfs_period_us=100000)
        self.cgroup_files(
            mountpoint + "/system.slice",
            cpu_cfs_quota_us=10000,
            cpu_cfs_period_us=100000,
            cpu_stat="nr_periods 5000\nnr_throttled 900\nthrottled_time 7000000000",
        )
        self.cgroup_files(
            mountpoint + service,
            cpu_cfs_quota_us=20000,
            cpu_cfs_period_us=100000,
            cpu_stat="nr_periods 1200\nnr_throttled 300\nthrottled_time 4500000000\nnr_bursts 0\nburst_time 0",
        )

    def cgroup_files(self, directory: str, **files: Any) -> None:
        """cgroup_files("/sys/fs/cgroup/x", cpu_max="max 100000") writes cpu.max (the first _ is a dot)."""
        for name, content in files.items():
            self.write("{}/{}".format(directory, name.replace("_", ".", 1)), str(content) + "\n")

    # --- block devices -------------------------------------------------------------------------------
    def _sysfs_device(self, name: str, sysdir: str, major: int, minor: int) -> None:
        self.write(f"sys/{sysdir}/dev", f"{major}:{minor}\n")
        self.link("sys/class/block/" + name, "../../" + sysdir)
        self.link(f"sys/dev/block/{major}:{minor}", "../../" + sysdir)
        self.devnums[name] = (major, minor)
        self.sysdirs[name] = sysdir

    def disk(self, name: str, major: int, minor: int, *, virtual: bool = False) -> None:
        """A whole disk (virtual: loop and dm devices live under /sys/devices/virtual/block)."""
        sysdir = "{}/{}".format(VIRTUAL if virtual else PCI + "/block", name)
        self._sysfs_device(name, sysdir, major, minor)
        self.write(f"sys/{sysdir}/queue/rotational", "1\n")  # the kernel's default; device_kind() changes it
        self.link("sys/block/" + name, "../" + sysdir)
        self.node(name)

    def partition(self, disk: str, name: str, number: int) -> None:
        major, minor = self.devnums[disk]
        sysdir = f"{self.sysdirs[disk]}/{name}"
        self._sysfs_device(name, sysdir, major, minor + number)
        self.write(f"sys/{sysdir}/partition", f"{number}\n")
        self.node(name)

    def node(self, name: str, rel: str | None = None, devname: str | None = None) -> Path:
        """A block device node (/dev/<name>, or `rel`) for the device `devname` (default `name`)."""
        path = self.write(rel or "dev/" + name, "")
        major, minor = self.devnums[devname or name]
        self.stat.set(path, StatResult(stat.S_IFBLK | 0o660, os.makedev(0, 6), os.makedev(major, minor)))
        return path

    def file_on(self, rel: str, device: str | None, anonymous_minor: int = 0) -> Path:
        """A regular file whose filesystem is on `device` (None: an anonymous device, major 0)."""
        path = self.write(rel, "")
        dev = os.makedev(*self.devnums[device]) if device else os.makedev(0, anonymous_minor or 42)
        self.stat.set(path, StatResult(stat.S_IFREG | 0o644, dev, 0))
        return path

    def loop(self, name: str, minor: int, backing_file: str) -> None:
        self.disk(name, 7, minor, virtual=True)
        self.write(f"sys/{VIRTUAL}/{name}/loop/backing_file", backing_file + "\n")

    def dm(self, name: str, minor: int, slaves: list[str]) -> None:
        self.disk(name, 253, minor, virtual=True)
        (self.path(f"sys/{VIRTUAL}/{name}/dm")).mkdir(parents=True)  # the kernel's dm/name, dm/uuid
        (self.path(f"sys/{VIRTUAL}/{name}/slaves")).mkdir(parents=True)
        for slave in slaves:
            # a slave link points at the slave's device dir, relative: from sys/devices/virtual/block/dm-N/slaves
            self.link(f"sys/{VIRTUAL}/{name}/slaves/{slave}", "../../../../../" + self.sysdirs[slave])

    # --- network -------------------------------------------------------------------------------------
    def interface(self, name: str, speed: str | None) -> None:
        (self.path("sys/class/net/" + name)).mkdir(parents=True)
        if speed is not None:
            self.write(f"sys/class/net/{name}/speed", speed + "\n")

    def device_kind(self, name: str, transport: str | None, rotational: str | None, n: int = 0) -> None:
        """The disk's queue/rotational (None: no such file) and the device behind it (a DEVICE_PATHS
        key; None: none, as for loop, dm, md and virtual devices)."""
        sysdir = self.sysdirs[name]
        if rotational is not None:
            self.write(f"sys/{sysdir}/queue/rotational", rotational + "\n")
        else:
            self.path(f"sys/{sysdir}/queue/rotational").unlink()
        if transport is not None:
            device, subsystem = DEVICE_PATHS[transport]
            device = device.format(n=n)
            (self.path("sys/" + device)).mkdir(parents=True, exist_ok=True)
            (self.path("sys/" + subsystem)).mkdir(parents=True, exist_ok=True)
            depth = device.count("/") + 1
            self.link(f"sys/{device}/subsystem", "../" * depth + subsystem)
            self.link(f"sys/{sysdir}/device", "../" * (sysdir.count("/") + 1) + device)
