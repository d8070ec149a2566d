"""Which cluster each daemon belongs to: the fsid parsers, and two clusters on one fake host (cephadm's
layout, and plain config files with admin sockets side by side as the lab has them)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from perfwatch_host_exporter import cli, fsid
from perfwatch_host_exporter.cgroups import parse_mountinfo
from perfwatch_host_exporter.collector import HostCollector, HostSettings
from perfwatch_host_exporter.identity import identify
from tests import paths
from tests.fixtures.exporter.fakehost import FakeHost
from tests.unit.exporter.test_collector import Clock, FakeAsok

REPO = paths.REPO
ENV_FOR_CLI = dict(os.environ, PYTHONPATH="{}:{}".format(REPO / "exporters", REPO / "mgr_module"))

A = "0f1e2d3c-4b5a-4697-8877-665544332211"
B = "aabbccdd-eeff-4011-8233-445566778899"
C = "12345678-9abc-4def-8123-456789abcdef"


def test_normalise_accepts_uuids_only() -> None:
    assert fsid.normalise(" " + A.upper() + "\n") == A
    for bad in ("", "ceph", A[:-1], A + "0", "{" + A + "}", A.replace("-", "")):
        assert fsid.normalise(bad) is None, bad


def test_fsid_in_the_global_section_of_a_conf() -> None:
    conf = f"""# lab
fsid = {B}
[global]
    mon host = [v2:127.0.0.1:3300]
