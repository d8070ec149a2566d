"""MgrAdapter's commands: tell and mon commands go through the module's librados handle (never the mgr's
send_command, which crashes Ceph 18.2's mgr on Python 3.13), each with a timeout, at most two outstanding
per OSD; and the capacity view from get(). The mgr is a stand-in shaped like MgrModule and rados.Rados."""

from __future__ import annotations

import ast
import json
import logging
import sys
import threading
import time
import types
from collections.abc import Iterator
from typing import Any

import pytest

from perfwatch.ceph.call_pool import CallPool, failure
from perfwatch.ceph.seam import FetchError
from perfwatch.common.daemon_counters.fetch_reasons import REASON_BUSY, REASON_ERROR, REASON_TIMEOUT
from tests import paths

FIXTURE = json.loads((paths.FIXTURES / "pacific_capacity.json").read_text())


class Rados:
    """rados.Rados' command calls: (ret, outbuf bytes, outs str), blocking until `release` is set for an
    OSD in `hung`."""

    def __init__(self) -> None:
        self.answers: dict[Any, tuple[int, bytes, str]] = {}
        self.hung: set[int] = set()
        self.release = threading.Event()
        self.sent: list[tuple[str, Any, str]] = []
        self.failure: Exception | None = None

    def osd_command(self, osdid: int, cmd: str, inbuf: bytes, timeout: int = 0) -> tuple[int, bytes, str]:
        self.sent.append(("osd", osdid, cmd))
        if self.failure is not None:
            raise self.failure
        if osdid in self.hung:
            self.release.wait(10)
        return self.answers.get(osdid, (0, b'{"osd": {}}', ""))

    def mon_command(self, cmd: str, inbuf: bytes, timeout: int = 0, target: Any = None) -> tuple[int, bytes, str]:
        self.sent.append(("mon", None, cmd))
        return self.answers.get("mon", (0, b"", ""))


class Module:
    def __init__(self) -> None:
        self.log = logging.getLogger("test_mgr_adapter_commands")
        self.handle = Rados()
        self.connects = 0

    @property
    def rados(self) -> Rados:
        self.connects += 1
        return self.handle

    def get(self, what: str) -> Any:
        return FIXTURE[what]

    def send_command(self, *_: Any) -> None:
        raise AssertionError("send_command completes on a mgr thread with the caller's Python thread state")


@pytest.fixture
def adapter(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    fake = types.ModuleType("mgr_module")
    fake.MgrModule = object  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "mgr_module", fake)
    monkeypatch.delitem(sys.modules, "perfwatch.ceph.mgr_adapter", raising=False)
    import perfwatch.ceph.mgr_adapter

    made = perfwatch.ceph.mgr_adapter.MgrAdapter(Module(), lambda: 5.0)  # type: ignore[arg-type]
    monkeypatch.delitem(sys.modules, "perfwatch.ceph.mgr_adapter")
    yield made
    made.module.handle.release.set()


def test_a_tell_command_goes_to_librados_and_its_answer_is_decoded(adapter: Any) -> None:
    adapter.module.handle.answers[3] = (0, b'{"osd": {"op_latency": {"sum": 1.5, "avgcount": 3}}}', "")
    assert adapter.osd_op_latency(3) == {"sum": 1.5, "avgcount": 3.0}
    kind, osd, cmd = adapter.module.handle.sent[0]
    assert (kind, osd, json.loads(cmd)["prefix"]) == ("osd", 3, "perf dump")


def test_an_error_answer_says_the_osd_its_code_and_text(adapter: Any) -> None:
    adapter.module.handle.answers[1] = (-6, b"", "osd down")
    with pytest.raises(FetchError) as failed:
        adapter.tell_osd(1, {"prefix": "perf dump"}, 5.0)
    assert failed.value.reason == REASON_ERROR and str(failed.value) == "error: osd.1: -6 osd down"


def test_an_empty_answer_is_a_clear_error_not_a_decode_error(adapter: Any) -> None:
    adapter.module.handle.answers[0] = (0, b"", "")
    with pytest.raises(FetchError) as failed:
        adapter.tell_osd(0, {"prefix": "bench"}, 5.0)
    assert failed.value.reason == REASON_ERROR
    assert str(failed.value) == "error: osd.0 returned no answer (the daemon may have crashed or restarted)"


