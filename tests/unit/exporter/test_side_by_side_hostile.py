"""A collection's admin-socket asks side by side (side_by_side.run_all, DaemonSockets.begin/prefetch/ask/end
and its per-collection "silent" memory, clusters.due, osd_map.due) against an unlucky host (hung daemons,
reused PIDs, a collection that raises, the thread limit) and a hostile unprivileged local user (hundreds of
fake daemons with real sockets). Time is never measured: asks are counted, barriers prove asks overlap, and
where time matters a fake clock moves as real time would (a hung ask costs one --asok-timeout; asks inside
one side_by_side.run_all overlap). What the review that wrote them found: docs/decisions/adversarial-reviews.md.
"""

import logging
import os
import shutil
import socket
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from perfwatch_host_exporter import asok, daemon_counters, side_by_side
from perfwatch_host_exporter.discovery import Daemon
from perfwatch_host_exporter.errors import ErrorCounter
from perfwatch_host_exporter.identity import identify
from perfwatch_host_exporter.sockets import DaemonSockets
from tests.fixtures.exporter.fakehost import FakeHost
from tests.unit.exporter.test_asok_hostile import framed, read_command, serving
from tests.unit.exporter.test_collector import FSID, Clock, FakeAsok, build, collector, value, values

T = 2.0  # the modelled --asok-timeout (the default): what one hung ask costs


def rel(host: FakeHost, path: str) -> str:
    """A socket path the collector asks, as a path of the fake host ("/var/run/ceph/ceph-osd.0.asok")."""
    return "/" + str(Path(os.path.realpath(path)).relative_to(os.path.realpath(host.base)))


def what(command: dict[str, Any]) -> str:
    return " ".join(str(command[k]) for k in ("prefix", "var") if k in command)


def watch_run_all(
    monkeypatch: pytest.MonkeyPatch, on_enter: Callable[[list[Any]], None], on_exit: Callable[[], None]
) -> None:
    """Calls on_enter(jobs)/on_exit() around each side_by_side.run_all the collector makes (it looks the
    function up on the module at each call)."""
    original = side_by_side.run_all

    def run_all(jobs: Any, *args: Any, **kwargs: Any) -> None:
        on_enter(list(jobs))
        try:
            original(jobs, *args, **kwargs)
        finally:
            on_exit()

    monkeypatch.setattr(side_by_side, "run_all", run_all)


def asked(fake: FakeAsok, command: str, path: str = "/var/run/ceph/ceph-osd.0.asok") -> int:
    """How often the fake was sent `command` ("perf dump", "config get osd_data") at `path`."""
    return len([1 for p, c in fake.calls if p == path and what(c) == command])


def hung_osds(host: FakeHost, numbers: range, first_pid: int, argv_extra: tuple[str, ...] = ()) -> set[str]:
    """OSDs whose admin sockets exist (asking them is up to the test's call); their socket paths."""
    paths = set()
    for n in numbers:
        host.process(first_pid + n, "ceph-osd", ["ceph-osd", "-f", "-i", str(n), *argv_extra], threads=7)
        path = f"/var/run/ceph/ceph-osd.{n}.asok"
        host.write(path, "")
        paths.add(path)
    return paths


class HungAsks:
    """A sockets.call for the collector: the sockets in `hung` time out, each ask recorded (path, what),
    the first `wave` asks meeting at a barrier of that many (broken, and so recorded, when they do not run
    together), with how many were in flight at most; the other sockets answer as the fake host's."""

    def __init__(self, host: FakeHost, fake: FakeAsok, hung: set[str], wave: int) -> None:
        self.host, self.fake, self.hung, self.wave = host, fake, hung, wave
        self.sent: list[tuple[str, str]] = []
        self.together = threading.Barrier(wave, timeout=10)
        self.peak = 0
        self._running = 0
        self._lock = threading.Lock()

    def __call__(self, path: str, command: dict[str, Any], timeout: float, expected: asok.Listener | None) -> Any:
        where = rel(self.host, path)
        if where not in self.hung:
            return self.fake(path, command, timeout, expected)
        with self._lock:
            self.sent.append((where, what(command)))
            self._running += 1
            self.peak = max(self.peak, self._running)
            first_wave = len(self.sent) <= self.wave
        try:
            if first_wave:
                with suppress(threading.BrokenBarrierError):  # broken: they did not overlap (tests assert)
                    self.together.wait()
        finally:
            with self._lock:
                self._running -= 1
        raise asok.AsokTimeout("timed out")


