"""The host exporter on Reef (18.2) and Tentacle (20.2) daemons, as the releases spike ran them (Debian
trixie/forky rootfs, daemons chrooted in a private mount namespace), and on cephadm's host layout.

What the spike showed: a Reef radosgw's /proc/PID/comm is "notif-worker0" (its main thread renamed
itself), so it is found by its program (/proc/PID/exe); a chrooted daemon's /proc/PID/exe and /proc/PID/root
point into the rootfs, and its lab folder is bound at the same path inside, so its conf and data dir
read through /proc/PID/root and its sockets through --asok-dir; a Tentacle RGW has three objecters.
"""

import json
import os
from pathlib import Path

import pytest

from perfwatch_host_exporter import asok
from perfwatch_host_exporter.discovery import Scanner
from perfwatch_host_exporter.identity import identify
from perfwatch_host_exporter.trust import Trusted
from tests import paths
from tests.fixtures.exporter.fakehost import FakeHost
from tests.unit.exporter.test_clusters import daemons_by_cluster, gauge, make
from tests.unit.exporter.test_collector import FakeAsok, value, values

FIXTURES = paths.EXPORTER_FIXTURES
FSID = "2cb7a22b-38cb-40d4-91f5-9b341e8a28d5"
ROOTS = "/var/tmp/roots"


ROOT_ONLY = Trusted(frozenset({0}), ((0, "root"),))


def scan(host: FakeHost, errors: list[str] | None = None) -> list[tuple[int, str, str]]:
    """(pid, kind, label) of the daemons a scan of the fake host finds, trusting root only."""
    scanner = Scanner(host.root(), lambda source, message: (errors or []).append(message), lambda r, m: None)
    return [(d.pid, d.ident.kind, d.ident.label) for d, _ in scanner.scan(ROOT_ONLY, None, False)]


def test_a_daemon_that_renamed_its_main_thread_is_found_by_its_program(tmp_path: Path) -> None:
    host = FakeHost(tmp_path / "host")
    host.process(7, "notif-worker0", ["radosgw", "-f", "-n", "client.rgw.lab"])
    host.process(8, "notif-worker0", ["rgw", "-n", "client.rgw.b"], exe="/var/tmp/roots/trixie/usr/bin/radosgw")
    host.process(9, "msgr-worker-0", ["/usr/bin/ceph-osd", "-n", "osd.3"], exe="/usr/bin/ceph-osd (deleted)")
    host.process(10, "notif-worker0", ["radosgw-admin", "bucket", "list"])
    host.process(11, "python3", ["/usr/bin/python3", "radosgw"])
    host.process(12, "python3", ["ceph-osd", "-i", "3"], exe="/usr/bin/python3.11")  # exec -a ceph-osd python3
    assert scan(host) == [(7, "rgw", "rgw.lab"), (8, "rgw", "rgw.b"), (9, "osd", "osd.3")], (
        "by comm or by the binary it runs (an upgraded one too), never by what argv[0] claims"
    )


def test_the_scan_reads_argv_of_daemons_only(tmp_path: Path) -> None:
    host = FakeHost(tmp_path / "host")
    host.process(10, "notif-worker0", ["radosgw", "-f", "-n", "client.rgw.lab"])
    host.process(11, "kworker/0:1", [], exe="")  # a kernel thread: empty cmdline, no exe
    host.process(12, "bash", ["bash"])
    host.process(13, "sshd", ["sshd"])
    host.path("proc/13/cmdline").unlink()
    os.mkfifo(host.path("proc/13/cmdline"))  # never read: sshd is not a daemon of ours
    errors: list[str] = []
    assert scan(host, errors) == [(10, "rgw", "rgw.lab")]
    assert errors == []


def chrooted_lab(tmp_path: Path, rgw_dump: str) -> tuple[FakeHost, FakeAsok]:
    """The spike's layout: rootfs ROOTS/trixie, lab folder ROOTS/lab-trixie on the host (its run dir
    holds the sockets) and the same path inside the rootfs (conf, OSD data: the bind mount)."""
    host = FakeHost(tmp_path / "host")
    host.mount("/sys/fs/cgroup/cpu,cpuacct", "cgroup", "rw,cpu,cpuacct")
    host.cgroup_files("/sys/fs/cgroup/cpu,cpuacct", cpu_cfs_quota_us=-1, cpu_cfs_period_us=100000)
    host.cgroup_files("/sys/fs/cgroup/cpu,cpuacct", cpu_stat="nr_periods 0\nnr_throttled 0\nthrottled_time 0")
    host.disk("vda", 254, 0)
    lab = ROOTS + "/lab-trixie"
    inside = ROOTS + "/trixie" + lab  # the bind mount, as the daemons see it
    conf = lab + "/ceph.conf"
    host.write(inside + "/ceph.conf", f"[global]\n\tfsid = {FSID}\n\trun dir = {lab}/run\n")
    host.file_on(inside + "/osd/ceph-0/block", "vda")
    root = "../.." + ROOTS + "/trixie"
    cgroup = "4:cpu,cpuacct:/\n0::/\n"
    host.process(20, "ceph-mon", ["ceph-mon", "-f", "-c", conf, "-i", "a"], root=root, cgroup=cgroup)
    host.process(21, "ceph-osd", ["ceph-osd", "-f", "-c", conf, "-i", "0"], root=root, cgroup=cgroup)
    rgw = ["radosgw", "-f", "-c", conf, "-n", "client.rgw.lab"]
    host.process(22, "notif-worker0", rgw, root=root, cgroup=cgroup)
    fake = FakeAsok(host)
    for pid, name in ((20, "mon.a"), (21, "osd.0"), (22, "client.rgw.lab")):
        sock = f"{lab}/run/ceph-{name}.asok"
        host.write(sock, "")
        fake.owners[sock] = pid
    fake.replies[(f"{lab}/run/ceph-osd.0.asok", "config get osd_data")] = {"osd_data": lab + "/osd/ceph-0"}
    fake.replies[(f"{lab}/run/ceph-client.rgw.lab.asok", "perf dump")] = json.loads((FIXTURES / rgw_dump).read_text())
    return host, fake