def test_librados_failing_is_an_error_of_that_osd(adapter: Any) -> None:
    adapter.module.handle.failure = OSError("rados handle shut down")
    with pytest.raises(FetchError) as failed:
        adapter.tell_osd(0, {"prefix": "perf dump"}, 5.0)
    assert failed.value.reason == REASON_ERROR and "rados handle shut down" in str(failed.value)


def test_a_hung_osd_times_out_then_is_busy_and_holds_up_no_other(adapter: Any) -> None:
    handle = adapter.module.handle
    handle.hung.add(2)
    with pytest.raises(FetchError) as timed_out:
        adapter.tell_osd(2, {"prefix": "perf dump"}, 0.1)
    assert timed_out.value.reason == REASON_TIMEOUT and str(timed_out.value) == "timeout: osd.2: no answer in 0 s"
    with pytest.raises(FetchError) as busy:
        adapter.tell_osd(2, {"prefix": "perf dump"}, 0.1)
    assert busy.value.reason == REASON_BUSY and "osd.2 has not answered an earlier request" in str(busy.value)
    assert [osd for _, osd, _ in handle.sent] == [2]  # the busy one was never sent
    assert adapter.tell_osd(0, {"prefix": "perf dump"}, 0.1) == {"osd": {}}


def test_an_osd_refused_because_the_pool_is_full_is_said_not_asked_not_blamed(adapter: Any) -> None:
    """The all-calls cap is no fault of the OSD refused: its error says it was not asked."""
    adapter._calls = CallPool("test", max_outstanding=1)
    adapter.module.handle.hung.add(2)
    with pytest.raises(FetchError):
        adapter.tell_osd(2, {"prefix": "perf dump"}, 0.05)
    with pytest.raises(FetchError) as refused:
        adapter.tell_osd(0, {"prefix": "perf dump"}, 0.05)
    assert refused.value.reason == REASON_BUSY
    assert str(refused.value) == "busy: osd.0 not asked: 1 calls unanswered in all, as many as may be"
    answers: list[Any] = []
    with pytest.raises(FetchError, match=r"osd\.1 not asked"):
        adapter.submit_osd_texts(1, [{"prefix": "perf dump"}], 0.05, answers.append)
    assert [osd for _, osd, _ in adapter.module.handle.sent] == [2]


def test_a_request_unanswered_for_three_timeouts_may_be_followed_by_one_more_and_no_third(
    adapter: Any, caplog: pytest.LogCaptureFixture
) -> None:
    now = [0.0]
    adapter._calls = CallPool("test", clock=lambda: now[0])
    handle = adapter.module.handle
    handle.hung.add(4)
    with pytest.raises(FetchError):
        adapter.tell_osd(4, {"prefix": "perf dump"}, 0.05)
    now[0] += 29.9  # three timeouts of 0.05 s, but never less than 30 s
    with pytest.raises(FetchError) as busy:
        adapter.tell_osd(4, {"prefix": "perf dump"}, 0.05)
    assert busy.value.reason == REASON_BUSY
    now[0] += 0.2
    with caplog.at_level(logging.WARNING), pytest.raises(FetchError) as again:
        adapter.tell_osd(4, {"prefix": "perf dump"}, 0.05)
    assert again.value.reason == REASON_TIMEOUT
    assert "osd.4 never answered a request sent 30 s ago; sending another" in caplog.text
    now[0] += 3600
    with pytest.raises(FetchError) as third:
        adapter.tell_osd(4, {"prefix": "perf dump"}, 0.05)
    assert third.value.reason == REASON_BUSY
    assert [osd for _, osd, _ in handle.sent] == [4, 4]
    handle.release.set()


def test_the_librados_handle_is_taken_once_however_many_threads_ask(adapter: Any) -> None:
    got: list[Any] = []

    def ask(osd: int) -> None:
        try:
            got.append(adapter.tell_osd(osd, {"prefix": "perf dump"}, 5.0))
        except FetchError as exc:  # asked while the one connecting thread connected
            got.append(str(exc))

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert adapter.module.connects == 1 and len(got) == 16
    assert {str(answer) for answer in got} <= {"{'osd': {}}", "busy: the module's librados handle is still connecting"}
    assert len(adapter.module.handle.sent) == got.count({"osd": {}})


