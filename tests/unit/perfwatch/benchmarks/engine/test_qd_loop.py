"""run_at_queue_depth: the engine of the timed rados and rbd rounds, with completions that fire from
other threads, as librados' and librbd's do."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from perfwatch.benchmarks.base import BenchError
from perfwatch.benchmarks.engine.qd_loop import run_at_queue_depth


class Ctx:
    def __init__(self) -> None:
        self.unsettled = False
        self.log = type("Log", (), {"warning": lambda *a, **k: None})()

    def check(self) -> None:
        pass

    def step_timeout(self, wanted: float) -> float:
        return wanted

    def progress(self, fraction: float, message: str) -> None:
        pass


class Completion:
    def __init__(self, rv: int) -> None:
        self.rv = rv

    def get_return_value(self) -> int:
        return self.rv


def ops(rv: Callable[[int], int], submitted: list[int]) -> Callable[[int, Callable[..., None]], Completion]:
    def submit(i: int, done: Callable[..., None]) -> Completion:
        submitted.append(i)
        completion = Completion(rv(i))
        threading.Timer(0.001, done, args=(completion,)).start()
        return completion

    return submit


def test_a_round_of_good_ops_runs_its_time_with_depth_in_flight() -> None:
    submitted: list[int] = []
    result = run_at_queue_depth(Ctx(), 0.3, 4, ops(lambda i: 0, submitted), "writes", 0.0)  # type: ignore[arg-type]
    assert result.completed == len(submitted) > 10


def test_the_first_failed_op_ends_the_round_instead_of_failing_for_all_of_its_time() -> None:
    """The first failed op ends the round with its error: with the scratch pool deleted under an rbd round,
    every op would otherwise fail (one mgr log line each) until the round's time is up."""
    submitted: list[int] = []
    started = time.monotonic()
    with pytest.raises(BenchError, match=r"writes: \d+ ops failed \(first error -2\)"):
        run_at_queue_depth(Ctx(), 30, 4, ops(lambda i: -2 if i >= 10 else 0, submitted), "writes", 0.0)  # type: ignore[arg-type]
    assert time.monotonic() - started < 5
    assert len(submitted) < 10 + 4 + 4, "a failure stops new submissions within one depth of ops"


def test_ops_in_flight_are_awaited_before_the_round_raises() -> None:
    submitted: list[int] = []
    answered: list[int] = []

    def submit(i: int, done: Callable[..., None]) -> Completion:
        submitted.append(i)
        completion = Completion(-5)

        def fire() -> None:
            time.sleep(0.05)
            answered.append(i)
            done(completion)

        threading.Thread(target=fire, daemon=True).start()
        return completion

    with pytest.raises(BenchError, match="first error -5"):
        run_at_queue_depth(Ctx(), 10, 3, submit, "reads", 0.5)  # type: ignore[arg-type]
    assert sorted(answered) == submitted, "no op still in flight behind the cleanup"
