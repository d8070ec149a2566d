"""The exporter's daemon-counter collection against what a hostile local user, or an unlucky host, can put
behind a daemon's admin socket path, with real AF_UNIX sockets, FIFOs and files in temp dirs. What the review
that wrote them found: docs/decisions/adversarial-reviews.md."""

import json
import logging
import os
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from perfwatch.common.daemon_counters.counters import PERF_DUMP
from perfwatch.common.daemon_counters.fetch_reasons import REASON_DECODE
from perfwatch_host_exporter import asok, daemon_counters
from perfwatch_host_exporter.app import make_app
from perfwatch_host_exporter.collection_loop import CollectionLoop
from perfwatch_host_exporter.discovery import Daemon
from perfwatch_host_exporter.fsroot import Root
from perfwatch_host_exporter.identity import identify
from perfwatch_host_exporter.sockets import DaemonSockets
from tests.unit.exporter.test_collector import FSID, build, collector, value, values

ME = asok.Listener(os.getpid(), frozenset({os.getuid()}))  # the test's server threads listen: this process


def read_command(conn: socket.socket) -> bytes:
    data = b""
    while not data.endswith(b"\0"):
        chunk = conn.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


@contextmanager
def serving(path: str, handle: Callable[[socket.socket], None]) -> Iterator[None]:
    """Listens at `path`; each connection is handed to `handle` in its own thread (closed after)."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    stop = threading.Event()

    def one(conn: socket.socket) -> None:
        with conn, suppress(OSError):
            handle(conn)

    def loop() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=one, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        thread.join(2)


def answering(raw: bytes, pause: float = 0.0, step: int = 0) -> Callable[[socket.socket], None]:
    """Reads the command, then sends `raw` as it is (a length prefix included or not), `step` bytes at a
    time with `pause` seconds between (0: at once)."""

    def handle(conn: socket.socket) -> None:
        read_command(conn)
        if not step:
            conn.sendall(raw)
            return
        for i in range(0, len(raw), step):
            conn.sendall(raw[i : i + step])
            time.sleep(pause)

    return handle


def framed(body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + body


def timed(action: Callable[[], Any]) -> tuple[float, BaseException | None, Any]:
    started = time.monotonic()
    try:
        got = action()
    except BaseException as exc:  # handed to the test
        return time.monotonic() - started, exc, None
    return time.monotonic() - started, None, got


# ----- the client against hostile replies (robust) ------------------------------------------------------


def test_slowloris_byte_by_byte_is_cut_at_the_timeout(short_dir: Path) -> None:
    path = str(short_dir / "s.asok")
    body = json.dumps({"osd": {"x": 1}}).encode() * 50
    with serving(path, answering(framed(body), pause=0.05, step=1)):
        took, exc, _ = timed(lambda: asok.call(path, PERF_DUMP, 0.5, ME))
    assert isinstance(exc, asok.AsokTimeout)
    assert took < 1.0, "the timeout bounds the whole reply, not each recv"


def test_a_length_prefix_that_lies_high_and_a_close_mid_reply(short_dir: Path) -> None:
    path = str(short_dir / "s.asok")
    with serving(path, answering(struct.pack(">I", 1000) + b'{"a": 1}')):
        took, exc, _ = timed(lambda: asok.call(path, PERF_DUMP, 2.0, ME))
    assert isinstance(exc, asok.AsokError) and "closed after 8 of 1000" in str(exc)
    assert took < 1.0


def test_a_close_inside_the_length_prefix(short_dir: Path) -> None:
    path = str(short_dir / "s.asok")
    with serving(path, answering(b"\x00\x00")):
        _, exc, _ = timed(lambda: asok.call(path, PERF_DUMP, 2.0, ME))
    assert isinstance(exc, asok.AsokError) and "closed after 2 of 4" in str(exc)


def test_a_gigantic_length_is_refused_before_any_body_is_read(short_dir: Path) -> None:
    path = str(short_dir / "s.asok")

    def huge(conn: socket.socket) -> None:
        read_command(conn)
        conn.sendall(struct.pack(">I", 0xFFFFFFFF))
        time.sleep(2)  # and never the body

    with serving(path, huge):
        took, exc, _ = timed(lambda: asok.call(path, PERF_DUMP, 2.0, ME))
    assert isinstance(exc, asok.AsokError) and "too large" in str(exc)
    assert took < 0.5


def test_a_length_prefix_that_lies_low_reads_only_that_much(short_dir: Path) -> None:
    path = str(short_dir / "s.asok")
    with serving(path, answering(struct.pack(">I", 2) + b"{}" + b"x" * 100000)):
        assert asok.call(path, PERF_DUMP, 2.0, ME) == {}


@pytest.mark.parametrize("body", [b"", b"\xff\xfe garbage", b'{"a": ', b"ERROR: (22) nope"])
def test_garbage_replies_are_asok_errors(short_dir: Path, body: bytes) -> None:
    path = str(short_dir / "s.asok")
    with serving(path, answering(framed(body))):
        _, exc, _ = timed(lambda: asok.call(path, PERF_DUMP, 2.0, ME))
    assert isinstance(exc, asok.AsokError), repr(exc)


def test_not_a_socket_at_the_path_fails_at_once_without_blocking(short_dir: Path) -> None:
    fifo = short_dir / "fifo.asok"
    os.mkfifo(fifo)
    regular = short_dir / "file.asok"
    regular.write_text("{}")
    directory = short_dir / "dir.asok"
    directory.mkdir()
    link = short_dir / "link.asok"
    link.symlink_to(fifo)
    loop = short_dir / "loop.asok"
    loop.symlink_to(loop)
    for path in (fifo, regular, directory, link, loop):
        took, exc, _ = timed(lambda p=path: asok.call(str(p), PERF_DUMP, 2.0, ME))
        assert isinstance(exc, asok.AsokError), (path, exc)
        assert took < 0.5, path
    # the long-path way in (O_PATH) must not block on a FIFO either
    deep = short_dir / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    os.mkfifo(deep / "ceph-osd.0.asok")
    took, exc, _ = timed(lambda: asok.call(str(deep / "ceph-osd.0.asok"), PERF_DUMP, 2.0, ME))
    assert isinstance(exc, asok.AsokError) and took < 0.5


def test_a_listener_of_another_process_is_never_sent_anything(short_dir: Path) -> None:
    """The daemon restarted between discovery and read (a new PID listens): refused before any command."""
    path = str(short_dir / "s.asok")
    received: list[bytes] = []

    def record(conn: socket.socket) -> None:
        conn.settimeout(1.0)
        with suppress(OSError):
            received.append(conn.recv(4096))

    with serving(path, record):
        _, exc, _ = timed(lambda: asok.call(path, PERF_DUMP, 2.0, ME._replace(pid=os.getpid() + 1)))
        time.sleep(0.2)
    assert isinstance(exc, asok.AsokError) and "belongs to pid" in str(exc)
    assert received in ([], [b""]), "a command went to a process that is not the daemon"


# ----- replies that are no JSON --------------------------------------------------------------------


def test_a_deeply_nested_reply_is_an_asok_error_not_a_recursion_error(short_dir: Path) -> None:
    """A reply nested deeper than the interpreter's recursion limit (a few hundred kilobytes of "[", well
    under MAX_REPLY) is an AsokDecode, not a RecursionError, which would pass every caller's (AsokError,
    OSError) and drop the daemon's every sample (CPU, threads, RSS, cgroup, devices) as a "proc" error."""
    path = str(short_dir / "s.asok")
    with serving(path, answering(framed(b"[" * 200000))):
        _, exc, _ = timed(lambda: asok.call(path, PERF_DUMP, 2.0, ME))
    assert isinstance(exc, asok.AsokError), f"got {exc!r}"