class SlowToConnect(Module):
    """A module whose librados handle takes `connecting` seconds to connect, or fails to."""

    def __init__(self, connecting: float, failure: Exception | None = None) -> None:
        super().__init__()
        self.connecting = connecting
        self.failure = failure

    @property
    def rados(self) -> Rados:
        time.sleep(self.connecting)
        if self.failure is not None:
            raise self.failure
        return self.handle


def test_a_first_connect_that_hangs_costs_the_callers_timeout_not_its_thread(adapter: Any) -> None:
    """The handle connects on first use, in the pool's thread: a cluster that does not answer the connect
    makes the first command a timeout after the caller's timeout, not a collecting thread held for good."""
    adapter.module = SlowToConnect(connecting=1.0)
    started = time.monotonic()
    with pytest.raises(FetchError) as timed_out:
        adapter.tell_osd(0, {"prefix": "perf dump"}, 0.1)
    assert timed_out.value.reason == REASON_TIMEOUT
    assert time.monotonic() - started < 0.8
    answers: list[Any] = []
    started = time.monotonic()
    adapter.submit_osd_texts(1, [{"prefix": "perf dump"}], 0.1, answers.append)
    assert time.monotonic() - started < 0.5  # submitted, not connected, in this thread
    deadline = time.monotonic() + 5
    while not answers and time.monotonic() < deadline:
        time.sleep(0.01)
    error = failure(answers[0])  # the first command's thread is still connecting: refused, not queued
    assert isinstance(error, FetchError) and "still connecting" in str(error)


class HungConnect(Module):
    """A module whose librados handle connects only once `connected` is set (a cluster slow to answer)."""

    def __init__(self) -> None:
        super().__init__()
        self.connected = threading.Event()

    @property
    def rados(self) -> Rados:
        self.connects += 1
        self.connected.wait(10)
        return self.handle


def test_while_the_first_connect_hangs_other_commands_fail_at_once_not_each_holding_a_thread(adapter: Any) -> None:
    """One pool thread connects; the others' commands fail at once rather than queue on the connect, each
    holding a pool thread for its timeout (the first cycle would last N / max_in_flight x the timeout)."""
    module = adapter.module = HungConnect()
    first: list[Any] = []
    adapter.submit_osd_texts(0, [{"prefix": "perf dump"}], 5.0, first.append)
    deadline = time.monotonic() + 5
    while module.connects == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        started = time.monotonic()
        with pytest.raises(FetchError) as refused:
            adapter.tell_osd(1, {"prefix": "perf dump"}, 2.0)
        assert time.monotonic() - started < 1.0
        assert str(refused.value) == "busy: the module's librados handle is still connecting"
        answers: list[Any] = []
        adapter.submit_osd_texts(2, [{"prefix": "perf dump"}], 2.0, answers.append)
        while not answers and time.monotonic() < started + 1.0:
            time.sleep(0.01)
        error = failure(answers[0]) if answers else None
        assert isinstance(error, FetchError) and error.reason == REASON_BUSY and "still connecting" in str(error)
    finally:
        module.connected.set()
    while not first and time.monotonic() < deadline:
        time.sleep(0.01)
    assert first == [['{"osd": {}}']]  # the connecting thread went on to send its command
    assert adapter.tell_osd(3, {"prefix": "perf dump"}, 2.0) == {"osd": {}}
    assert module.connects == 1 and [osd for _, osd, _ in module.handle.sent] == [0, 3]


def test_a_connect_that_fails_is_that_commands_error_said_once(adapter: Any) -> None:
    adapter.module = SlowToConnect(connecting=0.0, failure=OSError("no monitors reachable"))
    with pytest.raises(FetchError) as failed:
        adapter.mon_command({"prefix": "osd dump"})
    assert failed.value.reason == REASON_ERROR
    assert str(failed.value) == "error: the module's librados handle: OSError('no monitors reachable')"
    answers: list[Any] = []
    adapter.submit_osd_texts(1, [{"prefix": "perf dump"}], 1.0, answers.append)
    deadline = time.monotonic() + 5
    while not answers and time.monotonic() < deadline:
        time.sleep(0.01)
    error = failure(answers[0])
    assert isinstance(error, FetchError) and "no monitors reachable" in str(error)


