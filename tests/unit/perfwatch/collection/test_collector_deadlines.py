"""The collector's per-OSD deadlines (2 x request_timeout from when it asked): an answer counts only if it
came in time, judged by when the adapter's thread handed it over, not by when the collecting thread got
to it, so a late answer is late even while other answers keep the queue from running empty. Real threads and
time; the adapter is a fake whose answers come when the test says."""

from __future__ import annotations

import threading
import time
import types
from collections.abc import Callable, Sequence
from typing import Any

from perfwatch.collection.collector import Collector, Settings
from perfwatch.collection.osd_reads import COMMANDS
from tests.unit.fakes import FakeAdapter
from tests.unit.perfwatch.collection.test_collector import parsed


class TimedAdapter(FakeAdapter):
    """Answers each OSD after delays[osd] seconds from a thread of its own; submitting slow_submit[osd]
    blocks the collecting thread that long first (and then answers at once)."""

    def __init__(self, delays: dict[int, float], slow_submit: dict[int, float]) -> None:
        super().__init__(len(delays))
        self.delays = delays
        self.slow_submit = slow_submit
        self.threads: list[threading.Thread] = []

    def submit_osd_texts(
        self, osd_id: int, commands: Sequence[dict[str, Any]], timeout: float, done: Callable[[Any], None]
    ) -> None:
        answers = [self.tell_osd_text(osd_id, c, timeout) for c in commands]
        if osd_id in self.slow_submit:
            time.sleep(self.slow_submit[osd_id])
            done(answers)
            return

        def later() -> None:
            time.sleep(self.delays[osd_id])
            done(answers)

        thread = threading.Thread(target=later, daemon=True)
        self.threads.append(thread)
        thread.start()


def errors_of(collector: Collector) -> set[tuple[str, str]]:
    fams = parsed(collector)
    return {(s.labels["ceph_daemon"], s.labels["reason"]) for s in fams.get("ceph_perfwatch_fetch_errors", [])}


def read_osds(collector: Collector) -> set[str]:
    fams = parsed(collector)
    return {s.labels["ceph_daemon"] for s in fams["ceph_perfwatch_daemon_up"] if s.value == 1}


def test_an_answer_that_came_after_its_deadline_is_a_timeout_even_when_others_wait_beside_it() -> None:
    """osd.0 answers at 0.3 s, past its 0.2 s; the collecting thread is held up until 0.4 s submitting
    osd.1, so both answers wait in the queue together when it looks: osd.0's is late, osd.1's is not."""
    assert len(COMMANDS) == 1  # the deadline below is request_timeout
    adapter = TimedAdapter({0: 0.3, 1: 0.0}, slow_submit={1: 0.4})
    collector = Collector(adapter)
    collector.collect(Settings(request_timeout=0.2, max_in_flight=2))
    for thread in adapter.threads:
        thread.join(5)
    assert errors_of(collector) == {("osd.0", "timeout")}
    assert read_osds(collector) == {"osd.1"}


def test_answers_in_time_all_count_however_many_arrive_at_once() -> None:
    adapter = TimedAdapter({i: 0.05 for i in range(20)}, slow_submit={})
    collector = Collector(adapter)
    collector.collect(Settings(request_timeout=1.0, max_in_flight=20))
    assert errors_of(collector) == set()
    assert read_osds(collector) == {f"osd.{i}" for i in range(20)}


def test_a_late_answer_arriving_in_the_next_cycle_is_not_taken_for_that_cycles_answer() -> None:
    """osd.0 misses its deadline in the first cycle; its answer lands meanwhile in that cycle's queue, never
    in the next cycle's: the second cycle reads it afresh."""
    adapter = TimedAdapter({0: 0.5, 1: 0.0}, slow_submit={})
    collector = Collector(adapter)
    collector.collect(Settings(request_timeout=0.1, max_in_flight=2))
    assert errors_of(collector) == {("osd.0", "timeout")}
    adapter.delays[0] = 0.0
    collector.collect(Settings(request_timeout=0.1, max_in_flight=2))
    assert read_osds(collector) == {"osd.0", "osd.1"}
    for thread in adapter.threads:
        thread.join(5)


class _Clock:
    """monotonic() for the collector: 100.0 until the answer is stamped; the stamp (from the answering
    thread) just before the deadline; every reading after it just after the deadline."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.stamped = threading.Event()
        self.answering: threading.Thread | None = None

    def monotonic(self) -> float:
        if threading.current_thread() is self.answering and not self.stamped.is_set():
            self.stamped.set()
            return self.deadline - 0.001
        return self.deadline + 0.001 if self.stamped.is_set() else 100.0


def test_an_answer_stamped_before_its_deadline_counts_though_the_clock_is_read_before_it_is_queued(
    monkeypatch: Any,
) -> None:
    """The answering thread stamps its answer 1 ms before the deadline and is held 0.3 s before the answer
    reaches the queue; the collecting thread meanwhile finds the queue empty and reads the clock past the
    deadline. Stamp and put are one step for the collecting thread's drain and clock reading, so the answer
    counts, not as a timeout."""
    import queue as queue_module

    import perfwatch.collection.osd_reads as osd_reads_module

    clock = _Clock(deadline=100.0 + 1.0 * len(COMMANDS))
    held: dict[str, Any] = {}

    class HeldQueue(queue_module.Queue):  # type: ignore[type-arg]
        def put(self, item: Any, block: bool = True, timeout: float | None = None) -> None:
            time.sleep(0.3)  # the answering thread, preempted between its stamp and its put
            super().put(item, block, timeout)

        def get(self, block: bool = True, timeout: float | None = None) -> Any:
            if "thread" not in held:  # the first wait: the answer comes (its thread stamps it), none queued yet
                held["thread"] = clock.answering = threading.Thread(target=held["answer"], daemon=True)
                clock.answering.start()
                clock.stamped.wait(5)
                raise queue_module.Empty
            return super().get(block, timeout)

    class OneAnswer(FakeAdapter):
        def submit_osd_texts(
            self, osd_id: int, commands: Sequence[dict[str, Any]], timeout: float, done: Callable[[Any], None]
        ) -> None:
            answers = [self.tell_osd_text(osd_id, c, timeout) for c in commands]
            held["answer"] = lambda: done(answers)

    monkeypatch.setattr(osd_reads_module, "queue", types.SimpleNamespace(Queue=HeldQueue, Empty=queue_module.Empty))
    monkeypatch.setattr(osd_reads_module, "time", types.SimpleNamespace(monotonic=clock.monotonic, time=time.time))
    collector = Collector(OneAnswer(1))
    collector.collect(Settings(request_timeout=1.0, max_in_flight=1))
    held["thread"].join(5)
    assert read_osds(collector) == {"osd.0"}, errors_of(collector)
