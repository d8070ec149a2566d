"""side_by_side.run_all: every job runs, at most `workers` at once, one failing job stops none of the others,
and the caller's thread is one of the workers."""

import logging
import threading

import pytest

from perfwatch_host_exporter import side_by_side


def test_every_job_runs_once_and_a_failing_one_stops_no_other(caplog: pytest.LogCaptureFixture) -> None:
    done: list[int] = []
    lock = threading.Lock()

    def job(n: int) -> None:
        if n % 3 == 0:
            raise RuntimeError(f"job {n} fails")
        with lock:
            done.append(n)

    with caplog.at_level(logging.ERROR):
        side_by_side.run_all([lambda n=n: job(n) for n in range(40)], workers=5)
    assert sorted(done) == [n for n in range(40) if n % 3]
    failed = sorted(str(r.exc_info[1]) for r in caplog.records if r.exc_info)  # each bug logged, not dropped
    assert failed == sorted(f"job {n} fails" for n in range(0, 40, 3))


@pytest.mark.parametrize("workers", [1, 3, 16])
def test_no_more_than_workers_run_at_once_and_that_many_do(workers: int) -> None:
    jobs = 12
    running, peak = 0, 0
    lock = threading.Lock()
    together = threading.Barrier(min(workers, jobs), timeout=20)  # the first wave must all be in at once

    def job(n: int) -> None:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        if n < min(workers, jobs):
            together.wait()
        with lock:
            running -= 1

    side_by_side.run_all([lambda n=n: job(n) for n in range(jobs)], workers=workers)
    assert peak == min(workers, jobs)


def test_the_caller_is_a_worker_and_nothing_is_started_for_one_job() -> None:
    threads: list[str] = []
    side_by_side.run_all([lambda: threads.append(threading.current_thread().name)], workers=8)
    assert threads == [threading.current_thread().name]
    side_by_side.run_all([], workers=8)  # nothing to do: returns


def test_a_process_at_its_thread_limit_still_runs_every_job(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refuse)
    done: list[int] = []
    side_by_side.run_all([lambda n=n: done.append(n) for n in range(7)], workers=4)
    assert sorted(done) == list(range(7))
