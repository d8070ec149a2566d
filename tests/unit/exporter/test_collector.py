"""A whole fake host: three daemons and a broken one, cgroup v1, OSD devices, an RGW, one NIC; all of one
cluster (FSID), which osd.0's admin socket and the others' /etc/ceph/ceph.conf tell."""

import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from perfwatch.common.daemon_counters import counters
from perfwatch.common.exposition import PREFIX
from perfwatch_host_exporter import asok
from perfwatch_host_exporter.app import make_app
from perfwatch_host_exporter.collection_loop import CollectionLoop
from perfwatch_host_exporter.collector import HostCollector, HostSettings
from perfwatch_host_exporter.families import EXPORTER_REGISTRY
from tests import paths
from tests.fixtures.exporter.fakehost import FakeHost

FIXTURES = paths.EXPORTER_FIXTURES
MODULE_FIXTURES = paths.FIXTURES
V1 = "/sys/fs/cgroup/cpu,cpuacct"
OSD0_GROUP = "/system.slice/ceph-osd@0.service"
FSID = "8d4b7f1e-3c2a-4e5f-9a6b-0c1d2e3f4a5b"


class FakeAsok:
    """Replies by (socket, "perf dump" or "config get <var>"). A socket in `owners` is listened on by
    that PID (else by the expected one), as the user in `users` (else root): asok.check_listener judges
    them as asok.call does with the kernel's SO_PEERCRED."""

    def __init__(self, host: FakeHost) -> None:
        self.host = host
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.replies: dict[tuple[str, str], Any] = {}
        self.owners: dict[str, int] = {}
        self.users: dict[str, int] = {}

    def listener(self, path: str, timeout: float) -> tuple[int, int]:
        """(pid, uid) of the socket's listener: its owner, else pid 0 (none this fake can name)."""
        rel = "/" + str(Path(os.path.realpath(path)).relative_to(os.path.realpath(self.host.base)))
        return self.owners.get(rel, 0), self.users.get(rel, 0)

    def __call__(self, path: str, command: dict[str, Any], timeout: float, expected: asok.Listener | None) -> Any:
        rel = "/" + str(Path(os.path.realpath(path)).relative_to(os.path.realpath(self.host.base)))
        if expected is not None:
            asok.check_listener(path, self.owners.get(rel, expected.pid), self.users.get(rel, 0), expected)
        self.calls.append((rel, command))
        what = command["prefix"] + (" " + command["var"] if "var" in command else "")
        reply = self.replies.get((rel, what))
        if reply is None:
            raise asok.AsokError("no reply")
        return reply

    def asked(self, what: str, path: str = "/var/run/ceph/ceph-osd.0.asok") -> int:
        return len([c for c in self.calls if c[0] == path and c[1]["prefix"] + " " + c[1].get("var", "") == what])


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def build(tmp_path: Path) -> tuple[FakeHost, FakeAsok]:
    host = FakeHost(tmp_path / "host")
    host.cpu_v1_slice(V1, OSD0_GROUP)
    v1 = "4:cpu,cpuacct:{}\n0::/\n"
    host.process(
        100,
        "ceph-osd",
        ["/usr/bin/ceph-osd", "-f", "--cluster", "ceph", "-i", "0", "--setuser", "ceph"],
        stat_comm="ceph-osd) (x",
        utime=250,
        stime=50,
        threads=60,
        start=5000,
        rss_pages=1000,
        cgroup=v1.format(OSD0_GROUP),
    )
    host.process(200, "ceph-mon", ["ceph-mon", "-f", "--id=a"], utime=10, threads=25, cgroup=v1.format("/"))
    host.process(300, "radosgw", ["radosgw", "-f", "-n", "client.rgw.x"], threads=500, cgroup=v1.format("/"))
    host.process(400, "ceph-osd", ["ceph-osd", "-f", "-i", "1"], cgroup=v1.format("/"))
    (host.path("proc/400/stat")).unlink()
    (host.path("proc/400/stat")).mkdir()  # unreadable: reading it fails
    host.process(500, "bash", ["bash"])
    # osd.0's devices: block on a partition behind a by-id link, block.db on LVM over a whole disk
    host.disk("sda", 8, 0)
    host.partition("sda", "sda1", 1)
    host.disk("sdb", 8, 16)
    host.dm("dm-0", 0, ["sdb"])
    host.device_kind("sda", "sata", "1")  # an HDD
    host.device_kind("sdb", "sas", "0", 1)  # an SSD holding the DB's logical volume
    host.device_kind("dm-0", None, "0")
    host.link("dev/disk/by-id/wwn-1-part1", "../../sda1")
    host.link("dev/mapper/vg-db", "../dm-0")
    host.link("/srv/osd/ceph-0/block", "/dev/disk/by-id/wwn-1-part1")
    host.link("/srv/osd/ceph-0/block.db", "/dev/mapper/vg-db")
    host.write("/var/run/ceph/ceph-osd.0.asok", "")  # where Ceph puts it by default
    host.write("/lab/run/ceph-client.rgw.x.asok", "")  # found through --asok-dir
    host.interface("lo", None)
    host.interface("eth0", "10000")
    fake = FakeAsok(host)
    fake.replies[("/var/run/ceph/ceph-osd.0.asok", "config get osd_data")] = {"osd_data": "/srv/osd/ceph-0"}
    fake.replies[("/var/run/ceph/ceph-osd.0.asok", "config get fsid")] = {"fsid": FSID}
    host.write("/etc/ceph/ceph.conf", f"[global]\n\tfsid = {FSID}\n\tmon host = [v2:10.0.0.1:3300]\n")
    fake.replies[("/lab/run/ceph-client.rgw.x.asok", "perf dump")] = json.loads(
        (FIXTURES / "pacific_rgw_perf_dump_objecter.json").read_text()
    )
    # osd.0's counters (read only with --daemon-counters)
    fake.replies[("/var/run/ceph/ceph-osd.0.asok", "perf dump")] = json.loads(
        (MODULE_FIXTURES / "pacific_osd_perf_dump.json").read_text()
    )
    return host, fake


