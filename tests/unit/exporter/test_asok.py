"""The admin socket client against a real AF_UNIX server speaking Ceph's protocol."""

import json
import os
import socket
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from perfwatch.common.daemon_counters.counters import PERF_DUMP
from perfwatch_host_exporter import asok
from perfwatch_host_exporter.identity import identify


@contextmanager
def server(bind_path: str, reply: bytes | None, hold: float = 0.0) -> Iterator[list[bytes]]:
    """Serves one connection: reads the command up to its NUL, then answers `reply` with Ceph's 4-byte
    big-endian length (None: answers nothing). Yields the list of commands received."""
    received: list[bytes] = []
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(bind_path)
    listener.listen(1)

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            data = b""
            while not data.endswith(b"\0"):
                chunk = conn.recv(4096)
                if not chunk:
                    break
                data += chunk
            received.append(data)
            if reply is None:
                time.sleep(hold)
                return
            conn.sendall(struct.pack(">I", len(reply)))
            for i in range(0, len(reply), 7):  # dribble it out: the client must read until it has it all
                conn.sendall(reply[i : i + 7])

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield received
    finally:
        thread.join(timeout=5)
        listener.close()


def test_command_and_reply(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # bind a short relative name: tmp paths can pass sun_path's 108 bytes
    with server("s.asok", b'{"osd_data":"/var/lib/ceph/osd/ceph-0"}') as received:
        reply = asok.call(str(tmp_path / "s.asok"), asok.config_get("osd_data"), 2.0)
    assert reply == {"osd_data": "/var/lib/ceph/osd/ceph-0"}
    assert received[0].endswith(b"\0")
    assert json.loads(received[0][:-1]) == {"prefix": "config get", "var": "osd_data", "format": "json"}


def test_a_path_longer_than_sun_path_still_connects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    path = str(deep / "ceph-client.rgw.a-long-name.asok")
    assert len(path) > 108
    with server("ceph-client.rgw.a-long-name.asok", b"{}"):
        assert asok.call(path, PERF_DUMP, 2.0) == {}


def test_an_error_reply_raises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    pacific = b"ERROR: (22) Invalid argument\nunknown command prefix nope\n"
    with server("s.asok", pacific), pytest.raises(asok.AsokError, match="unknown command prefix"):
        asok.call(str(tmp_path / "s.asok"), {"prefix": "nope"}, 2.0)


def test_a_silent_daemon_times_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with server("s.asok", None, hold=1.5):
        started = time.monotonic()
        with pytest.raises(asok.AsokTimeout, match="timed out"):
            asok.call(str(tmp_path / "s.asok"), PERF_DUMP, 0.3)
        assert time.monotonic() - started < 1.4


def test_no_socket_is_an_asok_error(tmp_path: Path) -> None:
    with pytest.raises(asok.AsokError):
        asok.call(str(tmp_path / "none.asok"), PERF_DUMP, 1.0)


def test_socket_candidates_in_order() -> None:
    ident = identify("rgw", ["radosgw", "-n", "client.rgw.x", "--cluster", "lab"], 5)
    assert ident is not None
    assert asok.candidates(ident, ["/srv/run"]) == [
        ("daemon", "/var/run/ceph/lab-client.rgw.x.asok"),
        ("host", "/srv/run/lab-client.rgw.x.asok"),
    ]
    ident = identify("osd", ["ceph-osd", "-i", "1", "--admin-socket", "/x/$name.sock"], 5)
    assert ident is not None
    assert asok.candidates(ident, [])[0] == ("daemon", "/x/osd.1.sock")


def test_os_path_is_available() -> None:
    assert hasattr(os, "O_PATH"), "the long-path connect needs O_PATH (Linux)"


@pytest.mark.root
def test_a_stale_socket_file_does_not_hide_a_live_one(tmp_path: Path) -> None:
    """A dead daemon's socket at Ceph's default path; the live one in --asok-dir answers."""
    from perfwatch_host_exporter.discovery import Daemon
    from perfwatch_host_exporter.fsroot import Root
    from perfwatch_host_exporter.sockets import DaemonSockets

    pid = os.getpid()  # the test's server thread listens: the socket is this process's
    default_dir = tmp_path / "var" / "run" / "ceph"
    default_dir.mkdir(parents=True)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(default_dir / "ceph-osd.0.asok"))
    stale.close()  # the file stays, nobody listens: connect is refused
    (tmp_path / "proc" / str(pid)).mkdir(parents=True)
    (tmp_path / "proc" / str(pid) / "root").symlink_to(tmp_path)
    live_dir = tmp_path / "lab-run"
    live_dir.mkdir()
    ident = identify("osd", ["ceph-osd", "-i", "0"], pid)
    assert ident is not None
    sockets = DaemonSockets(Root(str(tmp_path)), asok.call, ["/lab-run"], 2.0, lambda reason, message: None)
    with server(str(live_dir / "ceph-osd.0.asok"), b'{"osd_data": "/srv/osd0"}'):
        assert len(sockets.paths(Daemon(pid, ident))) == 2
        assert sockets.ask(Daemon(pid, ident), asok.config_get("osd_data")) == {"osd_data": "/srv/osd0"}