\tFSID = {A}   ; a trailing comment
[osd]
\tfsid = {C}
"""
    assert fsid.from_conf(conf) == A, "[global] (and before any section); the last one wins; [osd] does not count"
    assert fsid.from_conf(f'[global]\nfsid = "{A}"\n') == A
    assert fsid.from_conf("[global]\nfsid = not-a-uuid\n") is None
    assert fsid.from_conf(f"[client]\nfsid = {A}\n") is None
    assert fsid.from_conf("") is None


def test_cephadm_bind_mounts_name_the_fsid() -> None:
    mountinfo = (
        "1 0 0:50 / / rw - overlay overlay rw\n"
        + FakeHost.bind_mount(2, f"/var/lib/ceph/{A}/osd.3", "/var/lib/ceph/osd/ceph-3")
        + FakeHost.bind_mount(3, f"/run/ceph/{A}", "/var/run/ceph")
        + FakeHost.bind_mount(4, f"/lib/ceph/{A}/crash", "/var/lib/ceph/crash")  # /var a filesystem of its own
    )
    assert fsid.from_mounts(parse_mountinfo(mountinfo)) == A
    assert fsid.from_mounts(parse_mountinfo("1 0 0:50 / / rw - ext4 /dev/vda1 rw\n")) is None
    two = mountinfo + FakeHost.bind_mount(5, f"/var/lib/ceph/{B}/osd.4", "/srv/x")
    assert fsid.from_mounts(parse_mountinfo(two)) is None, "two fsids: ambiguous"


def test_cephadm_unit_in_the_cgroup_names_the_fsid() -> None:
    podman = f"0::/system.slice/system-ceph\\x2d{A}.slice/ceph-{A}@osd.3.service/libpod-payload-0a1b\n"
    assert fsid.from_cgroup(podman) == A
    assert fsid.from_cgroup(f"4:cpu,cpuacct:/system.slice/ceph-{A}@mon.a.service\n0::/\n") == A
    assert fsid.from_cgroup("0::/system.slice/ceph-osd@0.service\n") is None, "the packaged units have no fsid"


def test_config_files_in_the_order_ceph_reads_them() -> None:
    lab = identify("osd", ["ceph-osd", "-c", "/lab/$cluster.conf, rel.conf", "-i", "0"], 1)
    plain = identify("mon", ["ceph-mon", "--cluster", "c2", "-i", "a"], 1)
    assert lab is not None and plain is not None
    assert fsid.conf_paths(lab, {"CEPH_CONF": "/x.conf"}) == ["/lab/ceph.conf"], "-c wins; relative paths skipped"
    assert fsid.conf_paths(plain, {"CEPH_CONF": "/x.conf"}) == ["/x.conf"]
    assert fsid.conf_paths(plain, {}) == ["/etc/ceph/c2.conf"]
    assert fsid.parse_environ(b"A=1\0CEPH_CONF=/x.conf\0junk\0") == {"A": "1", "CEPH_CONF": "/x.conf"}


def daemons_by_cluster(text: str) -> dict[str, str]:
    """{"osd.0@<fsid>": hostname} from the threads family, which every reported daemon has."""
    found = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == "ceph_perfwatch_daemon_threads":
                found[f"{s.labels['ceph_daemon']}@{s.labels['cluster']}"] = s.labels["hostname"]
    return found


def gauge(text: str, name: str) -> float:
    return next(
        s.value for f in text_string_to_metric_families(text) for s in f.samples if s.name == "ceph_perfwatch_" + name
    )


def make(host: FakeHost, fake: FakeAsok, clock: Clock | None = None, **settings: object) -> HostCollector:
    return HostCollector(
        HostSettings(hostname="node1", **settings),  # type: ignore[arg-type]
        root=host.root(),
        asok_call=fake,
        tc=None,
        clk_tck=100,
        page_size=4096,
        clock=clock or Clock(),
    )


def cephadm_host(tmp_path: Path) -> FakeHost:
    """Two cephadm clusters on one host, each with an osd.0 in its container, and B's mon.b, whose
    mounts say nothing (its cgroup does)."""
    host = FakeHost(tmp_path / "host")
    host.mount("/sys/fs/cgroup", "cgroup2", "rw")
    argv = ["/usr/bin/ceph-osd", "-n", "osd.0", "-f", "--setuser", "ceph", "--default-log-to-file=false"]
    for pid, cluster in ((100, A), (200, B)):
        mounts = FakeHost.bind_mount(2, f"/var/lib/ceph/{cluster}/osd.0", "/var/lib/ceph/osd/ceph-0")
        mounts += FakeHost.bind_mount(3, f"/var/run/ceph/{cluster}", "/var/run/ceph")
        unit = f"0::/system.slice/system-ceph\\x2d{cluster}.slice/ceph-{cluster}@osd.0.service/libpod-payload-{pid}\n"
        host.process(pid, "ceph-osd", argv, root=f"../../containers/{pid}", mountinfo=mounts, cgroup=unit)
        host.write(f"containers/{pid}/etc/ceph/ceph.conf", "")  # cephadm's minimal conf: not read (mounts win)
    unit = f"0::/system.slice/system-ceph\\x2d{B}.slice/ceph-{B}@mon.b.service/libpod-payload-300\n"
    host.process(300, "ceph-mon", ["/usr/bin/ceph-mon", "-n", "mon.b", "-f"], root="../../containers/300", cgroup=unit)
    return host


def test_cephadm_two_clusters_on_one_host(tmp_path: Path) -> None:
    host = cephadm_host(tmp_path)
    fake = FakeAsok(host)
    text = make(host, fake).render()
    assert daemons_by_cluster(text) == {f"osd.0@{A}": "node1", f"osd.0@{B}": "node1", f"mon.b@{B}": "node1"}
    assert gauge(text, "exporter_daemons_unknown_cluster") == 0
    assert not [c for c in fake.calls if c[1].get("var") == "fsid"], "the layout told: no socket asked"
    only_b = make(host, fake, cluster_fsid=B).render()
    assert daemons_by_cluster(only_b) == {f"osd.0@{B}": "node1", f"mon.b@{B}": "node1"}
    assert gauge(only_b, "exporter_daemons") == 2


def conf_host(tmp_path: Path) -> tuple[FakeHost, FakeAsok]:
    """Two labs on one machine: mon.a and osd.0 each, every daemon started with -c <lab>/ceph.conf,
    admin sockets by the same names in <lab>/run. Each socket answers `config get fsid` for its lab."""
    host = FakeHost(tmp_path / "host")
    host.mount("/sys/fs/cgroup", "cgroup2", "rw")
    fake = FakeAsok(host)
    for lab, cluster, base in (("/labA", A, 10), ("/labB", B, 20)):
        host.write(f"{lab}/ceph.conf", f"[global]\n\tfsid = {cluster}\n\trun dir = {lab}/run\n")
        conf = f"{lab}/ceph.conf"
        host.process(base, "ceph-mon", ["ceph-mon", "-f", "-c", conf, "-i", "a"], start=base)
        host.process(base + 1, "ceph-osd", ["ceph-osd", "-f", "-c", conf, "-i", "0"], start=base + 1)
        for pid, name in ((base, "mon.a"), (base + 1, "osd.0")):
            sock = f"{lab}/run/ceph-{name}.asok"
            host.write(sock, "")
            fake.owners[sock] = pid
            fake.replies[(sock, "config get fsid")] = {"fsid": cluster}
    return host, fake


def test_plain_conf_two_labs_each_exporter_reports_its_own(tmp_path: Path) -> None:
    host, fake = conf_host(tmp_path)
    for lab, cluster, other in (("/labA", A, B), ("/labB", B, A)):
        text = make(host, fake, asok_dirs=(lab + "/run",), cluster_fsid=cluster).render()
        assert daemons_by_cluster(text) == {f"mon.a@{cluster}": "node1", f"osd.0@{cluster}": "node1"}
        assert gauge(text, "exporter_daemons") == 2
        assert gauge(text, "exporter_daemons_unknown_cluster") == 0
        assert other not in text
    # The other lab's daemons found a socket of their name in this lab's run dir; its listener is
    # another process, so they were told apart by their conf, not by a wrong answer.
    c = make(host, fake, asok_dirs=("/labA/run",))
    sources = {(d.pid, c.clusters.find(d, d.pid).source) for d, _ in c.scanner.scan(c.trusted, None, False)}
    assert sources == {(10, "asok"), (11, "asok"), (20, "conf"), (21, "conf")}
    both = c.render()
    assert daemons_by_cluster(both) == {f"{d}@{f}": "node1" for d in ("mon.a", "osd.0") for f in (A, B)}


def test_fsid_from_argv_comes_first(tmp_path: Path) -> None:
    host, fake = conf_host(tmp_path)
    host.process(30, "ceph-osd", ["ceph-osd", "--fsid=" + C.upper(), "--id", "7", "-c", "/labA/ceph.conf"])
    text = make(host, fake, cluster_fsid=C).render()
    assert daemons_by_cluster(text) == {f"osd.7@{C}": "node1"}


def test_unknown_cluster_is_an_empty_label_counted_and_left_out_under_the_flag(tmp_path: Path) -> None:
    host, fake = conf_host(tmp_path)
    host.process(40, "radosgw", ["radosgw", "-f", "-n", "client.rgw.z"])  # no conf, no socket
    text = make(host, fake).render()
    assert daemons_by_cluster(text)["rgw.z@"] == "node1"
    assert gauge(text, "exporter_daemons_unknown_cluster") == 1
    filtered = make(host, fake, cluster_fsid=A).render()
    assert "rgw.z" not in filtered
    assert gauge(filtered, "exporter_daemons_unknown_cluster") == 1


def test_an_unknown_fsid_is_asked_again_after_a_minute(tmp_path: Path) -> None:
    host, fake = conf_host(tmp_path)
    host.process(40, "radosgw", ["radosgw", "-f", "-n", "client.rgw.z"], start=40)
    clock = Clock()
    c = make(host, fake, clock)
    assert "rgw.z@" in daemons_by_cluster(c.render())
    host.write("/etc/ceph/ceph.conf", f"[global]\nfsid = {C}\n")
    clock.now += 30
    assert "rgw.z@" in daemons_by_cluster(c.render()), "not asked again yet"
    clock.now += 31
    assert f"rgw.z@{C}" in daemons_by_cluster(c.render())


def test_cluster_fsid_option() -> None:
    args = cli.parser().parse_args(["--cluster-fsid", A.upper()])
    assert args.cluster_fsid == A
    assert cli.parser().parse_args([]).cluster_fsid is None


@pytest.mark.parametrize("bad", ["not-a-uuid", A[:-1], ""])
def test_a_bad_cluster_fsid_is_one_line_and_exit_2(bad: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "perfwatch_host_exporter", "--cluster-fsid", bad],
        env=ENV_FOR_CLI,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "--cluster-fsid" in proc.stderr and "UUID" in proc.stderr, proc.stderr
