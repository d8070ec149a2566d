"""Blocking calls with a timeout, and never a pile of them to one daemon. Pure threading: no Ceph here.

librados' command calls block until the daemon answers (the binding ignores its `timeout`), so each runs in
a pool thread and the caller waits at most its timeout. A call that timed out stays outstanding for its key
(one OSD, or the mons) until librados returns; what would pile up is refused (Busy, PoolBusy: submit()),
never queued, so even a cluster whose every OSD hangs costs a bounded number of threads. Threads are reused;
an idle one ends after `idle_seconds`. call() waits in the caller's thread; submit() hands the answer to a
callback in the pool's thread. Why: docs/decisions/why-librados-not-send-command.md.
"""

import collections
import contextlib
import threading
import time
from typing import Any, Callable, Deque, Dict, Hashable, List, Optional

from .cpu_clock import reading, thread_cpu_clock


class Busy(Exception):
    """The key has as many calls outstanding as it may have."""

    def refusal(self, what: str) -> str:
        """Why a call to `what` was not sent, for its FetchError."""
        return "{} has not answered an earlier request ({})".format(what, self)


class PoolBusy(Busy):
    """Not this key's doing: the pool has as many calls out as it may have in all, or no thread to start."""

    def refusal(self, what: str) -> str:
        return "{} not asked: {}".format(what, self)


class TimedOut(Exception):
    """No answer within the caller's timeout; the call goes on in its thread."""


class _Failed:
    """What submit()'s done is given when the call raised."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


def failure(value: Any) -> Optional[BaseException]:
    """The exception a submitted call raised, from the value its done was given; None if it returned."""
    return value.error if isinstance(value, _Failed) else None


class _Call:
    def __init__(self, key: Hashable, fn: Callable[[], Any], done: Callable[[Any], None], sent: float) -> None:
        self.key = key
        self.fn = fn
        self.done = done
        self.sent = sent


class CallPool:
    def __init__(
        self,
        name: str = "perfwatch-call",
        idle_seconds: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        max_outstanding: int = 512,
    ) -> None:
        self._name = name
        self._max_outstanding = max_outstanding
        self._total = 0  # calls outstanding, all keys
        self._idle_seconds = idle_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._jobs: Deque[_Call] = collections.deque()
        self._idle = 0  # threads waiting for a job
        self._threads = 0  # threads alive (idle or calling)
        self._started = 0  # threads ever started, for names
        self._outstanding: Dict[Hashable, List[_Call]] = {}
        self._cpu_clock = thread_cpu_clock()
        self._cpu = 0.0  # CPU seconds the pool's threads spent in calls

    def call(
        self,
        key: Hashable,
        fn: Callable[[], Any],
        timeout: float,
        limit: int = 1,
        retry_after: Optional[float] = None,
        on_retry: Optional[Callable[[float], None]] = None,
    ) -> Any:
        """fn()'s value, or its exception; TimedOut after `timeout` s; Busy as submit()."""
        answered = threading.Event()
        got: List[Any] = []

        def done(value: Any) -> None:
            got.append(value)
            answered.set()

        self.submit(key, fn, done, limit, retry_after, on_retry)
        if not answered.wait(timeout):
            raise TimedOut("no answer in {:.0f} s".format(timeout))
        if isinstance(got[0], _Failed):
            raise got[0].error
        return got[0]

    def submit(
        self,
        key: Hashable,
        fn: Callable[[], Any],
        done: Callable[[Any], None],
        limit: int = 1,
        retry_after: Optional[float] = None,
        on_retry: Optional[Callable[[float], None]] = None,
    ) -> None:
        """Run fn() in a pool thread and return at once; that thread then calls done(fn's value), or
        done(_Failed(exception)) (see failure()), after the call stopped counting as outstanding. The
        caller keeps its own deadline: a call that never returns never calls done. Busy when `key` has
        `limit` calls out, or any call out that has waited less than `retry_after` s (None: calls up to
        `limit` at once), or any call out while half of `max_outstanding` are out in all; PoolBusy when
        all of them are. on_retry(seconds the oldest has waited) is called when a call is sent beside an
        unanswered one."""
        waited = None
        with self._lock:
            out = self._outstanding.get(key, [])
            if out:
                waited = self._clock() - out[0].sent
                if len(out) >= max(1, limit) or (retry_after is not None and waited < retry_after):
                    raise Busy("{} call(s) unanswered, the oldest for {:.0f} s".format(len(out), waited))
                if self._total >= self._max_outstanding // 2:  # the rest is kept for first calls
                    raise Busy(
                        "unanswered for {:.0f} s; no second call while {} of at most {} are unanswered in all".format(
                            waited, self._total, self._max_outstanding
                        )
                    )
            if self._total >= self._max_outstanding:
                raise PoolBusy("{} calls unanswered in all, as many as may be".format(self._total))
            self._total += 1
            job = _Call(key, fn, done, self._clock())
            self._outstanding.setdefault(key, []).append(job)
            self._jobs.append(job)
            if len(self._jobs) > self._idle:
                try:
                    self._start_thread()
                except RuntimeError:  # the process is at its thread limit: the call is not sent at all
                    self._jobs.remove(job)
                    self._threads -= 1
                    self._total -= 1
                    out = self._outstanding.get(key, [])
                    out.remove(job)
                    if not out:
                        self._outstanding.pop(key, None)
                    raise PoolBusy("no thread to send it with (the process is at its thread limit)") from None
            else:
                self._wake.notify()
        if waited is not None and on_retry is not None:
            with contextlib.suppress(Exception):  # the call is sent: a failing note of it must not say otherwise
                on_retry(waited)

    def cpu_seconds(self) -> float:
        """CPU seconds the pool's threads have spent in calls, in all, each call's counted before its answer is
        handed over (0 where the platform has no per-thread CPU clock)."""
        with self._lock:
            return self._cpu

    def _cpu_now(self) -> float:
        """This thread's CPU seconds; NaN when there is no clock or it fails (nothing may end a pool thread
        between taking a job and handing it over: its key would stay busy for good)."""
        return reading(self._cpu_clock)

    def outstanding(self, key: Hashable) -> int:
        with self._lock:
            return len(self._outstanding.get(key, []))

    def threads(self) -> int:
        with self._lock:
            return self._threads

    def _start_thread(self) -> None:  # with the lock held
        self._threads += 1
        self._started += 1
        name = "{}-{}".format(self._name, self._started)
        threading.Thread(target=self._work, name=name, daemon=True).start()

    def _work(self) -> None:
        while True:
            with self._lock:
                while not self._jobs:
                    self._idle += 1
                    woken = self._wake.wait(self._idle_seconds)
                    self._idle -= 1
                    if not woken and not self._jobs:
                        self._threads -= 1
                        return
                job = self._jobs.popleft()
            cpu0 = self._cpu_now()
            try:
                got: Any = job.fn()
            except BaseException as exc:  # handed to the caller, whatever it is
                got = _Failed(exc)
            # Counted before the caller has the answer, so a cycle that has its answers has their CPU. A call
            # that outlived its caller's deadline counts when it ends, in whichever cycle that is.
            spent = self._cpu_now() - cpu0
            if not spent > 0.0:  # a failed reading (NaN) or none
                spent = 0.0
            with self._lock:
                self._cpu += spent
                out = self._outstanding.get(job.key, [])
                if job in out:
                    out.remove(job)
                if not out:
                    self._outstanding.pop(job.key, None)
                self._total -= 1
            with contextlib.suppress(BaseException):  # the caller's hand-over failing must not end a pool thread
                job.done(got)