# ----- "due" is decided once, at the collection's start -------------------------------------------------


def test_hung_osds_whose_device_map_falls_due_mid_collection_are_asked_in_series(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An OSD's device map falls due while the phase-2 asks time out (a hung RGW makes them last one timeout;
    --daemon-counters off): `config get osd_data` is still never asked outside side_by_side, one hung OSD
    after another, for three minutes of collections every 15 s. Modelled on a fake clock: a hung ask costs T;
    the asks of one run_all overlap (T once for the lot); an ask outside run_all costs T on its own."""
    host, fake = build(tmp_path)
    hung = hung_osds(host, range(20, 23), 1000)
    hung.add("/lab/run/ceph-client.rgw.x.asok")  # the RGW hangs too
    clock = Clock()
    lock = threading.Lock()
    state = SimpleNamespace(inside=False, hung_inside=False)
    serial: list[tuple[float, str, str]] = []

    def enter(jobs: list[Any]) -> None:
        state.inside, state.hung_inside = True, False

    def leave() -> None:
        state.inside = False
        if state.hung_inside:
            clock.now += T  # the run_all's hung asks ran side by side: one timeout for them all

    def call(path: str, command: dict[str, Any], timeout: float, expected: asok.Listener | None) -> Any:
        where = rel(host, path)
        if where in hung:
            with lock:
                if state.inside:
                    state.hung_inside = True
                else:
                    serial.append((clock.now, where.rsplit("/", 1)[-1], what(command)))
                    clock.now += T  # alone: a timeout of its own
            raise asok.AsokTimeout("timed out")
        return fake(path, command, timeout, expected)

    watch_run_all(monkeypatch, enter, leave)
    c = collector(host, fake, clock, asok_timeout=T)
    c.sockets.call = call
    for k in range(13):  # three minutes of collections, every 15 s on the loop's fixed rate
        clock.now = max(clock.now, 1000.0 + 15 * k)
        c.collect()
    assert serial == [], f"asked one after another, a timeout each (clock, socket, command): {serial}"


def test_the_17th_hung_daemon_of_an_unknown_cluster_is_asked_in_series_a_minute_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Likewise for fsid lookups (clusters.py): of 17 hung OSDs whose cluster no source tells (a lookup is
    retried every minute), the 17th is in the second wave of the 16 workers and so falls due a timeout after
    the others; _select never asks it alone, in series. Modelled on a fake clock: the 16 first asks of a
    run_all meet at a barrier (they overlap), each ask ends T after it started; an ask outside run_all is
    counted."""
    host, fake = build(tmp_path)
    hung = set()
    for n in range(17):  # cluster "lost": no /etc/ceph/lost.conf, no cephadm traces: only the socket could tell
        host.process(2000 + n, "ceph-osd", ["ceph-osd", "-f", "--cluster", "lost", "-i", str(n)])
        host.write(f"/var/run/ceph/lost-osd.{n}.asok", "")
        hung.add(f"/var/run/ceph/lost-osd.{n}.asok")
    clock = Clock()
    lock = threading.Lock()
    state = SimpleNamespace(inside=False, started=0, wave=None)
    serial: list[tuple[float, str, str]] = []

    def enter(jobs: list[Any]) -> None:
        # the lookups (phase 1) of hung daemons: each sends `config get fsid`; the first 16 overlap
        lookups = [j for j in jobs if j.func.__name__ == "find" and j.args[0].ident.cluster == "lost"]
        state.inside, state.started = True, 0
        parties = min(side_by_side.ASK_WORKERS, len(lookups))
        state.wave = threading.Barrier(parties, timeout=10) if parties else None

    def leave() -> None:
        state.inside = False

    def call(path: str, command: dict[str, Any], timeout: float, expected: asok.Listener | None) -> Any:
        where = rel(host, path)
        if where not in hung:
            return fake(path, command, timeout, expected)
        with lock:
            began = clock.now
            state.started += 1
            wave = state.wave if state.inside and state.started <= side_by_side.ASK_WORKERS else None
            if not state.inside:
                serial.append((began, where.rsplit("/", 1)[-1], what(command)))
        if wave is not None:
            wave.wait()  # the first wave is all in flight before any of it ends
        with lock:
            clock.now = max(clock.now, began + T)
        raise asok.AsokTimeout("timed out")

    watch_run_all(monkeypatch, enter, leave)
    c = collector(host, fake, clock, asok_timeout=T)
    c.sockets.call = call
    for k in range(6):
        clock.now = max(clock.now, 1000.0 + 15 * k)
        c.collect()
    assert serial == [], f"asked one after another, a timeout each (clock, socket, command): {serial}"


