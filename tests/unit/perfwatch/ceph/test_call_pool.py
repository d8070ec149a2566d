"""CallPool: blocking calls (librados' command calls) with a timeout, a bound on the calls outstanding per
key, threads reused and ended when idle. Real threads; the blocked 'daemon' is an Event the test sets."""

import threading
import time
from collections.abc import Callable, Iterator

import pytest

from perfwatch.ceph.call_pool import Busy, CallPool, PoolBusy, TimedOut


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def answer() -> Iterator[threading.Event]:
    """What a hung daemon's calls wait for; set at the end so no thread stays blocked after a test."""
    event = threading.Event()
    yield event
    event.set()


def blocked_until(event: threading.Event, value: str = "late") -> Callable[[], str]:
    def call() -> str:
        event.wait(10)
        return value

    return call


def wait_for(predicate: Callable[[], bool], seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.005)
    assert predicate()


def test_a_call_returns_its_value_and_raises_its_exception() -> None:
    pool = CallPool()
    assert pool.call("osd.0", lambda: (0, b"{}", ""), 5.0) == (0, b"{}", "")

    def fails() -> None:
        raise ValueError("librados said no")

    with pytest.raises(ValueError, match="librados said no"):
        pool.call("osd.0", fails, 5.0)
    assert pool.outstanding("osd.0") == 0


def test_a_call_with_no_answer_times_out_and_stays_outstanding_until_it_ends(answer: threading.Event) -> None:
    pool = CallPool()
    started = time.monotonic()
    with pytest.raises(TimedOut, match="no answer in 0 s"):
        pool.call("osd.1", blocked_until(answer), 0.2)
    assert 0.2 <= time.monotonic() - started < 2.0
    assert pool.outstanding("osd.1") == 1
    answer.set()
    wait_for(lambda: pool.outstanding("osd.1") == 0)


def test_a_key_with_an_unanswered_call_is_busy_until_it_ends(answer: threading.Event) -> None:
    pool = CallPool()
    with pytest.raises(TimedOut):
        pool.call("osd.1", blocked_until(answer), 0.05)
    with pytest.raises(Busy, match="1 call"):
        pool.call("osd.1", lambda: "never sent", 5.0)
    assert pool.call("osd.2", lambda: "another OSD", 5.0) == "another OSD"  # other keys are not held up
    answer.set()
    wait_for(lambda: pool.outstanding("osd.1") == 0)
    assert pool.call("osd.1", lambda: "answered again", 5.0) == "answered again"


def test_after_retry_after_seconds_one_more_call_goes_out_and_no_third(answer: threading.Event) -> None:
    clock = Clock()
    pool = CallPool(clock=clock)
    retries: list[float] = []
    with pytest.raises(TimedOut):
        pool.call("osd.3", blocked_until(answer), 0.05, limit=2, retry_after=30.0)
    clock.now += 29.0
    with pytest.raises(Busy):
        pool.call("osd.3", lambda: "too soon", 5.0, limit=2, retry_after=30.0, on_retry=retries.append)
    clock.now += 1.0
    assert pool.call("osd.3", lambda: "retried", 5.0, limit=2, retry_after=30.0, on_retry=retries.append) == "retried"
    assert retries == [30.0]
    with pytest.raises(TimedOut):
        pool.call("osd.3", blocked_until(answer), 0.05, limit=2, retry_after=30.0)
    clock.now += 1000.0
    with pytest.raises(Busy, match="2 call"):
        pool.call("osd.3", lambda: "third", 5.0, limit=2, retry_after=30.0)
    assert pool.outstanding("osd.3") == 2


def test_a_failing_note_of_a_retry_neither_fails_the_call_nor_hides_that_it_was_sent(answer: threading.Event) -> None:
    clock = Clock()
    pool = CallPool(clock=clock)
    with pytest.raises(TimedOut):
        pool.call("osd.3", blocked_until(answer), 0.05, limit=2, retry_after=30.0)
    clock.now += 30.0

    def broken_note(waited: float) -> None:
        raise RuntimeError("the log handler is gone")

    assert pool.call("osd.3", lambda: "retried", 5.0, limit=2, retry_after=30.0, on_retry=broken_note) == "retried"


def test_without_retry_after_calls_go_out_side_by_side_up_to_the_limit(answer: threading.Event) -> None:
    pool = CallPool()
    results: list[object] = []

    def call_mon() -> None:
        try:
            results.append(pool.call("mon", blocked_until(answer, "answered"), 5.0, limit=2))
        except Exception as exc:
            results.append(exc)

    callers = [threading.Thread(target=call_mon) for _ in range(2)]
    for caller in callers:
        caller.start()
    wait_for(lambda: pool.outstanding("mon") == 2)
    with pytest.raises(Busy):
        pool.call("mon", lambda: "third", 5.0, limit=2)
    answer.set()
    for caller in callers:
        caller.join(5)
    assert results == ["answered", "answered"]


