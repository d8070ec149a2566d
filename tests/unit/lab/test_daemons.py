"""The lab's daemon catalogue: names, command lines, namespaces, environments and URLs, without running anything."""

import sys
from pathlib import Path

import pytest

from lab.config import LabConfig, LabError
from lab.daemons import DISK_EXCLUDE, EXPORTER_PYTHONPATH, NODE_EXPORTER, Catalogue
from lab.topology import plan

FSID = "6b1f3c2e-0000-4000-8000-000000000000"
DIR = Path("/tmp/pwcat")
CONF = str(DIR / "ceph.conf")
MOUNTINFO = """\
25 30 0:22 / /sys/fs/cgroup rw,nosuid - tmpfs tmpfs ro,mode=755
26 25 0:23 / /sys/fs/cgroup/cpu rw,nosuid,nodev,noexec,relatime shared:9 - cgroup cgroup rw,cpu
28 25 0:25 / /sys/fs/cgroup/blkio rw,nosuid - cgroup cgroup rw,blkio
"""


def catalogue(hosts: int = 1, fsid: str = FSID) -> Catalogue:
    config = LabConfig(directory=DIR, hosts=hosts, subnet_index=7)
    return Catalogue(config, plan(config), fsid)


def test_one_host_lab_has_its_ceph_daemons_then_one_pair_of_exporters() -> None:
    assert catalogue().names() == [
        "mon.a", "mgr.x", "mgr.y", "osd.0", "osd.1", "osd.2", "client.rgw.pwlab",
        "node-exporter.pwlab-host1", "exporter.pwlab-host1", "alertmanager", "prometheus",
    ]  # fmt: skip


def test_namespaced_hosts_get_an_exporter_pair_each_and_the_core_one_more() -> None:
    assert catalogue(hosts=3).exporter_names() == [
        "node-exporter.pwlab-host1", "exporter.pwlab-host1",
        "node-exporter.pwlab-host2", "exporter.pwlab-host2",
        "node-exporter.pwlab-host3", "exporter.pwlab-host3",
        "exporter.core",
    ]  # fmt: skip


@pytest.mark.parametrize("hosts", [1, 3])
def test_core_daemons_run_in_the_root_namespace_from_the_lab_conf(hosts: int) -> None:
    cat = catalogue(hosts=hosts)
    mon = cat.spec("mon.a", mountinfo=MOUNTINFO)
    assert (mon.argv, mon.netns, mon.env) == (("ceph-mon", "-f", "-c", CONF, "-i", "a"), None, {})
    mgr = cat.spec("mgr.y", mountinfo=MOUNTINFO)
    assert (mgr.argv, mgr.netns) == (("ceph-mgr", "-f", "-c", CONF, "-i", "y"), None)
    rgw = cat.spec("client.rgw.pwlab", mountinfo=MOUNTINFO)
    assert (rgw.argv, rgw.netns) == (("radosgw", "-f", "-c", CONF, "-n", "client.rgw.pwlab"), None)


def test_an_osd_runs_in_its_hosts_namespace_when_hosts_are_namespaced() -> None:
    alone = catalogue().spec("osd.1", mountinfo=MOUNTINFO)
    assert (alone.argv, alone.netns) == (("ceph-osd", "-f", "-c", CONF, "-i", "1"), None)
    spread = catalogue(hosts=3).spec("osd.1", mountinfo=MOUNTINFO)
    assert (spread.argv, spread.netns) == (("ceph-osd", "-f", "-c", CONF, "-i", "1"), "pwlab-h2")


def test_node_exporter_listens_on_its_hosts_address_and_shows_loop_devices() -> None:
    alone = catalogue().spec("node-exporter.pwlab-host1", mountinfo=MOUNTINFO)
    assert alone.argv == (
        NODE_EXPORTER,
        "--web.listen-address=127.0.0.1:9100",
        f"--collector.diskstats.device-exclude={DISK_EXCLUDE}",
        "--collector.qdisc",
    )
    assert (alone.netns, alone.env) == (None, {})
    spread = catalogue(hosts=3).spec("node-exporter.pwlab-host3", mountinfo=MOUNTINFO)
    assert spread.argv[1] == "--web.listen-address=198.18.7.13:9100"
    assert spread.netns == "pwlab-h3"


def test_host_exporter_in_the_root_namespace_is_started_directly() -> None:
    spec = catalogue().spec("exporter.pwlab-host1", mountinfo=MOUNTINFO)
    assert spec.argv == (
        sys.executable, "-m", "perfwatch_host_exporter", "--listen-address", "127.0.0.1", "--port", "9285",
        "--hostname", "pwlab-host1", "--same-netns", "--asok-dir", str(DIR / "run"), "--collect-interval", "5",
        "--cluster-fsid", FSID,
    )  # fmt: skip
    assert spec.netns is None
    assert spec.env == {"PYTHONPATH": EXPORTER_PYTHONPATH}
    assert EXPORTER_PYTHONPATH.split(":")[0].endswith("/exporters")