# ----- a daemon that no longer accepts ------------------------------------------------------------------


def test_a_hung_daemon_whose_listen_backlog_is_full_is_counted_as_a_timeout(short_dir: Path) -> None:
    """A Ceph daemon whose admin-socket thread is stuck stops accepting; the connections the exporter made
    (and closed after its timeout) fill the listen backlog (Ceph's is 5), and a non-blocking connect then
    fails at once with EAGAIN. That is a timeout, reason="timeout" as for any hung daemon, not an error."""
    path = str(short_dir / "s.asok")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(0)  # never accepted
    earlier = []
    try:
        for _ in range(3):  # earlier collections' connections, closed by the exporter, still queued
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.setblocking(False)
            with suppress(BlockingIOError):
                s.connect(path)
            earlier.append(s)
        for s in earlier:
            s.close()
        me = asok.Listener(os.getpid(), frozenset({os.getuid()}))
        with pytest.raises(daemon_counters.Failure) as failed:
            daemon_counters.read(lambda command: asok.call(path, command, 5.0, me), "osd.0")
    finally:
        listener.close()
    assert failed.value.reason == "timeout", (
        f"a daemon that does not accept counted as {failed.value.reason!r}: {failed.value}"
    )


# ----- side by side, once a collection ------------------------------------------------------------------


def test_twenty_hung_osds_are_asked_once_each_sixteen_at_a_time(tmp_path: Path) -> None:
    """20 hung OSDs whose fsid is in their argv (nothing is asked in phase 1), --daemon-counters:
    each is asked once (config get osd_data; its perf dump is not sent), at most 16 at once, and the first
    16 are all in flight together (a barrier of 16): two waves, about two timeouts, not twenty."""
    host, fake = build(tmp_path)
    hung = hung_osds(host, range(20, 40), 1000, ("--fsid", FSID))
    asks = HungAsks(host, fake, hung, side_by_side.ASK_WORKERS)
    c = collector(host, fake, daemon_counters=True, asok_timeout=T)
    c.sockets.call = asks
    got = values(c.render())
    assert sorted(asks.sent) == sorted((p, "config get osd_data") for p in hung), "each hung OSD asked once"
    assert not asks.together.broken, "the first sixteen asks were not in flight together"
    assert asks.peak == side_by_side.ASK_WORKERS
    for n in range(20, 40):
        osd = {"ceph_daemon": f"osd.{n}", "cluster": FSID, "hostname": "node1"}
        assert value(got, "daemon_up", **osd) == 0
        assert value(got, "fetch_errors_total", reason="timeout", **osd) == 1
        assert value(got, "daemon_threads", **osd) == 7


def test_a_hung_rgw_is_asked_side_by_side_with_hung_osds_and_keeps_its_other_samples(tmp_path: Path) -> None:
    """The RGW path: its perf dump is asked ahead with the OSDs' (the four first asks meet at a
    barrier of four), once a collection, and its process samples stay when it hangs."""
    host, fake = build(tmp_path)
    hung = hung_osds(host, range(20, 23), 1000, ("--fsid", FSID))
    hung.add("/lab/run/ceph-client.rgw.x.asok")
    asks = HungAsks(host, fake, hung, 4)
    c = collector(host, fake, daemon_counters=True, asok_timeout=T)
    c.collect()  # fsids and device maps known from now on (the RGW's from ceph.conf)
    c.sockets.call = asks
    got = values(c.render())
    assert sorted(asks.sent) == sorted((p, "perf dump") for p in hung)
    assert not asks.together.broken, "the hung RGW and OSDs were not asked side by side"
    rgw = {"ceph_daemon": "rgw.x", "cluster": FSID, "hostname": "node1"}
    assert value(got, "daemon_threads", **rgw) == 500
    assert not [k for k in got if k[0].endswith("rgw_objecter_ops_total")]