def test_a_reply_that_is_not_json_is_counted_as_decode_as_the_module_does(short_dir: Path) -> None:
    """A reply that is not JSON is fetch reason "decode", as the module counts it (mgr_adapter.tell_osd): one
    reason for the same failure, whichever source reads it."""
    path = str(short_dir / "s.asok")
    with serving(path, answering(framed(b"<html>not json</html>"))):
        _, exc, _ = timed(lambda: daemon_counters.read(lambda command: asok.call(path, command, 2.0, ME), "osd.0"))
    assert isinstance(exc, daemon_counters.Failure)
    assert exc.reason == REASON_DECODE, f"counted as {exc.reason!r}"


def test_a_deeply_nested_reply_to_config_get_keeps_the_osds_other_samples(tmp_path: Path) -> None:
    """The collection-level effect of the one above: osd.0 answering `config get osd_data` with a deeply
    nested reply loses its data directory, not its CPU, threads, RSS, cgroup and counters."""
    host, fake = build(tmp_path)

    def deep(path: str, command: dict[str, Any], timeout: float, expected: asok.Listener | None) -> Any:
        if path.endswith("/ceph-osd.0.asok") and command.get("var") == "osd_data":
            fake(path, command, timeout, expected)  # the listener checks
            return asok.decode_reply(b"[" * 200000)  # what asok.call does with such a reply
        return fake(path, command, timeout, expected)

    c = collector(host, fake, daemon_counters=True)
    c.sockets.call = deep
    got = values(c.render())
    osd = {"ceph_daemon": "osd.0", "cluster": FSID, "hostname": "node1"}
    assert ("ceph_perfwatch_daemon_threads", frozenset(osd.items())) in got, "osd.0's process samples vanished"


