"""Keep a fixed number of asynchronous operations in flight for a time: the engine of the timed rounds
(rados, rbd). The caller says how to submit one op; this counts completions and latencies."""

import threading
import time
from typing import Any, Callable, List, NamedTuple, Optional

from ..base import BenchError, Context

# submit(i, on_complete) starts op number i and returns its completion object; on_complete is called
# by librados/librbd as on_complete(completion, *extra) when the op ends.
Submit = Callable[[int, Callable[..., None]], Any]


class LoopResult(NamedTuple):
    completed: int
    elapsed: float
    latencies: List[float]
    submitted: int = 0  # ops started; below what the time allowed when max_ops ended the round early
    limited: bool = False  # max_ops (a capacity budget) ended the round before its time

    @property
    def ops_per_second(self) -> float:
        return self.completed / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def mean_latency(self) -> float:
        return sum(self.latencies) / len(self.latencies) if self.latencies else 0.0


def run_at_queue_depth(
    ctx: Context,
    seconds: float,
    depth: int,
    submit: Submit,
    label: str,
    progress_base: float,
    max_ops: Optional[int] = None,
    recheck: Optional[Callable[[], None]] = None,
) -> LoopResult:
    """Keep `depth` ops in flight for `seconds`, or until `max_ops` ops were started (a capacity budget:
    not an error, the round just ends early). `recheck`, called between submissions, raises to abort
    (free space crossing the nearfull margin). Whatever stops the loop (the end, cancel, the deadline,
    a recheck), the ops in flight are waited for before returning or raising, so none runs on behind
    the cleanup."""
    slots = threading.Semaphore(depth)
    lock = threading.Lock()
    latencies: List[float] = []
    failures: List[int] = []
    keep: List[Any] = []  # completions stay referenced until they fire

    def make_done(started: float) -> Callable[..., None]:
        def done(completion: Any, *_: Any) -> None:
            with lock:
                rv = completion.get_return_value()
                if rv < 0:
                    failures.append(rv)
                else:
                    latencies.append(time.monotonic() - started)
            slots.release()

        return done

    t0 = time.monotonic()
    i = 0
    try:
        while time.monotonic() < t0 + seconds and (max_ops is None or i < max_ops):
            if failures:  # the first failed op ends the round: the rest would fail alike (pool gone, full...)
                break
            ctx.check()
            if recheck is not None:
                recheck()
            if not slots.acquire(timeout=ctx.step_timeout(10)):
                raise BenchError("{}: no completion in 10 s".format(label))
            keep.append(submit(i, make_done(time.monotonic())))
            i += 1
            if i % 64 == 0:
                ctx.progress(progress_base + 0.5 * min(1.0, (time.monotonic() - t0) / seconds), label)
    finally:
        for _ in range(depth):
            if not slots.acquire(timeout=30):
                ctx.log.warning("%s: ops still in flight 30 s after the round", label)
                ctx.unsettled = True
                break
    elapsed = time.monotonic() - t0
    if failures:
        raise BenchError("{}: {} ops failed (first error {})".format(label, len(failures), failures[0]))
    limited = max_ops is not None and i >= max_ops
    return LoopResult(len(latencies), elapsed, latencies, i, limited)