def test_a_daemon_whose_first_command_errors_and_then_hangs_costs_one_timeout(tmp_path: Path) -> None:
    """An error answer (not a timeout) silences nothing: `config get osd_data` answered
    "ERROR: ..." at once, then `perf dump` hangs: each sent once; the data dir falls back, the counters say
    timeout. The next collection asks its perf dump again (a new collection forgets who was silent), and
    only that (the device map is cached a minute, failures too)."""
    host, fake = build(tmp_path)
    osd7 = hung_osds(host, range(7, 8), 1000, ("--fsid", FSID)).pop()
    asked: list[str] = []

    def call(path: str, command: dict[str, Any], timeout: float, expected: asok.Listener | None) -> Any:
        if rel(host, path) != osd7:
            return fake(path, command, timeout, expected)
        asked.append(what(command))
        if command.get("var") == "osd_data":
            raise asok.AsokError("ERROR: (22) Invalid argument")
        raise asok.AsokTimeout("timed out")

    c = collector(host, fake, daemon_counters=True, asok_timeout=T)
    c.sockets.call = call
    got = values(c.render())
    assert asked == ["config get osd_data", "perf dump"]
    osd = {"ceph_daemon": "osd.7", "cluster": FSID, "hostname": "node1"}
    assert value(got, "fetch_errors_total", reason="timeout", **osd) == 1
    assert value(got, "daemon_threads", **osd) == 7
    asked.clear()
    got = values(c.render())
    assert asked == ["perf dump"]
    assert value(got, "fetch_errors_total", reason="timeout", **osd) == 2


@pytest.mark.root
def test_a_reply_dribbled_byte_by_byte_is_cut_at_the_timeout_and_nothing_more_is_sent(short_dir: Path) -> None:
    """With a real socket and the real asok.call: an OSD that answers `config get osd_data` one byte
    at a time (each byte well inside the timeout, the whole reply far past it) is cut at the timeout (the
    deadline covers the whole reply) and is silent for the rest of the collection: one connection, one
    command; its perf dump is not sent."""
    host = FakeHost(short_dir / "h")
    pid = 4242
    host.process(pid, "ceph-osd", ["ceph-osd", "-f", "-i", "7", "--fsid", FSID], threads=3)
    sock = host.path("/var/run/ceph/ceph-osd.7.asok")
    sock.parent.mkdir(parents=True, exist_ok=True)
    received: list[bytes] = []
    body = framed(b'{"osd_data": "/var/lib/ceph/osd/ceph-7"}' + b" " * 400)

    def dribble(conn: socket.socket) -> None:
        received.append(read_command(conn))
        for i in range(len(body)):
            conn.sendall(body[i : i + 1])
            time.sleep(0.01)

    def call(path: str, command: dict[str, Any], timeout: float, expected: asok.Listener | None) -> Any:
        # the test's server thread listens: this process, not the fake pid 4242
        mine = expected._replace(pid=os.getpid()) if expected is not None else None
        return asok.call(path, command, timeout, mine)

    c = collector(host, FakeAsok(host), daemon_counters=True, asok_timeout=0.3)
    c.sockets.call = call
    c.sockets.listener = asok.listener
    with serving(str(sock), dribble):
        got = values(c.render())
    assert [r.rstrip(b"\0") for r in received] == [b'{"prefix": "config get", "var": "osd_data", "format": "json"}']
    osd = {"ceph_daemon": "osd.7", "cluster": FSID, "hostname": "node1"}
    assert value(got, "fetch_errors_total", reason="timeout", **osd) == 1
    assert value(got, "daemon_threads", **osd) == 3


def test_each_fsid_found_side_by_side_is_found_cached_by_select(tmp_path: Path) -> None:
    """48 OSDs whose fsid only their sockets tell (cluster "sock": no conf): phase 1 asks each once,
    side by side, writing ClusterIds' cache from 16 threads; _select finds every one cached (no second
    ask), and all are reported in their cluster."""
    host, fake = build(tmp_path)
    other = "11111111-2222-3333-4444-555555555555"
    for n in range(48):
        host.process(3000 + n, "ceph-osd", ["ceph-osd", "-f", "--cluster", "sock", "-i", str(n)])
        host.write(f"/var/run/ceph/sock-osd.{n}.asok", "")
        fake.replies[(f"/var/run/ceph/sock-osd.{n}.asok", "config get fsid")] = {"fsid": other.upper()}
    c = collector(host, fake)
    got = values(c.render())
    fsid_asks = [p for p, command in fake.calls if "/sock-osd." in p and command.get("var") == "fsid"]
    assert sorted(fsid_asks) == sorted(f"/var/run/ceph/sock-osd.{n}.asok" for n in range(48))
    for n in range(48):
        assert value(got, "daemon_threads", ceph_daemon=f"osd.{n}", cluster=other, hostname="node1") == 1