# ----- a hung daemon behind two candidate paths -------------------------------------------------------


def hung(conn: socket.socket) -> None:
    read_command(conn)
    time.sleep(3)


def test_a_hung_daemon_found_at_two_paths_costs_one_timeout_not_two(short_dir: Path) -> None:
    """With --asok-dir /var/run/ceph (a cephadm host's setup) a packaged daemon's socket is one file found
    twice: as /proc/PID/root/var/run/ceph/ceph-osd.0.asok (its own root) and as the host's
    /var/run/ceph/ceph-osd.0.asok. It is one candidate: a hung daemon costs each command one timeout, not
    two (asked at both)."""
    pid = os.getpid()
    run = short_dir / "var" / "run" / "ceph"
    run.mkdir(parents=True)
    (short_dir / "proc" / str(pid)).mkdir(parents=True)
    (short_dir / "proc" / str(pid) / "root").symlink_to(short_dir)
    ident = identify("osd", ["ceph-osd", "-i", "0"], pid)
    asked: list[str] = []

    def call(path: str, command: dict[str, Any], timeout: float, expected: asok.Listener | None) -> Any:
        asked.append(path)
        return asok.call(path, command, timeout, expected)

    sockets = DaemonSockets(Root(str(short_dir)), call, ["/var/run/ceph"], 0.4, lambda *a, **k: None)
    sockets.trusted_uids = frozenset({os.getuid()})
    daemon = Daemon(pid, ident)
    with serving(str(run / "ceph-osd.0.asok"), hung):
        assert len(sockets.paths(daemon)) == 1  # the same socket found twice: one candidate
        _, exc, _ = timed(lambda: sockets.ask(daemon, PERF_DUMP))
    assert isinstance(exc, asok.AsokTimeout)
    assert len(asked) == 1, f"a hung daemon was asked {len(asked)} times for one command"


# ----- many OSDs hanging: the collection and /metrics --------------------------------------------------


def add_osds(host: Any, fake: Any, count: int) -> None:
    for n in range(10, 10 + count):
        host.process(1000 + n, "ceph-osd", ["ceph-osd", "-f", "-i", str(n)], threads=7)
        host.write(f"/var/run/ceph/ceph-osd.{n}.asok", "")


def test_metrics_answers_at_once_while_a_collection_is_stuck_on_hung_osds(tmp_path: Path) -> None:
    host, fake = build(tmp_path)
    add_osds(host, fake, 5)
    release = threading.Event()

    def stuck(path: str, command: dict[str, Any], timeout: float, expected: asok.Listener | None) -> Any:
        if "ceph-osd.1" in path and command["prefix"] == "perf dump":
            release.wait(5)
            raise asok.AsokTimeout("timed out")
        return fake(path, command, timeout, expected)

    c = collector(host, fake, daemon_counters=True)
    loop = CollectionLoop(c.collect, "node1", 15.0, logging.getLogger("t"))
    loop.run_once()  # a first collection, with every OSD answering what the fake has
    c.sockets.call = stuck
    app = make_app(loop.parts, loop.health, "node1", lambda: {})
    worker = threading.Thread(target=loop.run_once, daemon=True)
    worker.start()
    try:
        time.sleep(0.2)
        assert worker.is_alive()
        took, exc, response = timed(lambda: app("/metrics", False).content())
        assert exc is None and took < 3, "/metrics waited for the stuck collection (held 5 s)"
        assert b"ceph_perfwatch_exporter_collections_total" in response
        list(text_string_to_metric_families(response.decode()))
    finally:
        release.set()
        worker.join(10)


