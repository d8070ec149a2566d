"""Object I/O through librados with a timeout on every call (librados' own calls block, so each is an
aio operation whose completion is awaited with a bound). Only this file and rbd.py use the bindings."""

import errno
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..base import BenchError, OpTimeout

REMOVE_DEPTH = 64  # removals in flight when scratch is cleaned up (of our own objects, in our own pool)
LIST_SECONDS = 60.0  # a listing not ended by then (a PG of the pool not active) is given up; the next pass lists again


class _Waiter:
    """The completion callback's target. It owns the librados op object (`keep`, created by the caller)
    and releases it exactly once, after librados has completed it: an op whose wait timed out is released
    by the late completion, never while librados may still use it."""

    def __init__(self, keep: Optional[Tuple[Any, Any]] = None) -> None:
        self.event = threading.Event()
        self.result: Any = None
        self.keep = keep
        self._lock = threading.Lock()
        self._abandoned = False

    def done(self, completion: Any, *extra: Any) -> None:
        self.result = (completion, extra)
        with self._lock:
            self.event.set()
            if self._abandoned:
                self._release()

    def finish(self, completed: bool) -> None:
        with self._lock:
            if completed or self.event.is_set():
                self._release()
            else:
                self._abandoned = True

    def _release(self) -> None:
        if self.keep is not None:
            op, _outputs = self.keep
            op.release()
            self.keep = None  # the outputs (omap iterators librados filled) may now be freed


