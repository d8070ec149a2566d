from pathlib import Path

import pytest

from perfwatch_host_exporter import cgroups
from perfwatch_host_exporter.cgroup_reader import CgroupError, CgroupReader
from tests.fixtures.exporter.fakehost import FakeHost

V1 = "/sys/fs/cgroup/cpu,cpuacct"
V2 = "/sys/fs/cgroup"
OSD_GROUP = "/system.slice/ceph-osd@0.service"


def v1_host(tmp_path: Path) -> FakeHost:
    host = FakeHost(tmp_path / "host")
    host.mount("/sys/fs/cgroup/memory", "cgroup", "rw,memory")
    host.cpu_v1_slice(V1, OSD_GROUP)
    host.mount("/sys/fs/cgroup/unified", "cgroup2", "rw,nsdelegate")  # hybrid: v1 has the cpu controller
    cgroup = f"12:memory:{OSD_GROUP}\n4:cpu,cpuacct:{OSD_GROUP}\n1:name=systemd:{OSD_GROUP}\n0::{OSD_GROUP}\n"
    host.process(100, "ceph-osd", ["ceph-osd", "-i", "0"], cgroup=cgroup)
    return host


def test_v1_limit_is_the_smallest_over_the_group_and_its_ancestors(tmp_path: Path) -> None:
    reader = CgroupReader(v1_host(tmp_path).root())
    reader.refresh_mounts()
    cg = reader.read(100)
    assert cg is not None
    assert (cg.version, cg.path) == ("1", OSD_GROUP)
    assert cg.limit_cores == pytest.approx(0.1), "system.slice's 0.1 cores beats the service's own 0.2"
    assert cg.throttling is not None, "throttling is read where the limit comes from: system.slice"
    assert cg.throttling[:2] == (5000, 900) and cg.throttling.throttled_seconds == pytest.approx(7.0)


def test_v1_own_quota_applies_when_ancestors_are_unlimited(tmp_path: Path) -> None:
    host = v1_host(tmp_path)
    host.cgroup_files(V1 + "/system.slice", cpu_cfs_quota_us=-1)
    reader = CgroupReader(host.root())
    reader.refresh_mounts()
    cg = reader.read(100)
    assert cg is not None and cg.limit_cores == pytest.approx(0.2)
    assert cg.throttling is not None and cg.throttling[:2] == (1200, 300), "the service's own cpu.stat"


def v2_host(tmp_path: Path) -> FakeHost:
    host = FakeHost(tmp_path / "host")
    host.mount(V2, "cgroup2", "rw,nsdelegate,memory_recursiveprot")
    host.cgroup_files(V2, cpu_stat="usage_usec 100\nuser_usec 60\nsystem_usec 40")  # the root group: no cpu.max
    host.cgroup_files(V2 + "/system.slice", cpu_max="max 100000")
    host.cgroup_files(
        V2 + "/system.slice/ceph-mon@a.service",
        cpu_max="150000 100000",
        cpu_stat="usage_usec 5\nuser_usec 3\nsystem_usec 2\nnr_periods 80\nnr_throttled 8\nthrottled_usec 2500000",
    )
    host.cgroup_files(V2 + "/system.slice/ceph-mgr@x.service", cpu_max="max 100000", cpu_stat="usage_usec 5")
    host.process(200, "ceph-mon", ["ceph-mon", "--id=a"], cgroup="0::/system.slice/ceph-mon@a.service\n")
    host.process(300, "ceph-mgr", ["ceph-mgr", "-i", "x"], cgroup="0::/system.slice/ceph-mgr@x.service\n")
    return host


def test_v2_cpu_max_and_throttled_usec(tmp_path: Path) -> None:
    reader = CgroupReader(v2_host(tmp_path).root())
    reader.refresh_mounts()
    mon = reader.read(200)
    assert mon is not None
    assert (mon.version, mon.path) == ("2", "/system.slice/ceph-mon@a.service")
    assert mon.limit_cores == pytest.approx(1.5)
    assert mon.throttling is not None
    assert mon.throttling[:2] == (80, 8) and mon.throttling.throttled_seconds == pytest.approx(2.5)


def test_v2_max_means_no_limit_and_no_cpu_stat_keys_no_throttling(tmp_path: Path) -> None:
    reader = CgroupReader(v2_host(tmp_path).root())
    reader.refresh_mounts()
    mgr = reader.read(300)
    assert mgr is not None
    assert mgr.limit_cores is None
    assert mgr.throttling is None


def test_a_missing_cgroup_directory_is_an_error(tmp_path: Path) -> None:
    host = v2_host(tmp_path)
    host.process(400, "ceph-osd", ["ceph-osd", "-i", "4"], cgroup="0::/gone.scope\n")
    reader = CgroupReader(host.root())
    reader.refresh_mounts()
    with pytest.raises(CgroupError):
        reader.read(400)