def test_hung_osds_are_asked_side_by_side_and_once_a_collection(tmp_path: Path) -> None:
    """A hung OSD is asked once a collection (what follows its timeout is not sent), and six hung OSDs are
    asked side by side: each ask waits at a barrier of six, which asks made in turn never pass. Asked in
    turn, N hung OSDs would hold every other sample back by N timeouts per command."""
    host, fake = build(tmp_path)
    add_osds(host, fake, 6)
    waits: list[str] = []
    barrier = threading.Barrier(6, timeout=20)
    met: list[bool] = []

    def hang(path: str, command: dict[str, Any], t: float, expected: asok.Listener | None) -> Any:
        if "/ceph-osd.1" in path and "/ceph-osd.1.asok" not in path:  # osd.10..15 hang; the fixture's osd.1 not
            waits.append(command["prefix"])
            try:
                barrier.wait()
                met.append(True)
            except threading.BrokenBarrierError:
                met.append(False)
            raise asok.AsokTimeout("timed out")
        return fake(path, command, t, expected)

    c = collector(host, fake, daemon_counters=True, asok_timeout=0.02)
    c.sockets.call = hang
    got = values(c.render())
    assert waits == ["config get"] * 6, waits  # its fsid; its osd_data and perf dump were not sent
    assert met == [True] * 6, "the hung OSDs were not asked side by side"
    for n in range(10, 16):
        osd = {"ceph_daemon": f"osd.{n}", "cluster": FSID, "hostname": "node1"}
        assert value(got, "daemon_up", **osd) == 0
        assert value(got, "fetch_errors_total", reason="timeout", **osd) == 1
        assert value(got, "daemon_threads", **osd) == 7, "its process samples stay"
    osd0 = {"ceph_daemon": "osd.0", "cluster": FSID, "hostname": "node1"}
    assert value(got, "daemon_up", **osd0) == 1, "the answering OSD is still read"
    waits.clear()
    met.clear()
    barrier.reset()
    got = values(c.render())
    assert waits == ["perf dump"] * 6, waits  # later: perf dump only (fsid from ceph.conf, osd_data cached a minute)
    assert met == [True] * 6, "the hung OSDs' perf dumps were not asked side by side"
    assert value(got, "fetch_errors_total", reason="timeout", ceph_daemon="osd.12", cluster=FSID, hostname="node1") == 2


def test_what_a_collection_asked_ahead_is_not_asked_again(tmp_path: Path) -> None:
    """Each command goes to a daemon's socket once a collection: the answers asked side by side are the
    ones the collection reads (config get osd_data only when its device map is due, perf dump each time)."""
    host, fake = build(tmp_path)
    add_osds(host, fake, 3)
    asked: list[tuple[str, str]] = []

    def count(path: str, command: dict[str, Any], t: float, expected: asok.Listener | None) -> Any:
        asked.append((path.rsplit("/", 1)[-1], " ".join(str(command[k]) for k in ("prefix", "var") if k in command)))
        return fake(path, command, t, expected)

    c = collector(host, fake, daemon_counters=True)
    c.sockets.call = count
    first = values(c.render())
    assert len(asked) == len(set(asked)), sorted(asked)
    assert ("ceph-osd.0.asok", "perf dump") in asked and ("ceph-osd.0.asok", "config get osd_data") in asked
    assert value(first, "daemon_up", ceph_daemon="osd.0", cluster=FSID, hostname="node1") == 1
    asked.clear()
    second = values(c.render())
    assert len(asked) == len(set(asked)), sorted(asked)
    assert ("ceph-osd.0.asok", "perf dump") in asked
    assert not [a for a in asked if a[1] == "config get osd_data"], "the device map is cached for a minute"
    assert value(second, "daemon_up", ceph_daemon="osd.0", cluster=FSID, hostname="node1") == 1


# ----- odd daemon ids --------------------------------------------------------------------------------