def test_a_mon_command_asks_for_json_and_parses_the_answer(adapter: Any) -> None:
    adapter.module.handle.answers["mon"] = (0, b'{"pool_id": 7}', "")
    assert adapter.mon_command({"prefix": "osd pool create", "pool": "p", "pg_num": 8}) == {"pool_id": 7}
    _, _, cmd = adapter.module.handle.sent[0]
    assert json.loads(cmd) == {"prefix": "osd pool create", "pool": "p", "pg_num": 8, "format": "json"}


def test_a_mon_error_says_the_command_and_an_empty_answer_is_none(adapter: Any) -> None:
    adapter.module.handle.answers["mon"] = (-1, b"", "access denied")
    with pytest.raises(FetchError) as failed:
        adapter.mon_command({"prefix": "osd pool create", "pool": "p", "pg_num": 8})
    assert str(failed.value) == "error: mon: osd pool create: -1 access denied"
    adapter.module.handle.answers["mon"] = (0, b"", "pool 'p' created")
    assert adapter.mon_command({"prefix": "osd pool create", "pool": "p", "pg_num": 8}) is None


def test_the_mgr_adapter_builds_the_view_from_get(adapter: Any) -> None:
    view = adapter.capacity_view()
    assert view.osds[0].avail == 1799752 * 1024 and view.pools["perfwatch"].osds == (0, 1, 2)


# ----- nothing of the module asks the mgr to send a command --------------------------------------------------

MODULE_DIR = paths.REPO / "mgr_module" / "perfwatch"
MGR_SENDERS = {"send_command", "_ceph_send_command", "check_mon_command", "CommandResult"}


def mgr_command_calls(source: str) -> list[str]:
    """Where code uses the mgr's command path: send_command and its CommandResult, and the MgrModule
    helpers built on it (mon_command / check_mon_command on the module, or on self where the class does not
    define mon_command itself, as MgrAdapter and its PoolMaps base do)."""
    tree = ast.parse(source)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in MGR_SENDERS:
            found.append(f"line {node.lineno}: {node.attr}")
        elif isinstance(node, ast.Name) and node.id in MGR_SENDERS:
            found.append(f"line {node.lineno}: {node.id}")
    for cls in [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]:
        own = any(isinstance(f, ast.FunctionDef) and f.name == "mon_command" for f in cls.body)
        for node in ast.walk(cls):
            if isinstance(node, ast.Attribute) and node.attr == "mon_command":
                on_module = isinstance(node.value, ast.Attribute) and node.value.attr == "module"
                on_self = isinstance(node.value, ast.Name) and node.value.id == "self"
                if on_module or (on_self and not own and not _derives_from_pool_maps(cls)):
                    found.append(f"line {node.lineno}: {ast.unparse(node.value)}.mon_command")
    return found


def _derives_from_pool_maps(cls: ast.ClassDef) -> bool:
    return any(isinstance(b, ast.Name) and b.id == "PoolMaps" for b in cls.bases)


def test_no_module_code_uses_the_mgrs_send_command() -> None:
    """send_command's completion borrows the calling thread's Python state on a mgr thread, which crashes Reef's
    mgr on Python 3.13 (docs/decisions/why-librados-not-send-command.md). Every command goes through MgrAdapter's
    librados calls."""
    offenders = {
        str(path.relative_to(MODULE_DIR)): found
        for path in sorted(MODULE_DIR.rglob("*.py"))
        if (found := mgr_command_calls(path.read_text()))
    }
    assert offenders == {}


@pytest.mark.parametrize(
    "code",
    [
        "r = CommandResult('')",
        "self.module.send_command(r, 'osd', '0', '{}', '')",
        "class M(MgrModule):\n    def f(self):\n        self.mon_command({'prefix': 'df'})",
        "class A:\n    def f(self):\n        self.module.mon_command({'prefix': 'df'})",
        "class A:\n    def f(self):\n        self.module.check_mon_command({'prefix': 'df'})",
    ],
)
def test_the_guard_finds_each_way_to_the_mgrs_command_path(code: str) -> None:
    assert mgr_command_calls(code)


def test_the_guard_leaves_the_adapters_own_mon_command() -> None:
    code = (
        "class Pools(PoolMaps):\n    def f(self):\n        self.mon_command({})\n"
        "class A:\n    def mon_command(self, c):\n        return c\n    def f(self):\n        self.mon_command({})\n"
    )
    assert mgr_command_calls(code) == []