# ----- two claimants, PIDs reused, answers left unread --------------------------------------------------


def test_of_two_claimants_of_a_hung_osd_the_socket_is_sent_one_command(tmp_path: Path) -> None:
    """osd.0 (pid 100) hangs; a one-off `ceph-osd -i 0 --flush-journal` (pid 50) claims osd.0 too.
    Phase 1 looks both up side by side: the one-off's ask is refused by the listener check (nothing sent),
    osd.0's times out. _select keeps the listener (pid 100); phase 2 sends it nothing more."""
    host, fake = build(tmp_path)
    host.process(50, "ceph-osd", ["ceph-osd", "-i", "0", "--flush-journal"], threads=1)
    osd0 = "/var/run/ceph/ceph-osd.0.asok"
    fake.owners[osd0] = 100
    sent: list[tuple[int, str]] = []

    def call(path: str, command: dict[str, Any], timeout: float, expected: asok.Listener | None) -> Any:
        if rel(host, path) != osd0:
            return fake(path, command, timeout, expected)
        assert expected is not None
        asok.check_listener(path, 100, 0, expected)  # raises for the one-off: nothing sent
        sent.append((expected.pid, what(command)))
        raise asok.AsokTimeout("timed out")

    c = collector(host, fake, daemon_counters=True, asok_timeout=T)
    c.sockets.call = call
    got = values(c.render())
    assert sent == [(100, "config get fsid")]
    osd = {"ceph_daemon": "osd.0", "cluster": FSID, "hostname": "node1"}
    assert value(got, "daemon_threads", **osd) == 60, "the listener's samples"
    assert value(got, "daemon_up", **osd) == 0


def test_an_answer_left_unread_is_dropped_not_handed_to_a_reused_pid(tmp_path: Path) -> None:
    """osd.0's answers asked ahead are left unread (its samples fail before its device map and
    counters are read): end() drops them. Pid 100 is then a new process, osd.5 (a reused PID): the next
    collection asks osd.5's own socket and reads osd.5's reply, not osd.0's leftover."""
    host, fake = build(tmp_path)
    c = collector(host, fake, daemon_counters=True)
    cgroup = c.part("cgroup")
    real_cgroup = cgroup.daemon

    def failing(run: Any, daemon: Any, st: Any, base: Any) -> Any:
        if daemon.pid == 100:
            raise RuntimeError("a bug before the answers are read")
        return real_cgroup(run, daemon, st, base)

    cgroup.daemon = failing  # type: ignore[method-assign]
    c.collect()
    assert asked(fake, "perf dump") == 1 and asked(fake, "config get osd_data") == 1, "asked ahead"
    assert c.sockets._answers == {} and c.sockets._silent == {}, "left unread: dropped at the end"
    cgroup.daemon = real_cgroup  # type: ignore[method-assign]
    shutil.rmtree(host.path("proc/100"))  # osd.0 is gone; its PID is taken by a new process
    host.process(100, "ceph-osd", ["ceph-osd", "-f", "-i", "5", "--fsid", FSID], threads=9, start=9000)
    osd5 = "/var/run/ceph/ceph-osd.5.asok"
    host.write(osd5, "")
    fake.replies[(osd5, "perf dump")] = fake.replies[("/var/run/ceph/ceph-osd.0.asok", "perf dump")]
    fake.replies[(osd5, "config get osd_data")] = {"osd_data": "/srv/osd/ceph-5"}
    got = values(c.render())
    assert asked(fake, "perf dump", osd5) == 1 and asked(fake, "config get osd_data", osd5) == 1
    assert value(got, "daemon_up", ceph_daemon="osd.5", cluster=FSID, hostname="node1") == 1