@pytest.mark.parametrize(
    "rgw_dump, calls",
    [("reef_rgw_perf_dump_objecter.json", 262 + 590), ("tentacle_rgw_perf_dump_objecter.json", 4 + 261 + 783)],
)
def test_chrooted_release_daemons(tmp_path: Path, rgw_dump: str, calls: int) -> None:
    host, fake = chrooted_lab(tmp_path, rgw_dump)
    text = make(host, fake, asok_dirs=(ROOTS + "/lab-trixie/run",), cluster_fsid=FSID, same_netns=True).render()
    assert daemons_by_cluster(text) == {f"{d}@{FSID}": "node1" for d in ("mon.a", "osd.0", "rgw.lab")}
    found = values(text)
    osd = {"ceph_daemon": "osd.0", "cluster": FSID, "hostname": "node1"}
    rgw = {"ceph_daemon": "rgw.lab", "cluster": FSID, "hostname": "node1"}
    block = dict(osd, role="block", device="vda", partition="", via="file")
    assert value(found, "osd_device_info", **block) == 1
    assert value(found, "rgw_objecter_ops_total", **rgw, op="call") == calls
    assert value(found, "daemon_cgroup_info", **osd, cgroup_version="1", cgroup="/") == 1
    assert "daemon_cgroup_cpu_limit_cores" not in text, "no quota"
    assert gauge(text, "exporter_daemons") == 3
    assert sum(v for (name, _), v in found.items() if name.endswith("collection_errors_total")) == 0


def cephadm_no_root_access(tmp_path: Path) -> tuple[FakeHost, FakeAsok]:
    """A cephadm OSD whose /proc/PID/root the exporter cannot follow (no ptrace access, say): its fsid
    shows in its mounts, its socket and data dir in cephadm's host directories."""
    host = FakeHost(tmp_path / "host")
    host.mount("/sys/fs/cgroup", "cgroup2", "rw")
    host.disk("sdb", 8, 16)
    host.dm("dm-0", 0, ["sdb"])
    host.link("dev/ceph-0a1b/osd-block-2c3d", "../dm-0")
    mounts = FakeHost.bind_mount(2, f"/var/lib/ceph/{FSID}/osd.0", "/var/lib/ceph/osd/ceph-0")
    mounts += FakeHost.bind_mount(3, f"/var/run/ceph/{FSID}", "/var/run/ceph")
    argv = ["/usr/bin/ceph-osd", "-n", "osd.0", "-f", "--setuser", "ceph", "--default-log-to-file=false"]
    host.process(100, "ceph-osd", argv, root="../../gone/100", mountinfo=mounts)
    host.link(f"var/lib/ceph/{FSID}/osd.0/block", "/dev/ceph-0a1b/osd-block-2c3d")
    sock = f"/var/run/ceph/{FSID}/ceph-osd.0.asok"
    host.write(sock, "")
    fake = FakeAsok(host)
    fake.owners[sock] = 100
    fake.replies[(sock, "config get osd_data")] = {"osd_data": "/var/lib/ceph/osd/ceph-0"}  # the container's
    return host, fake


def test_cephadm_host_directories_when_the_daemon_root_cannot_be_read(tmp_path: Path) -> None:
    host, fake = cephadm_no_root_access(tmp_path)
    text = make(host, fake).render()
    found = values(text)
    osd = {"ceph_daemon": "osd.0", "cluster": FSID, "hostname": "node1"}
    assert value(found, "osd_device_info", **osd, role="block", device="dm-0", partition="", via="direct") == 1
    assert value(found, "osd_device_info", **osd, role="block", device="sdb", partition="", via="dm") == 1
    assert fake.asked("config get osd_data", f"/var/run/ceph/{FSID}/ceph-osd.0.asok") == 1
    assert sum(v for (name, _), v in found.items() if name.endswith("collection_errors_total")) == 0


def test_socket_candidates_with_the_fsid_known() -> None:
    ident = identify("osd", ["ceph-osd", "-n", "osd.0"], 5)
    assert ident is not None
    assert asok.candidates(ident, ["/var/run/ceph", "/srv/run"], FSID) == [
        ("daemon", "/var/run/ceph/ceph-osd.0.asok"),
        ("host", f"/var/run/ceph/{FSID}/ceph-osd.0.asok"),
        ("host", "/var/run/ceph/ceph-osd.0.asok"),
        ("host", "/srv/run/ceph-osd.0.asok"),
        ("host", f"/srv/run/{FSID}/ceph-osd.0.asok"),
    ], "an --asok-dir of /var/run/ceph adds no second <fsid> candidate"
    assert asok.candidates(ident, ["/srv/run"]) == [
        ("daemon", "/var/run/ceph/ceph-osd.0.asok"),
        ("host", "/srv/run/ceph-osd.0.asok"),
    ]
