"""RadosIO.remove_many: bounded parallel removal of scratch objects, against a fake ioctx whose
completions fire from other threads, as librados' do."""

import errno
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from perfwatch.benchmarks.base import BenchError
from perfwatch.benchmarks.engine.rados_io import RadosIO


class Completion:
    def __init__(self, rv: int) -> None:
        self.rv = rv

    def get_return_value(self) -> int:
        return self.rv


class FakeIoctx:
    def __init__(self, results: dict[str, int], delay: float = 0.01) -> None:
        self.results = results
        self.delay = delay
        self.in_flight = 0
        self.most_in_flight = 0
        self.removed: list[str] = []
        self.lock = threading.Lock()

    def aio_remove(self, name: str, oncomplete: Callable[..., None]) -> Completion:
        completion = Completion(self.results.get(name, 0))
        with self.lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)

        def fire() -> None:
            time.sleep(self.delay)
            with self.lock:
                self.in_flight -= 1
                self.removed.append(name)
            oncomplete(completion)

        threading.Thread(target=fire, daemon=True).start()
        return completion


def test_removals_run_in_parallel_up_to_the_depth_and_all_finish_before_return() -> None:
    names = [f"obj-{i}" for i in range(200)]
    ioctx = FakeIoctx({"obj-7": -errno.ENOENT})  # already gone is fine
    started = time.monotonic()
    RadosIO(ioctx, timeout=5.0).remove_many(names, depth=16)
    elapsed = time.monotonic() - started
    assert sorted(ioctx.removed) == sorted(names) and ioctx.in_flight == 0
    assert 1 < ioctx.most_in_flight <= 16
    assert elapsed < 200 * 0.01 / 4, f"{elapsed:.2f} s: not parallel"


def test_a_failed_removal_is_an_error_after_all_have_answered() -> None:
    ioctx = FakeIoctx({"obj-3": -errno.EIO})
    with pytest.raises(BenchError, match="obj-3: error -5"):
        RadosIO(ioctx, timeout=5.0).remove_many([f"obj-{i}" for i in range(10)], depth=4)
    assert ioctx.in_flight == 0


def test_removals_that_never_answer_time_out() -> None:
    class Silent(FakeIoctx):
        def aio_remove(self, name: str, oncomplete: Callable[..., None]) -> Any:
            return Completion(0)

    with pytest.raises(BenchError, match=r"still in flight|no removal answered"):
        RadosIO(Silent({}), timeout=0.2).remove_many(["a", "b"], depth=2)