def test_mountinfo_unescapes_paths_and_splits_super_options() -> None:
    text = (
        "35 25 0:30 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:9 master:2 - cgroup cgroup rw,cpu,cpuacct\n"
        "36 25 0:31 /kubepods /host\\040cg rw - cgroup2 cgroup2 rw\n"
        "37 25 0:32 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n"
    )
    mounts = cgroups.parse_mountinfo(text)
    assert mounts[0] == cgroups.Mount("/", "/sys/fs/cgroup/cpu,cpuacct", "cgroup", ("rw", "cpu", "cpuacct"))
    assert (mounts[1].root, mounts[1].mountpoint) == ("/kubepods", "/host cg")
    v1, v2 = cgroups.cgroup_mounts(list(reversed(mounts)))
    assert v1 is mounts[0] or v1 == mounts[0], "cpuset is not cpu"
    assert v2 == mounts[1]


def test_cgroup_paths_are_joined_under_the_mounts_root() -> None:
    mount = cgroups.Mount("/kubepods", "/sys/fs/cgroup", "cgroup2", ())
    assert cgroups.cgroup_dir(mount, "/kubepods/pod1/ctr") == "/sys/fs/cgroup/pod1/ctr"
    assert cgroups.cgroup_dir(mount, "/kubepods") == "/sys/fs/cgroup"
    assert cgroups.cgroup_dir(mount, "/kubepods-other/x") is None
    assert cgroups.cgroup_dir(mount, "/system.slice") is None
    whole = cgroups.Mount("/", "/sys/fs/cgroup/cpu", "cgroup", ("cpu",))
    assert cgroups.cgroup_dir(whole, "/") == "/sys/fs/cgroup/cpu"


def test_limits() -> None:
    assert cgroups.limit_v1("-1", "100000") is None
    assert cgroups.limit_v1("250000\n", "100000\n") == 2.5
    assert cgroups.limit_v2("max 100000\n") is None
    assert cgroups.limit_v2("20000 100000\n") == 0.2


def kubernetes_host(tmp_path: Path) -> FakeHost:
    """An unprivileged pod's view on a cgroup v2 node: its own cgroup namespace, whose root is the
    exporter's container (kubepods.slice/kubepods-burstable.slice/pod-ex/cri-ex); the container's own
    /sys/fs/cgroup shows that subtree only; the host's tree is bind-mounted at /host/cgroup, its root
    reading /../../../.. from inside. An OSD pod's container is at .../pod-osd/cri-osd with 2 cores."""
    host = FakeHost(tmp_path / "host")
    host.mount("/sys/fs/cgroup", "cgroup2", "rw")  # the container's own: root "/"
    host.mount("/host/cgroup", "cgroup2", "rw", root="/../../../..")
    burstable = "/host/cgroup/kubepods.slice/kubepods-burstable.slice"
    host.cgroup_files("/host/cgroup", cgroup_procs="1\n")
    host.cgroup_files("/host/cgroup/kubepods.slice", cgroup_procs="")
    host.cgroup_files(burstable, cgroup_procs="")
    host.cgroup_files(burstable + "/pod-ex", cgroup_procs="")
    host.cgroup_files(burstable + "/pod-ex/cri-ex", cgroup_procs="4242\n")
    host.cgroup_files(burstable + "/pod-osd", cgroup_procs="", cpu_max="max 100000")
    host.cgroup_files(
        burstable + "/pod-osd/cri-osd",
        cgroup_procs="100\n",
        cpu_max="200000 100000",
        cpu_stat="nr_periods 10\nnr_throttled 2\nthrottled_usec 500000",
    )
    host.process(100, "ceph-osd", ["ceph-osd", "-i", "0"], cgroup="0::/../../pod-osd/cri-osd\n")
    return host


def test_a_private_cgroup_namespace_is_placed_through_the_hosts_tree(tmp_path: Path) -> None:
    host = kubernetes_host(tmp_path)
    reader = CgroupReader(host.root(), own_pid=4242)
    reader.refresh_mounts()
    assert reader.v2 is not None and reader.v2.mountpoint == "/host/cgroup", "the mount that shows the host's tree"
    cg = reader.read(100)
    assert cg is not None and cg.path == "/../../pod-osd/cri-osd"
    assert cg.limit_cores == pytest.approx(2.0)
    assert cg.throttling is not None and cg.throttling[:2] == (10, 2)
    # found once, checked again: the search is not repeated while the exporter stays where it was
    host.path("host/cgroup/kubepods.slice/kubepods-burstable.slice/pod-ex/cri-ex/cgroup.procs").write_text("4242\n")
    assert reader.read(100) == cg


def test_a_private_cgroup_namespace_without_the_hosts_tree_is_a_clear_error(tmp_path: Path) -> None:
    host = kubernetes_host(tmp_path)
    reader = CgroupReader(host.root(), own_pid=999)  # not listed anywhere: the host's tree is not there
    reader.refresh_mounts()
    with pytest.raises(CgroupError, match=r"own cgroup \(pid 999\) is not under /host/cgroup"):
        reader.read(100)


def test_a_path_climbing_out_of_the_namespace_is_never_read_as_a_host_path(tmp_path: Path) -> None:
    mount = cgroups.Mount("/", "/sys/fs/cgroup", "cgroup2", ())
    assert cgroups.cgroup_dir(mount, "/../../kubepods/x") is None
    assert cgroups.cgroup_dir(mount, "/../../kubepods/x", ns_root="a/b/c") == "/sys/fs/cgroup/a/kubepods/x"
    assert cgroups.cgroup_dir(mount, "/../../../../x", ns_root="a/b") is None, "above the mounted tree"