def test_a_blocked_call_never_delays_another_keys_call(answer: threading.Event) -> None:
    """Each call has a thread: a hung OSD's call holds its thread, not the next OSD's answer."""
    pool = CallPool()
    for osd in range(5):
        with pytest.raises(TimedOut):
            pool.call(osd, blocked_until(answer), 0.01)
    started = time.monotonic()
    assert pool.call(99, lambda: "quick", 5.0) == "quick"
    assert time.monotonic() - started < 1.0
    assert pool.threads() == 6


def test_threads_are_reused_and_end_when_idle() -> None:
    pool = CallPool(idle_seconds=0.2)
    for _ in range(50):
        pool.call("osd.0", lambda: None, 5.0)
    assert pool.threads() == 1
    wait_for(lambda: pool.threads() == 0)
    assert pool.call("osd.0", lambda: "after idle", 5.0) == "after idle"


def test_many_callers_at_once_each_get_their_own_answer() -> None:
    pool = CallPool()
    got: dict[int, object] = {}

    def caller(i: int) -> None:
        got[i] = pool.call(i, lambda: i * i, 5.0)

    threads = [threading.Thread(target=caller, args=(i,)) for i in range(40)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert got == {i: i * i for i in range(40)}
    assert all(pool.outstanding(i) == 0 for i in range(40))


def test_calls_outstanding_in_all_are_bounded_whatever_the_keys(answer: threading.Event) -> None:
    pool = CallPool(max_outstanding=3)
    for osd in range(3):
        with pytest.raises(TimedOut):
            pool.call(osd, blocked_until(answer), 0.01)
    with pytest.raises(Busy, match="3 calls unanswered in all"):
        pool.call(3, lambda: "a fourth OSD", 5.0)
    assert pool.threads() == 3
    answer.set()
    wait_for(lambda: sum(pool.outstanding(osd) for osd in range(3)) == 0)
    assert pool.call(3, lambda: "room again", 5.0) == "room again"


def test_no_second_call_to_a_key_once_half_the_pool_is_out_so_first_calls_find_room() -> None:
    """Hung keys each retried would fill the pool (limit 2 x max_outstanding / 2 keys) and every other key be
    refused for good: a second call goes out only while fewer than half of max_outstanding are out."""
    clock = Clock()
    pool = CallPool(clock=clock, max_outstanding=8)
    hung = [threading.Event() for _ in range(4)]
    try:
        for osd in range(3):
            with pytest.raises(TimedOut):
                pool.call(osd, blocked_until(hung[osd]), 0.01, limit=2, retry_after=30.0)
        clock.now += 30.0
        with pytest.raises(TimedOut):  # 3 out, fewer than 4: the retry goes out
            pool.call(0, blocked_until(hung[0]), 0.01, limit=2, retry_after=30.0)
        with pytest.raises(Busy, match=r"no second call while 4 of at most 8 are unanswered in all") as refused:
            pool.call(1, lambda: "never sent", 5.0, limit=2, retry_after=30.0)
        assert not isinstance(refused.value, PoolBusy)  # the key has not answered: its own doing
        assert refused.value.refusal("osd.1").startswith("osd.1 has not answered an earlier request")
        with pytest.raises(TimedOut):  # a fourth key hangs too: first calls still go out
            pool.call(3, blocked_until(hung[3]), 0.01, limit=2, retry_after=30.0)
        assert [pool.call(osd, lambda: "answered", 5.0, limit=2, retry_after=30.0) for osd in (10, 11)] == [
            "answered",
            "answered",
        ]
        assert [pool.outstanding(osd) for osd in range(4)] == [2, 1, 1, 1]
        hung[0].set()
        wait_for(lambda: pool.outstanding(0) == 0)
        with pytest.raises(TimedOut):  # 3 out again: room for a retry
            pool.call(1, blocked_until(hung[1]), 0.01, limit=2, retry_after=30.0)
        assert pool.outstanding(1) == 2
    finally:
        for event in hung:
            event.set()


def test_a_call_whose_thread_cannot_start_is_refused_and_never_sent_later(monkeypatch: pytest.MonkeyPatch) -> None:
    pool = CallPool()
    sent: list[str] = []

    def no_thread(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", no_thread)
    with pytest.raises(Busy, match="thread limit"):
        pool.call("mon", lambda: sent.append("osd pool create"), 5.0)
    monkeypatch.undo()
    assert (pool.outstanding("mon"), pool.threads()) == (0, 0)
    pool.call("mon", lambda: sent.append("osd pool ls"), 5.0)
    assert sent == ["osd pool ls"]