def test_host_exporter_in_a_namespace_mounts_the_cgroup_hierarchies_again_first() -> None:
    spec = catalogue(hosts=3).spec("exporter.pwlab-host2", mountinfo=MOUNTINFO)
    assert spec.netns == "pwlab-h2"
    assert spec.argv[:2] == ("sh", "-c") and spec.argv[3] == "sh"
    script = spec.argv[2]
    assert script.startswith("mount -t tmpfs -o mode=755 cgroup-views /sys/fs/cgroup && ")
    assert "mount -t cgroup -o rw,blkio cgroup /sys/fs/cgroup/blkio" in script
    assert script.endswith(' && exec "$@"')
    exporter = spec.argv[4:]
    assert exporter[:3] == (sys.executable, "-m", "perfwatch_host_exporter")
    assert exporter[exporter.index("--listen-address") + 1] == "198.18.7.12"
    assert exporter[exporter.index("--hostname") + 1] == "pwlab-host2"
    assert spec.env == {"PYTHONPATH": EXPORTER_PYTHONPATH}


def test_the_core_exporter_watches_the_core_from_the_root_namespace() -> None:
    spec = catalogue(hosts=3).spec("exporter.core", mountinfo=MOUNTINFO)
    assert spec.netns is None and spec.argv[0] == sys.executable
    assert spec.argv[spec.argv.index("--listen-address") + 1] == "198.18.7.1"
    assert spec.argv[spec.argv.index("--hostname") + 1] == "core"


@pytest.mark.parametrize("hosts", [1, 3])
def test_exporters_are_restricted_to_the_labs_cluster_once_its_fsid_is_known(hosts: int) -> None:
    for name in catalogue(hosts=hosts).exporter_names():
        if name.startswith("exporter."):
            argv = catalogue(hosts=hosts).spec(name, mountinfo=MOUNTINFO).argv
            assert argv[argv.index("--cluster-fsid") + 1] == FSID, name
            assert "--cluster-fsid" not in catalogue(hosts=hosts, fsid="").spec(name, mountinfo=MOUNTINFO).argv


def test_with_exporter_counters_every_host_exporter_reads_its_osds_counters() -> None:
    config = LabConfig(directory=DIR, hosts=3, subnet_index=7, exporter_counters=True)
    counted = Catalogue(config, plan(config), FSID)
    for name in counted.exporter_names():
        if name.startswith("exporter."):
            assert "--daemon-counters" in counted.spec(name, mountinfo=MOUNTINFO).argv, name
            assert "--daemon-counters" not in catalogue(hosts=3).spec(name, mountinfo=MOUNTINFO).argv, name


def test_an_unknown_daemon_names_the_choices() -> None:
    with pytest.raises(LabError, match=r"no daemon 'osd\.9' in this lab; daemons: mon\.a, .*osd\.2"):
        catalogue().spec("osd.9", mountinfo=MOUNTINFO)
    with pytest.raises(LabError, match=r"no daemon 'exporter\.core'"):
        catalogue(hosts=1).check("exporter.core")
    catalogue(hosts=3).check("exporter.core")


def test_osd_ids_are_checked() -> None:
    catalogue().check_osd(2)
    with pytest.raises(LabError, match=r"no osd\.3 in this lab \(OSD ids are 0\.\.2\)"):
        catalogue().check_osd(3)


def test_urls_of_the_exporters_the_module_endpoints_and_rgw() -> None:
    one = catalogue()
    assert one.exporter_urls() == {
        "node-exporter.pwlab-host1": "http://127.0.0.1:9100/metrics",
        "exporter.pwlab-host1": "http://127.0.0.1:9285/metrics",
    }
    assert one.module_urls() == {"x": "http://127.0.0.1:9284/", "y": "http://127.0.0.1:9286/"}  # 9285: exporter
    assert one.rgw_url() == "http://127.0.0.1:7480/"
    three = catalogue(hosts=3)
    assert three.exporter_urls()["exporter.core"] == "http://198.18.7.1:9285/metrics"
    assert three.exporter_urls()["node-exporter.pwlab-host2"] == "http://198.18.7.12:9100/metrics"
    assert three.rgw_url() == "http://198.18.7.1:7480/"


def test_log_paths_are_in_the_lab_directory() -> None:
    assert catalogue().log_path("osd.0") == DIR / "log" / "ceph-osd.0.log"
    assert catalogue().output_path("exporter.core") == DIR / "log" / "exporter.core.stdout"
