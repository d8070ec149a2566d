"""What a local user can try against the host exporter, on a fake host: a process of theirs calling itself
a daemon, a FIFO or /dev/zero where a config file should be, a symlink loop, a huge file, a socket of
theirs at a daemon's socket path. Each is refused, counted by reason, and never blocks a collection."""

import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from perfwatch_host_exporter import asok, discovery, fsroot, trust
from perfwatch_host_exporter.families import REFUSAL_REASONS
from perfwatch_host_exporter.fsroot import Refused, Root, StatResult
from tests.fixtures.exporter.fakehost import CEPH_UID, FakeHost
from tests.unit.exporter.test_collector import FSID, build, collector, value, values

USER = 1000  # an ordinary local user


def finishes(action: Callable[[], Any], seconds: float = 10.0) -> Any:
    """The result of action(), which must return (or raise) within `seconds`: a blocked read fails the test
    instead of hanging it."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = action()
        except BaseException as exc:  # handed to the test
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "blocked"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def refusing_root(base: Path) -> tuple[Root, list[tuple[str, str]]]:
    told: list[tuple[str, str]] = []
    return Root(str(base), on_refused=lambda reason, message: told.append((reason, message))), told


# ----- reading files --------------------------------------------------------------------------------


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "ceph.conf")  # nobody ever writes to it
    root, told = refusing_root(tmp_path)
    with pytest.raises(Refused) as info:
        finishes(lambda: root.read_text("/ceph.conf"))
    assert info.value.reason == fsroot.NOT_REGULAR and "a FIFO" in str(info.value)
    assert told == [(fsroot.NOT_REGULAR, "/ceph.conf: not a regular file (a FIFO)")]


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod needs root")
def test_dev_zero_is_refused_without_being_opened(tmp_path: Path) -> None:
    os.mknod(tmp_path / "zero", stat.S_IFCHR | 0o666, os.makedev(1, 5))  # /dev/zero: endless
    root, told = refusing_root(tmp_path)
    with pytest.raises(Refused) as info:
        finishes(lambda: root.read_bytes("/zero"))
    assert info.value.reason == fsroot.NOT_REGULAR and "character device" in str(info.value)
    assert [reason for reason, _ in told] == [fsroot.NOT_REGULAR]


def test_a_final_symlink_is_not_followed_by_a_read(tmp_path: Path) -> None:
    """Paths are resolved inside their view first (resolve()); a read never follows a link the kernel's
    way, which would leave the view (an absolute link in a container points into the host)."""
    (tmp_path / "link").symlink_to("/etc/passwd")
    root, _ = refusing_root(tmp_path)
    with pytest.raises(Refused):
        root.read_text("/link")


def test_a_symlink_loop_is_refused_and_counted(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    root, told = refusing_root(tmp_path)
    with pytest.raises(OSError):
        root.resolve("/a")
    assert [reason for reason, _ in told] == [fsroot.SYMLINK_LOOP]


def test_a_huge_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    with open(tmp_path / "huge.conf", "wb") as f:
        f.truncate(fsroot.READ_LIMIT * 1024)  # 1 GiB, sparse
    root, told = refusing_root(tmp_path)
    with pytest.raises(Refused) as info:
        root.read_text("/huge.conf")
    assert info.value.reason == fsroot.TOO_LARGE
    (tmp_path / "ok.conf").write_bytes(b"x" * 100)
    assert root.read_bytes("/ok.conf", limit=100) == b"x" * 100
    with pytest.raises(Refused):
        root.read_bytes("/ok.conf", limit=99)
    assert [reason for reason, _ in told] == [fsroot.TOO_LARGE, fsroot.TOO_LARGE]


def test_a_file_growing_past_the_limit_while_read_is_refused(tmp_path: Path) -> None:
    """/proc and /sys files report size 0 or 4096 whatever they hold: the cap is on what is read."""
    proc_like = Path("/proc/self/status")
    root, told = refusing_root(Path("/"))
    assert "Uid:" in root.read_text(str(proc_like))
    with pytest.raises(Refused):
        root.read_text(str(proc_like), limit=16)
    assert [reason for reason, _ in told] == [fsroot.TOO_LARGE]


def test_the_refusal_reasons_are_the_declared_ones() -> None:
    named = {fsroot.NOT_REGULAR, fsroot.TOO_LARGE, fsroot.SYMLINK_LOOP, discovery.UNTRUSTED_PROCESS}
    assert named | {asok.UNTRUSTED_SOCKET} == set(REFUSAL_REASONS)


# ----- whose processes are daemons ------------------------------------------------------------------


def test_root_ceph_the_cluster_dirs_owner_and_daemon_users_are_trusted(tmp_path: Path) -> None:
    host = FakeHost(tmp_path / "host")
    cluster_dir = host.path(f"var/lib/ceph/{FSID}")
    cluster_dir.mkdir(parents=True)
    host.path("var/lib/ceph/crash").mkdir()  # not a cluster dir
    host.stat.set(host.path("var/lib/ceph"), StatResult(stat.S_IFDIR | 0o755, 1, 0, 0))
    host.stat.set(cluster_dir, StatResult(stat.S_IFDIR | 0o755, 1, 0, 167))
    host.write("etc/passwd", host.read("etc/passwd") + "alice:x:1000:1000::/home/alice:/bin/bash\n")
    got, problems = trust.users(host.root(), [2000, "alice", "bob"])
    assert got.uids == {0, CEPH_UID, 167, 2000, 1000}
    assert problems == ["--daemon-user bob: no such user in /etc/passwd"]
    assert "167 (owner of a cluster directory in /var/lib/ceph)" in got.describe()
    assert got.allows([0, 0, 0, 0]) and got.allows([CEPH_UID] * 4)
    assert not got.allows([1001, 0, 0, 0]) and not got.allows([0, 0, 0, 1001]) and not got.allows([])
    # /var/lib/ceph writable by its group: anyone in it could make a "cluster dir", so none counts
    host.stat.set(host.path("var/lib/ceph"), StatResult(stat.S_IFDIR | 0o775, 1, 0, 0))
    assert 167 not in trust.users(host.root(), [])[0].uids


def test_status_and_user_parsers() -> None:
    assert trust.parse_status_uids("Name:\tceph-osd\nUid:\t167\t167\t167\t167\nGid:\t167\n") == (167, 167, 167, 167)
    with pytest.raises(ValueError):
        trust.parse_status_uids("Name:\tx\n")
    assert trust.parse_user("167") == 167 and trust.parse_user("ceph") == "ceph"
    for bad in ("", "a b", "-1", "x:y"):
        with pytest.raises(ValueError):
            trust.parse_user(bad)


def fake_daemon_of_a_user(host: FakeHost, pid: int, comm: str = "ceph-osd") -> None:
    """A local user's impostor: `exec -a ceph-osd python3 script.py --conf /tmp/fifo --id 99` as a local
    user, here with a comm that names a daemon too (a copy of a binary, or prctl) and a lower PID than
    the real osd.0; its command line is a FIFO, which a read would block on."""
    host.process(pid, comm, ["ceph-osd", "--conf", "/tmp/fifo", "--id", "0"], uid=USER, exe="/tmp/ceph-osd")
    host.path(f"proc/{pid}/cmdline").unlink()
    os.mkfifo(host.path(f"proc/{pid}/cmdline"))
    if not host.path("tmp/fifo").exists():
        os.mkfifo(host.path("tmp/fifo"))


def test_another_users_process_named_like_a_daemon_is_refused_and_never_read(tmp_path: Path) -> None:
    host, fake = build(tmp_path)
    host.path("tmp").mkdir()
    fake_daemon_of_a_user(host, 50)
    fake_daemon_of_a_user(host, 51, comm="python3")  # exec -a: only its exe (/tmp/ceph-osd) names a daemon
    host.process(52, "python3", ["ceph-osd", "-i", "0"], uid=USER, exe="/usr/bin/python3.11")  # argv alone
    c = collector(host, fake)
    got = values(finishes(c.render))
    osd = {"ceph_daemon": "osd.0", "cluster": FSID, "hostname": "node1"}
    assert value(got, "daemon_threads", **osd) == 60, "the real osd.0 (pid 100), not the fake one (pid 50)"
    assert value(got, "exporter_daemons", hostname="node1") == 3
    assert value(got, "exporter_refused_total", hostname="node1", reason="untrusted_process") == 2
    assert value(got, "exporter_collection_errors_total", hostname="node1", source="proc") == 1, "only pid 400's stat"
    # the fixture's broken osd.1 has a directory for its stat: the one other refusal
    assert value(got, "exporter_refused_total", hostname="node1", reason="not_regular_file") == 1
    for reason in set(REFUSAL_REASONS) - {"untrusted_process", "not_regular_file"}:
        assert value(got, "exporter_refused_total", hostname="node1", reason=reason) == 0, reason


def test_a_daemon_of_the_ceph_user_is_trusted_and_one_of_a_daemon_user_too(tmp_path: Path) -> None:
    host, fake = build(tmp_path)
    host.process(60, "ceph-mds", ["ceph-mds", "-i", "a"], uid=CEPH_UID)
    host.process(61, "ceph-mds", ["ceph-mds", "-i", "b"], uid=167)
    got = values(collector(host, fake).render())
    assert value(got, "exporter_daemons", hostname="node1") == 4, "mds.a yes, mds.b (uid 167) no"
    got = values(collector(host, fake, daemon_users=(167,)).render())
    assert value(got, "exporter_daemons", hostname="node1") == 5


def test_a_fifo_as_a_trusted_daemons_config_is_refused_and_the_collection_goes_on(tmp_path: Path) -> None:
    host, fake = build(tmp_path)
    host.path("etc/ceph/ceph.conf").unlink()
    os.mkfifo(host.path("etc/ceph/ceph.conf"))  # mon.a's and rgw.x's fsid come from it
    got = values(finishes(collector(host, fake).render))
    # mon.a's and rgw.x's conf, and the fixture's osd.1 with a directory for its stat
    assert value(got, "exporter_refused_total", hostname="node1", reason="not_regular_file") == 3
    assert value(got, "exporter_daemons_unknown_cluster", hostname="node1") == 2
    assert value(got, "daemon_threads", ceph_daemon="osd.0", cluster=FSID, hostname="node1") == 60


def test_a_socket_another_user_listens_on_is_refused_and_counted(tmp_path: Path) -> None:
    host, fake = build(tmp_path)
    fake.users["/lab/run/ceph-client.rgw.x.asok"] = USER  # a local user's listener at the RGW's socket path
    got = values(collector(host, fake).render())
    # refused twice: asked for the RGW's fsid (config get fsid), then for its counters (perf dump)
    assert value(got, "exporter_refused_total", hostname="node1", reason="untrusted_socket") == 2
    assert not any(name.endswith("rgw_objecter_ops_total") for name, _ in got), "nothing believed from it"
    assert not [call for call in fake.calls if call[0] == "/lab/run/ceph-client.rgw.x.asok"], "nothing sent to it"