def test_a_socket_of_another_process_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two clusters' osd.0 on one host: the socket named ceph-osd.0.asok in --asok-dir may be the other
    one's. The listener's PID (SO_PEERCRED) must be the daemon's."""
    monkeypatch.chdir(tmp_path)
    me = asok.Listener(os.getpid(), frozenset({os.getuid()}))
    with server("s.asok", b'{"fsid": "x"}'):
        assert asok.call(str(tmp_path / "s.asok"), asok.config_get("fsid"), 2.0, me) == {"fsid": "x"}
    with server("t.asok", None), pytest.raises(asok.AsokError, match="belongs to pid"):
        asok.call(str(tmp_path / "t.asok"), asok.config_get("fsid"), 2.0, me._replace(pid=os.getpid() + 100000))


LISTEN_AS_NOBODY = """
import socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(1)
print("listening", flush=True)
conn, _ = s.accept()
data = b""
while not data.endswith(b"\\0"):
    chunk = conn.recv(4096)
    if not chunk:
        break
    data += chunk
reply = b'{"fsid": "from-nobody"}'
conn.sendall(struct.pack(">I", len(reply)) + reply)
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to start a process as another user")
def test_a_socket_another_user_listens_on_is_never_sent_anything(tmp_path: Path) -> None:
    """A local user's process listening at a daemon's socket path (or answering as it with pid 0 from
    another PID namespace): its uid (SO_PEERCRED) is not trusted, so no command goes out and the error
    says so; with its uid trusted, the same socket is asked."""
    import shutil
    import subprocess
    import sys
    import tempfile

    nobody = 65534
    shared = tempfile.mkdtemp(prefix="perfwatch-asok-")  # tmp_path's parents are root's alone
    os.chmod(shared, 0o777)
    path = os.path.join(shared, "ceph-osd.0.asok")
    for trusted, expect_reply in ((frozenset({0}), False), (frozenset({0, nobody}), True)):
        if os.path.exists(path):
            os.unlink(path)
        child = subprocess.Popen(
            [sys.executable, "-c", LISTEN_AS_NOBODY, path], user=nobody, stdout=subprocess.PIPE, text=True
        )
        try:
            assert child.stdout is not None and child.stdout.readline().strip() == "listening"
            expected = asok.Listener(child.pid, trusted)
            if expect_reply:
                assert asok.call(path, asok.config_get("fsid"), 2.0, expected) == {"fsid": "from-nobody"}
            else:
                with pytest.raises(asok.UntrustedSocket, match="uid 65534"):
                    asok.call(path, asok.config_get("fsid"), 2.0, expected)
        finally:
            child.kill()
            child.wait()
    shutil.rmtree(shared)