def test_a_collection_that_raises_midway_releases_its_lock_and_forgets_its_answers(tmp_path: Path) -> None:
    """A bug after phase 2 (cgroup mounts raising what collect does not catch): collect raises, and
    end() still ran (nothing asked ahead or silent is kept), the collector's lock is free, and the next
    collection asks afresh."""
    host, fake = build(tmp_path)
    hung = hung_osds(host, range(20, 22), 1000, ("--fsid", FSID))

    def call(path: str, command: dict[str, Any], timeout: float, expected: asok.Listener | None) -> Any:
        if rel(host, path) in hung:
            raise asok.AsokTimeout("timed out")
        return fake(path, command, timeout, expected)

    c = collector(host, fake, daemon_counters=True, asok_timeout=T)
    c.sockets.call = call
    refresh = c.cgroups.refresh_mounts

    def boom() -> None:
        raise RuntimeError("a bug")

    c.cgroups.refresh_mounts = boom  # type: ignore[method-assign]
    with pytest.raises(RuntimeError):
        c.collect()
    assert c.sockets._answers == {} and c.sockets._silent == {}
    assert c._lock.acquire(blocking=False), "the collection's lock was left held"
    c._lock.release()
    c.cgroups.refresh_mounts = refresh  # type: ignore[method-assign]
    before = asked(fake, "perf dump")
    got = values(c.render())
    assert asked(fake, "perf dump") == before + 1
    assert value(got, "daemon_up", ceph_daemon="osd.0", cluster=FSID, hostname="node1") == 1


def test_a_bug_in_one_phase_one_lookup_is_counted_once_and_the_rest_are_read(tmp_path: Path) -> None:
    """A lookup that raises what it does not expect (a bug in mon.a's config file lookup): run_all
    drops it in phase 1, _select looks again and counts it once as a "proc" error; mon.a is still reported
    (cluster unknown), the others as usual."""
    host, fake = build(tmp_path)
    c = collector(host, fake)
    real_conf = c.clusters._conf

    def conf(daemon: Any) -> Any:
        if daemon.ident.label == "mon.a":
            raise RuntimeError("a bug")
        return real_conf(daemon)

    c.clusters._conf = conf  # type: ignore[method-assign]
    baseline = value(values(collector(*build(tmp_path / "alone")).render()), "exporter_collection_errors_total",
                     hostname="node1", source="proc")  # fmt: skip
    got = values(c.render())
    assert value(got, "exporter_collection_errors_total", hostname="node1", source="proc") == baseline + 1
    assert value(got, "daemon_threads", ceph_daemon="mon.a", cluster="", hostname="node1") == 25
    assert value(got, "daemon_threads", ceph_daemon="osd.0", cluster=FSID, hostname="node1") == 60