@pytest.mark.parametrize("osd_id", ['0"} 1\nceph_perfwatch_fake{x="', "a\\b", "../../../tmp/x", "5 6"])
def test_an_odd_osd_id_is_escaped_and_its_socket_stays_in_the_daemons_root(tmp_path: Path, osd_id: str) -> None:
    host, fake = build(tmp_path)
    host.process(700, "ceph-osd", ["ceph-osd", "-f", "-i", osd_id], threads=3)
    c = collector(host, fake, daemon_counters=True)
    text = c.render()
    got = values(text)  # parses: the label is escaped
    osd = {"ceph_daemon": "osd." + osd_id, "cluster": FSID, "hostname": "node1"}
    assert value(got, "daemon_threads", **osd) == 3
    assert value(got, "daemon_up", **osd) == 0
    assert not any(name == "ceph_perfwatch_fake" for name, _ in got)
    for path, _command in fake.calls:
        assert path.startswith("/"), path  # FakeAsok raises if a path left the fake host


# ----- what is made of a trusted RGW's reply ---------------------------------------------------


def test_an_rgw_counter_too_big_for_a_float_keeps_the_rgws_other_samples(tmp_path: Path) -> None:
    """An objecter counter of 10**400 (valid JSON, but no float holds it) is no count, and every other sample
    of the RGW (CPU, threads, RSS, cgroup) is kept."""
    host, fake = build(tmp_path)
    fake.replies[("/lab/run/ceph-client.rgw.x.asok", "perf dump")] = {"objecter": {"osdop_call": 10**400}}
    got = values(collector(host, fake).render())
    rgw = {"ceph_daemon": "rgw.x", "cluster": FSID, "hostname": "node1"}
    assert (("ceph_perfwatch_daemon_threads", frozenset(rgw.items()))) in got, "rgw.x's process samples vanished"


def proc_errors(got: dict[Any, float]) -> float:
    return value(got, "exporter_collection_errors_total", hostname="node1", source="proc")


def test_two_trusted_processes_claiming_osd_0_the_sockets_own_listener_wins(tmp_path: Path) -> None:
    """An unlucky host, not a hostile user (both run as root): a second `ceph-osd -i 0` of the same cluster
    -- a one-off `ceph-osd -i 0 --flush-journal`, a leftover container -- with a lower PID than the real
    osd.0. The one that listens on osd.0's admin socket is kept. Once, the first by PID was: osd.0's CPU,
    threads and RSS were the one-off's, and its counters failed ("belongs to pid 100"), daemon_up 0 for a
    healthy OSD."""
    host, fake = build(tmp_path)
    host.process(50, "ceph-osd", ["ceph-osd", "-i", "0", "--flush-journal"], threads=1)
    fake.owners["/var/run/ceph/ceph-osd.0.asok"] = 100  # the real osd.0 listens
    c = collector(host, fake, daemon_counters=True)
    got = values(c.render())
    osd = {"ceph_daemon": "osd.0", "cluster": FSID, "hostname": "node1"}
    assert value(got, "daemon_threads", **osd) == 60, "osd.0's samples are pid 50's"
    assert value(got, "daemon_up", **osd) == 1
    assert proc_errors(got) == proc_errors(values(collector(*build(tmp_path / "alone")).render())) + 1, "the one-off"


def test_of_two_claimants_neither_listening_the_first_by_pid_is_kept(tmp_path: Path) -> None:
    """No listener can be named (the socket gone, or its listener in another PID namespace): as before, the
    first by PID, the other left out and counted."""
    host, fake = build(tmp_path)
    host.process(50, "ceph-osd", ["ceph-osd", "-i", "0", "--flush-journal"], threads=1)
    got = values(collector(host, fake).render())
    osd = {"ceph_daemon": "osd.0", "cluster": FSID, "hostname": "node1"}
    assert value(got, "daemon_threads", **osd) == 1
    assert proc_errors(got) == proc_errors(values(collector(*build(tmp_path / "alone")).render())) + 1


def test_the_listener_of_a_socket_is_named_without_sending_anything(short_dir: Path) -> None:
    path = str(short_dir / "s.asok")
    received: list[bytes] = []

    def record(conn: socket.socket) -> None:
        conn.settimeout(1.0)
        with suppress(OSError):
            received.append(conn.recv(100))

    with serving(path, record):
        assert asok.listener(path, 2.0) == (os.getpid(), os.getuid())
    assert received in ([], [b""]), "nothing sent"
    with pytest.raises(asok.AsokError):
        asok.listener(str(short_dir / "none.asok"), 1.0)