IP_ADDR = '[{"ifname": "eth0", "addr_info": [{"local": "198.18.0.11"}, {"local": "fe80::1"}]}]'  # ip -j addr


def collector(host: FakeHost, fake: FakeAsok, clock: Clock | None = None, **settings: Any) -> HostCollector:
    return HostCollector(
        HostSettings(hostname="node1", asok_dirs=("/lab/run",), **settings),
        root=host.root(),
        asok_call=fake,
        asok_listener=fake.listener,
        tc=None,
        ip=lambda args: IP_ADDR,
        clk_tck=100,
        page_size=4096,
        clock=clock or Clock(),
    )


def values(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            found[(s.name, frozenset(s.labels.items()))] = s.value
    return found


def value(found: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str) -> float:
    return found[(PREFIX + name, frozenset(labels.items()))]


def test_full_host_render_parses_and_carries_every_family(tmp_path: Path) -> None:
    host, fake = build(tmp_path)
    loop = CollectionLoop(collector(host, fake, daemon_counters=True).collect, "node1", 15.0, logging.getLogger("t"))
    loop.run_once()
    app = make_app(loop.parts, loop.health, "node1", lambda: {"auth_failed": 2})
    text = app("/metrics", False).content().decode()  # what /metrics serves: collection, loop and server families
    families = {f.name: f for f in text_string_to_metric_families(text)}
    assert {f.type for f in families.values()} <= {"counter", "gauge", "summary"}  # summaries: the OSD counters
    # every declared family is in this render (prometheus_client drops _total from counter family names)
    # but those of OSD counters only later releases have (the recorded perf dump is Pacific's)
    later = {spec.family for spec in counters.OSD_SPECS if spec.releases and spec.releases != counters.PACIFIC_ONLY}
    FAMILIES = [family.name for family in EXPORTER_REGISTRY.families() if family.name not in later]
    assert {PREFIX + name[: -len("_total")] if name.endswith("_total") else PREFIX + name for name in FAMILIES} == set(
        families
    )
    for family in families.values():
        for s in family.samples:
            assert s.labels.get("hostname") == "node1", s
            if "_daemon_" in s.name or "_osd_" in s.name or "_rgw_" in s.name:
                assert s.labels["ceph_daemon"] in {"osd.0", "mon.a", "rgw.x"}, s
                assert s.labels["cluster"] == FSID, s


def test_full_host_values(tmp_path: Path) -> None:
    host, fake = build(tmp_path)
    got = values(collector(host, fake).render())
    osd = {"ceph_daemon": "osd.0", "cluster": FSID, "hostname": "node1"}
    assert value(got, "daemon_cpu_seconds_total", mode="user", **osd) == 2.5
    assert value(got, "daemon_cpu_seconds_total", mode="system", **osd) == 0.5
    assert value(got, "daemon_threads", **osd) == 60
    assert value(got, "daemon_resident_memory_bytes", **osd) == 1000 * 4096
    assert value(got, "daemon_cgroup_info", cgroup=OSD0_GROUP, cgroup_version="1", **osd) == 1
    assert value(got, "daemon_cgroup_cpu_limit_cores", **osd) == pytest.approx(0.1)
    assert value(got, "daemon_cgroup_cpu_periods_total", **osd) == 5000  # system.slice's, where the limit is
    assert value(got, "daemon_cgroup_cpu_throttled_periods_total", **osd) == 900
    assert value(got, "daemon_cgroup_cpu_throttled_seconds_total", **osd) == pytest.approx(7.0)
    devices = {
        (dict(labels)["role"], dict(labels)["device"], dict(labels)["partition"], dict(labels)["via"])
        for (name, labels) in got
        if name == PREFIX + "osd_device_info"
    }
    assert devices == {("block", "sda", "sda1", "direct"), ("db", "dm-0", "", "direct"), ("db", "sdb", "", "dm")}
    kinds = {
        (dict(labels)["device"], dict(labels)["kind"], dict(labels)["rotational"], dict(labels)["transport"])
        for (name, labels) in got
        if name == PREFIX + "device_info"
    }
    assert kinds == {("sda", "hdd", "1", "sata"), ("sdb", "ssd", "0", "sas"), ("dm-0", "ssd", "0", "dm")}
    assert value(got, "exporter_collection_errors_total", hostname="node1", source="device") == 0
    rgw = {"ceph_daemon": "rgw.x", "cluster": FSID, "hostname": "node1"}
    assert value(got, "rgw_objecter_ops_total", op="call", **rgw) == 854
    assert value(got, "rgw_objecter_ops_total", op="omap_rd", **rgw) == 2
    mon = {"ceph_daemon": "mon.a", "cluster": FSID, "hostname": "node1"}
    assert value(got, "daemon_threads", **mon) == 25
    assert ("ceph_perfwatch_daemon_cgroup_cpu_limit_cores", frozenset(mon.items())) not in got, "root: no limit"
    assert value(got, "network_link_capacity_bytes", hostname="node1", device="eth0", source="speed") == 1.25e9
    assert value(got, "exporter_daemons", hostname="node1") == 3, "osd.1, whose stat is unreadable, is not reported"
    assert value(got, "exporter_daemons_unknown_cluster", hostname="node1") == 0


def test_one_bad_daemon_counts_an_error_and_the_rest_export(tmp_path: Path) -> None:
    host, fake = build(tmp_path)
    got = values(collector(host, fake).render())
    assert value(got, "exporter_collection_errors_total", hostname="node1", source="proc") == 1
    assert value(got, "exporter_collection_errors_total", hostname="node1", source="asok") == 0
    daemons = {dict(labels).get("ceph_daemon") for (name, labels) in got if "daemon_threads" in name}
    assert daemons == {"osd.0", "mon.a", "rgw.x"}


def test_device_map_is_cached_per_process_for_a_minute(tmp_path: Path) -> None:
    host, fake = build(tmp_path)
    clock = Clock()
    c = collector(host, fake, clock)
    c.collect()
    c.collect()
    assert fake.asked("config get osd_data") == 1
    clock.now += 61
    c.collect()
    assert fake.asked("config get osd_data") == 2
    assert fake.asked("config get fsid") == 1, "a daemon's fsid, once known, is kept for the process's life"
    # a restarted OSD (same PID, new start time) is looked up again at once
    stat = host.path("proc/100/stat")
    stat.write_text(stat.read_text().replace(" 5000 ", " 6000 "))
    c.collect()
    assert fake.asked("config get osd_data") == 3
    assert fake.asked("config get fsid") == 2


def test_osd_data_falls_back_to_argv_then_the_default(tmp_path: Path) -> None:
    host, fake = build(tmp_path)
    del fake.replies[("/var/run/ceph/ceph-osd.0.asok", "config get osd_data")]
    c = collector(host, fake)
    got = values(c.render())
    assert value(got, "exporter_collection_errors_total", hostname="node1", source="asok") == 1
    assert value(got, "exporter_collection_errors_total", hostname="node1", source="device") == 1, "no default dir"
    assert not any(name == PREFIX + "osd_device_info" for name, _ in got)
    assert c.osd_map.data_dir(c_daemon(c, "osd.0")) == "/var/lib/ceph/osd/ceph-0"
    # restarted with --osd-data (a command line is read once per process: PID and start time)
    (host.path("proc/100/cmdline")).write_bytes(b"ceph-osd\0-i\x000\0--osd-data\0/srv/osd/ceph-$id\0")
    assert c.osd_map.data_dir(c_daemon(c, "osd.0")) == "/var/lib/ceph/osd/ceph-0"
    stat = host.path("proc/100/stat")
    stat.write_text(stat.read_text().replace(" 5000 ", " 6000 "))
    assert c.osd_map.data_dir(c_daemon(c, "osd.0")) == "/srv/osd/ceph-0"


def c_daemon(c: HostCollector, label: str) -> Any:
    return next(d for d, _ in c.scanner.scan(c.trusted, None, False) if d.ident.label == label)


def test_cluster_and_netns_filters(tmp_path: Path) -> None:
    host, fake = build(tmp_path)
    host.process(600, "ceph-osd", ["ceph-osd", "--cluster", "other", "-i", "0"], netns="net:[999]")
    got = values(collector(host, fake, cluster="other").render())
    assert value(got, "exporter_daemons", hostname="node1") == 1
    got = values(collector(host, fake, same_netns=True).render())
    assert value(got, "exporter_daemons", hostname="node1") == 3, "pid 600 lives in another netns"


def test_a_second_daemon_with_a_taken_label_in_the_same_cluster_is_left_out(tmp_path: Path) -> None:
    host, fake = build(tmp_path)
    host.process(600, "ceph-osd", ["ceph-osd", "-i", "0"])  # osd.0 again, of the same cluster (ceph.conf)
    host.process(700, "ceph-osd", ["ceph-osd", "--cluster", "other", "-i", "1"])  # no fsid anywhere
    host.process(701, "ceph-osd", ["ceph-osd", "--cluster", "other", "-i", "1"])  # nor here: both cluster=""
    got = values(collector(host, fake).render())
    assert value(got, "exporter_daemons", hostname="node1") == 4  # osd.0, mon.a, rgw.x, osd.1 of cluster ""
    assert value(got, "exporter_daemons_unknown_cluster", hostname="node1") == 2
    assert value(got, "exporter_collection_errors_total", hostname="node1", source="proc") == 3  # pid 400's stat


def test_no_cpu_hierarchy_in_sight_is_an_error_not_silence(tmp_path: Path) -> None:
    host, fake = build(tmp_path)
    host.write("proc/self/mountinfo", "")  # e.g. a namespace whose /sys hides /sys/fs/cgroup
    got = values(collector(host, fake).render())
    assert value(got, "exporter_collection_errors_total", hostname="node1", source="cgroup") == 1
    assert not [name for (name, _) in got if "cgroup_info" in name]


def test_an_osd_moved_to_another_device_is_followed_after_its_restart(tmp_path: Path) -> None:
    host, fake = build(tmp_path)
    host.disk("nvme0n1", 259, 0)
    host.device_kind("nvme0n1", "nvme", "0")
    c = collector(host, fake)

    def kinds() -> dict[str, str]:
        got = values(c.render())
        rows = [dict(labels) for (name, labels) in got if name == PREFIX + "device_info"]
        return {row["device"]: row["kind"] for row in rows}

    assert kinds() == {"sda": "hdd", "sdb": "ssd", "dm-0": "ssd"}
    host.path("/srv/osd/ceph-0/block").unlink()
    host.link("/srv/osd/ceph-0/block", "/dev/nvme0n1")
    host.path("/srv/osd/ceph-0/block.db").unlink()
    stat = host.path("proc/100/stat")
    stat.write_text(stat.read_text().replace(" 5000 ", " 6000 "))  # restarted: same PID, new start time
    assert kinds() == {"nvme0n1": "nvme"}, "the old disks no OSD uses are not reported"


def test_each_address_is_exported_with_its_device_and_carrier(tmp_path: Path) -> None:
    """nic_map through the exporter's collection and exposition; without `ip`, none."""
    host, fake = build(tmp_path)
    c = collector(host, fake)
    found = values(c.render())
    assert value(found, "network_address_info", hostname="node1", address="198.18.0.11",
                 device="eth0", carrier="eth0") == 1.0  # fmt: skip
    assert not [k for k in found if k[0] == "ceph_perfwatch_network_address_info" and ("address", "fe80::1") in k[1]]
    c.ip = None
    assert "ceph_perfwatch_network_address_info{" not in c.render()