def test_at_the_thread_limit_a_collection_still_asks_every_daemon_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No thread can be started (the process, or the host, at its limit): the collection's thread does
    every job itself, each hung OSD still asked once and every daemon reported."""
    host, fake = build(tmp_path)
    hung = hung_osds(host, range(20, 26), 1000, ("--fsid", FSID))
    asked: list[str] = []
    threads: set[str] = set()

    def call(path: str, command: dict[str, Any], timeout: float, expected: asok.Listener | None) -> Any:
        threads.add(threading.current_thread().name)
        if rel(host, path) in hung:
            asked.append(rel(host, path))
            raise asok.AsokTimeout("timed out")
        return fake(path, command, timeout, expected)

    def refuse(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    c = collector(host, fake, daemon_counters=True, asok_timeout=T)
    c.sockets.call = call
    monkeypatch.setattr(threading.Thread, "start", refuse)
    got = values(c.render())
    assert sorted(asked) == sorted(hung)
    assert threads == {threading.current_thread().name}
    assert value(got, "exporter_daemons", hostname="node1") == 3 + 6


# ----- what worker threads share ------------------------------------------------------------------------


def test_untrusted_socket_refusals_made_in_worker_threads_are_all_counted(tmp_path: Path) -> None:
    """40 OSDs whose sockets another user listens on: every command is refused in a worker thread
    (nothing sent) and counted in the one refusal counter: exactly two per OSD (osd_data, perf dump; a
    refusal is not a timeout and silences nothing)."""
    host, fake = build(tmp_path)
    paths = hung_osds(host, range(100, 140), 5000, ("--fsid", FSID))
    for path in paths:
        fake.users[path] = 1000
    c = collector(host, fake, daemon_counters=True)
    got = values(c.render())
    assert value(got, "exporter_refused_total", hostname="node1", reason="untrusted_socket") == 80
    assert not [p for p, _ in fake.calls if p in paths], "a command went to another user's socket"


def test_error_counter_counts_exactly_from_many_threads() -> None:
    """ErrorCounter from 16 threads at once: every call counted, the remembered kinds stay bounded."""
    log = logging.getLogger("pw-5e-errors")
    log.propagate = False
    log.addHandler(logging.NullHandler())
    counter = ErrorCounter(("asok", "proc"), log)
    start = threading.Barrier(16, timeout=10)

    def hammer(n: int) -> None:
        start.wait()
        for i in range(400):
            counter("asok" if i % 2 else "proc", f"thread {n} event {i}")

    workers = [threading.Thread(target=hammer, args=(n,)) for n in range(16)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert counter.counts == {"asok": 3200, "proc": 3200}
    assert len(counter._seen) <= 1000


# ----- a hostile local user's fake daemons, with real sockets -------------------------------------------


def test_hundreds_of_another_users_fake_daemons_with_real_sockets_are_never_connected_to(
    short_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """300 processes of uid 1000 called ceph-osd (one claiming osd.0, below the real one's PID), each
    with a real listening socket where its admin socket would be, beside a trusted osd.0: with the real
    asok.call and listener, not one connection reaches them (none is in the scan, so none is a job of
    either phase); they are counted as refused, with one warning for the user, not one each."""
    host = FakeHost(short_dir / "h")
    host.process(100, "ceph-osd", ["ceph-osd", "-f", "-i", "0", "--fsid", FSID], threads=5)
    host.process(50, "ceph-osd", ["ceph-osd", "-f", "-i", "0", "--fsid", FSID], uid=1000)
    listeners = []
    try:
        for n in range(1, 300):
            host.process(2000 + n, "ceph-osd", ["ceph-osd", "-f", "-i", str(n), "--fsid", FSID], uid=1000)
            path = host.path(f"/var/run/ceph/ceph-osd.{n}.asok")
            path.parent.mkdir(parents=True, exist_ok=True)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(str(path))
            s.listen(8)
            s.setblocking(False)
            listeners.append(s)
        c = collector(host, FakeAsok(host), daemon_counters=True, asok_timeout=0.5)
        c.sockets.call = asok.call
        c.sockets.listener = asok.listener
        with caplog.at_level(logging.WARNING):
            got = values(c.render())
            got = values(c.render())
        connected = 0
        for s in listeners:
            try:
                conn, _ = s.accept()
            except BlockingIOError:
                continue
            conn.close()
            connected += 1
    finally:
        for s in listeners:
            s.close()
    assert connected == 0, f"{connected} of another user's sockets were connected to"
    assert value(got, "exporter_refused_total", hostname="node1", reason="untrusted_process") == 2 * 300
    assert value(got, "daemon_threads", ceph_daemon="osd.0", cluster=FSID, hostname="node1") == 5
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "uid 1000" in r.getMessage()]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]


def test_listens_on_a_hung_socket_sends_nothing_and_does_not_wait(short_dir: Path) -> None:
    """_select's duplicate check (listens(), in series, outside side_by_side) costs no timeout on a
    hung daemon: SO_PEERCRED is there at connect, whether the daemon accepts and never reads or never
    accepts at all (its backlog full: connect fails at once with EAGAIN rather than waiting out the 30 s
    timeout given). Nothing is sent either way; of a full backlog listens() cannot tell (None)."""
    pid = os.getpid()
    host = FakeHost(short_dir / "h")
    host.process(pid, "ceph-osd", ["ceph-osd", "-f", "-i", "0"])
    sock = host.path("/var/run/ceph/ceph-osd.0.asok")
    sock.parent.mkdir(parents=True, exist_ok=True)
    received: list[bytes] = []

    def record(conn: socket.socket) -> None:
        conn.settimeout(1.0)
        with suppress(OSError):
            received.append(conn.recv(100))

    sockets = DaemonSockets(host.root(), asok.call, [], 30.0, lambda *a, **k: None)
    daemon = Daemon(pid, identify("osd", ["ceph-osd", "-f", "-i", "0"], pid))
    with serving(str(sock), record):
        assert sockets.listens(daemon) is True
    assert received in ([], [b""])
    sock.unlink()
    full = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    full.bind(str(sock))
    full.listen(0)
    queued = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        queued.connect(str(sock))  # the one connection the backlog holds
        outcome: list[Any] = []
        asking = threading.Thread(target=lambda: outcome.append(sockets.listens(daemon)), daemon=True)
        asking.start()
        asking.join(10)  # a hang guard, not a timing: a connect that waited would wait the 30 s timeout
        assert outcome == [None], "listens() waited on a daemon that does not accept"
    finally:
        queued.close()
        full.close()