class RadosIO:
    def __init__(self, ioctx: Any, timeout: float, stopping: Optional[threading.Event] = None) -> None:
        self.ioctx = ioctx
        self.timeout = timeout
        self.stopping = stopping  # set when the module shuts down: long removals stop between ops
        self._lock = threading.Lock()
        self._walks = 0  # listings still running in librados (list_objects)
        self._closing = False

    def _wait(
        self,
        start: Callable[[Callable[..., None]], Any],
        what: str,
        timeout: Optional[float],
        keep: Optional[Tuple[Any, Any]] = None,
    ) -> Tuple[float, Any]:
        waiter = _Waiter(keep)
        t0 = time.monotonic()
        completion = start(waiter.done)
        completed = waiter.event.wait(self.timeout if timeout is None else timeout)
        waiter.finish(completed)
        if not completed:
            raise OpTimeout("{}: no answer in {:.1f} s".format(what, self.timeout if timeout is None else timeout))
        elapsed = time.monotonic() - t0
        rv = completion.get_return_value()
        if rv < 0:
            raise BenchError("{}: error {}".format(what, rv))
        return elapsed, waiter.result

    def write_full(self, obj: str, data: bytes, timeout: Optional[float] = None) -> float:
        return self._wait(lambda cb: self.ioctx.aio_write_full(obj, data, oncomplete=cb), "write " + obj, timeout)[0]

    def read(self, obj: str, length: int, timeout: Optional[float] = None) -> float:
        return self._wait(lambda cb: self.ioctx.aio_read(obj, length, 0, cb), "read " + obj, timeout)[0]

    def remove(self, obj: str, timeout: Optional[float] = None) -> None:
        try:
            self._wait(lambda cb: self.ioctx.aio_remove(obj, oncomplete=cb), "remove " + obj, timeout)
        except BenchError as exc:
            if "error -2" not in str(exc):  # already gone is fine
                raise

    def remove_many(self, names: List[str], depth: int = REMOVE_DEPTH) -> None:
        """Remove objects with up to `depth` removals in flight (already gone is fine). Scratch of a
        cancelled round can be thousands of objects: one at a time, that takes seconds."""
        slots = threading.Semaphore(depth)
        lock = threading.Lock()
        errors: List[Tuple[str, int]] = []

        def on_done(name: str) -> Callable[..., None]:
            def done(completion: Any, *_: Any) -> None:
                rv = completion.get_return_value()
                if rv < 0 and rv != -errno.ENOENT:
                    with lock:
                        errors.append((name, rv))
                slots.release()

            return done

        for name in names:
            if self.stopping is not None and self.stopping.is_set():
                break  # the in-flight ones are still awaited below; the rest waits for the next mgr
            if not slots.acquire(timeout=self.timeout):
                raise OpTimeout("remove: no removal answered in {:.1f} s".format(self.timeout))
            self.ioctx.aio_remove(name, oncomplete=on_done(name))  # the ioctx tracks its completions
        for _ in range(depth):  # every removal answered before we return
            if not slots.acquire(timeout=self.timeout):
                raise OpTimeout("remove: removals still in flight after {:.1f} s".format(self.timeout))
        if errors:
            raise BenchError("remove {}: error {} ({} failed)".format(errors[0][0], errors[0][1], len(errors)))
        if self.stopping is not None and self.stopping.is_set():
            raise BenchError("removal stopped: the module is shutting down")

    def write_op(self, obj: str, build: Callable[[Any], None], what: str, timeout: Optional[float] = None) -> float:
        import rados

        op = rados.WriteOp()
        op.create()  # released by the waiter once librados is done with it
        build(op)
        return self._wait(
            lambda cb: self.ioctx.operate_aio_write_op(op, obj, oncomplete=cb), what, timeout, (op, None)
        )[0]

    def omap_set(self, obj: str, values: Dict[str, bytes], timeout: Optional[float] = None) -> float:
        keys, vals = tuple(values), tuple(values.values())
        return self.write_op(obj, lambda op: self.ioctx.set_omap(op, keys, vals), "omap set " + obj, timeout)

    def omap_remove(self, obj: str, keys: List[str], timeout: Optional[float] = None) -> float:
        return self.write_op(obj, lambda op: self.ioctx.remove_omap_keys(op, tuple(keys)), "omap rm " + obj, timeout)

    def omap_list(self, obj: str, max_return: int, timeout: Optional[float] = None) -> float:
        import rados

        op = rados.ReadOp()
        op.create()
        # The returned iterator is where librados writes the answer: it must outlive the op's completion.
        outputs = self.ioctx.get_omap_keys(op, "", max_return)
        return self._wait(
            lambda cb: self.ioctx.operate_aio_read_op(op, obj, oncomplete=cb),
            "omap list " + obj,
            timeout,
            (op, outputs),
        )[0]

    def omap_get(self, obj: str, keys: List[str], timeout: Optional[float] = None) -> float:
        import rados

        op = rados.ReadOp()
        op.create()
        outputs = self.ioctx.get_omap_vals_by_keys(op, tuple(keys))  # must outlive the completion, as above
        return self._wait(
            lambda cb: self.ioctx.operate_aio_read_op(op, obj, oncomplete=cb), "omap get " + obj, timeout, (op, outputs)
        )[0]

    def list_objects(self, prefix: str, limit: int, timeout: float = LIST_SECONDS) -> List[str]:
        """Up to `limit` names of the namespace starting with prefix. librados' listing blocks while a PG
        of the pool is not active (peering after a split) and cannot be cancelled: it runs in a thread of
        its own, and OpTimeout after `timeout` s ends the wait (the ioctx is closed when the walk ends)."""
        out: List[str] = []
        failed: List[BaseException] = []
        ended = threading.Event()

        def walk() -> None:
            try:
                for obj in self.ioctx.list_objects():
                    if obj.key.startswith(prefix):
                        out.append(obj.key)
                        if len(out) >= limit:
                            break
            except Exception as exc:
                failed.append(exc)
            finally:
                with self._lock:
                    ended.set()
                    self._walks -= 1
                    close = self._closing and not self._walks
                if close:
                    self.ioctx.close()

        with self._lock:
            self._walks += 1
        threading.Thread(target=walk, name="perfwatch-list", daemon=True).start()
        if not ended.wait(timeout):
            raise OpTimeout("list {}*: no full answer in {:.0f} s (a PG not active?)".format(prefix, timeout))
        if failed:
            raise BenchError("list {}*: {}".format(prefix, failed[0]))
        return list(out)

    def close(self) -> None:
        """Close the ioctx now, or when the last listing still blocked in librados ends."""
        with self._lock:
            self._closing = True
            if self._walks:
                return
        self.ioctx.close()


def open_io(adapter: Any, timeout: Callable[[], float], pool: str, namespace: str) -> RadosIO:
    """A RadosIO on pool/namespace through the adapter's ioctx, with the request timeout of now."""
    ioctx = adapter.open_ioctx(pool)
    ioctx.set_namespace(namespace)
    return RadosIO(ioctx, timeout())
