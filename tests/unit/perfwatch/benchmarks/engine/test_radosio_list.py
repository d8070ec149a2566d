"""RadosIO.list_objects: librados' listing blocks while a PG of the pool is not active (peering after a
split) and cannot be cancelled; the wait for it is bounded, and the ioctx outlives the blocked walk."""

import threading
from collections.abc import Iterator

import pytest

from perfwatch.benchmarks.base import BenchError, OpTimeout
from perfwatch.benchmarks.engine.rados_io import RadosIO


class Obj:
    def __init__(self, key: str) -> None:
        self.key = key


class ListingIoctx:
    """An ioctx whose listing yields `names`, then blocks until `peered` is set (a PG peering)."""

    def __init__(self, names: list[str], block: bool = False, fail: Exception | None = None) -> None:
        self.names = names
        self.peered = threading.Event()
        if not block:
            self.peered.set()
        self.fail = fail
        self.closed = 0
        self.closed_while_listing = False
        self.listing = False

    def list_objects(self) -> Iterator[Obj]:
        self.listing = True
        try:
            for name in self.names:
                yield Obj(name)
            self.peered.wait()
            if self.fail is not None:
                raise self.fail
        finally:
            self.listing = False

    def close(self) -> None:
        self.closed += 1
        self.closed_while_listing = self.closed_while_listing or self.listing


def test_lists_names_with_the_prefix_up_to_the_limit() -> None:
    io = RadosIO(ListingIoctx(["run1.0", "other.0", "run1.1", "run1.2"]), timeout=5.0)
    assert io.list_objects("run1.", limit=10) == ["run1.0", "run1.1", "run1.2"]
    assert io.list_objects("run1.", limit=2) == ["run1.0", "run1.1"]


def test_a_listing_blocked_by_a_pg_not_active_times_out_and_the_ioctx_closes_only_when_it_ends() -> None:
    ioctx = ListingIoctx(["run1.0"], block=True)
    io = RadosIO(ioctx, timeout=5.0)
    with pytest.raises(OpTimeout, match="no full answer in 0 s"):
        io.list_objects("run1.", limit=10, timeout=0.2)
    io.close()
    assert ioctx.closed == 0  # librados still walks the ioctx: closing it now would free it under the walk
    ioctx.peered.set()
    for _ in range(100):
        if ioctx.closed:
            break
        threading.Event().wait(0.02)
    assert ioctx.closed == 1 and not ioctx.closed_while_listing


def test_a_failed_listing_is_a_bench_error_and_close_is_immediate_after_it() -> None:
    ioctx = ListingIoctx(["run1.0"], fail=RuntimeError("EIO"))
    io = RadosIO(ioctx, timeout=5.0)
    with pytest.raises(BenchError, match="EIO"):
        io.list_objects("run1.", limit=10)
    io.close()
    assert ioctx.closed == 1
