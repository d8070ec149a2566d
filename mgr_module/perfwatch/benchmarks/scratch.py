"""Where benchmarks may write: the scratch pool and namespace, created only when allowed."""

import time
from typing import Any, Callable, Dict, Optional, Tuple

from .base import BenchError


def scratch_location(options: Dict[str, Any]) -> Tuple[str, str]:
    return str(options["scratch_pool"]), str(options["scratch_namespace"])


OWNER_APPLICATION = "perfwatch"  # the pool application perfwatch enables on the scratch pool it creates
# Applications that may sit beside ours: librbd enables "rbd" on a pool it makes images in.
TOLERATED_APPLICATIONS = ("rbd",)


def ownership_problem(pool: str, applications: Dict[str, Any]) -> Optional[str]:
    """Why perfwatch may not write into an existing pool, or None when the pool is its own: tagged with
    the perfwatch application (as perfwatch tags the pool it creates), and used by nothing else."""
    if OWNER_APPLICATION not in applications:
        if applications:
            return (
                "scratch pool {!r} is not perfwatch's: it belongs to {} (no {!r} application tag). perfwatch writes "
                "only into a pool of its own: set mgr/perfwatch/scratch_pool to a pool name that does not exist "
                "yet, and perfwatch creates and tags it".format(
                    pool, "application " + ", ".join(sorted(applications)), OWNER_APPLICATION
                )
            )
        return (
            "scratch pool {!r} is not perfwatch's: it has no application tag. perfwatch writes only into a pool "
            "it created: set mgr/perfwatch/scratch_pool to a pool name that does not exist yet (perfwatch creates "
            "and tags it), or, if this empty pool was made for perfwatch by hand, tag it with "
            "`ceph osd pool application enable {} {}`".format(pool, pool, OWNER_APPLICATION)
        )
    others = sorted(set(applications) - {OWNER_APPLICATION} - set(TOLERATED_APPLICATIONS))
    if others:
        return "scratch pool {!r} is also used by {}: perfwatch writes only into a pool of its own".format(
            pool, ", ".join(others)
        )
    return None


def pool_problem(adapter: Any, options: Dict[str, Any]) -> Optional[str]:
    """Why a run may not write into the scratch pool now (None: it may; a missing pool it may create)."""
    pool, _ns = scratch_location(options)
    applications = adapter.pool_applications(pool)
    if applications is None:
        if not options["scratch_pool_create"]:
            return (
                "scratch pool {!r} does not exist and scratch_pool_create is off: create it and tag it with "
                "`ceph osd pool application enable {} {}`, or allow perfwatch to create it".format(
                    pool, pool, OWNER_APPLICATION
                )
            )
        return None
    return ownership_problem(pool, applications)


def ensure_pool(adapter: Any, options: Dict[str, Any]) -> Tuple[int, int]:
    """(pool id, pg_num) of the scratch pool: created (and tagged) when missing and allowed; BenchError
    when it exists but is not perfwatch's."""
    pool, _ns = scratch_location(options)
    problem = pool_problem(adapter, options)
    if problem:
        raise BenchError(problem)
    found = adapter.pool(pool)
    if found is None:
        adapter.create_pool(pool, int(options["scratch_pool_pg_num"]), OWNER_APPLICATION)
        found = adapter.pool(pool)
        if found is None:
            raise BenchError("scratch pool {!r} was created but is not in the OSD map yet".format(pool))
        wait_for_primaries(adapter, pool, found)
    return found


POOL_READY_SECONDS = 60.0  # a new pool's PGs peer in seconds; the run waits for them, not fails on them


def wait_for_primaries(
    adapter: Any,
    pool: str,
    found: Tuple[int, int],
    timeout: float = POOL_READY_SECONDS,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """After creating the pool: wait until the mgr knows an acting primary for each of its PGs, so the
    first run (and the heavy-round guard, which counts unknown PGs as unclean) finds it ready."""
    pool_id, pg_num = found
    deadline = clock() + timeout
    while len(adapter.pg_primaries(pool_id)) < pg_num:
        if clock() >= deadline:
            raise BenchError(
                "scratch pool {!r} was created, but after {:.0f} s the mgr knows a primary for only {} of its "
                "{} PGs: are enough OSDs up?".format(pool, timeout, len(adapter.pg_primaries(pool_id)), pg_num)
            )
        sleep(1.0)


LIST_BATCH = 10000  # names listed at a time
PASS_SECONDS = 300.0  # one cleanup pass removes for at most this long; the next pass goes on


def remove_objects_with_prefix(
    io: Any, prefix: str, log: Any, budget: float = PASS_SECONDS, clock: Callable[[], float] = time.monotonic
) -> int:
    """Remove the namespace's objects whose name starts with prefix: batch after batch until none is
    left, for at most `budget` seconds; raises BenchError when some remain then, so the scratch entry
    is kept and the next pass goes on. A round cut short by a failover can leave tens of thousands."""
    started = clock()
    removed = 0
    while True:
        names = io.list_objects(prefix, limit=LIST_BATCH)
        if not names:
            break
        io.remove_many(names)
        removed += len(names)
        if clock() - started > budget:
            log.info("removed %d scratch objects %s* in %.0f s; more remain", removed, prefix, clock() - started)
            raise BenchError("scratch objects {}* remain after {:.0f} s: continuing next pass".format(prefix, budget))
    if removed:
        elapsed = clock() - started
        log.info(
            "removed %d scratch objects %s* in %.1f s (%.0f objects/s)",
            removed, prefix, elapsed, removed / elapsed if elapsed > 0 else float(removed),
        )  # fmt: skip
    return removed


def cleanup_prefixed(io_factory: Any, scratch: Dict[str, Any], log: Any) -> None:
    """The cleanup of a kind that registered {"pool", "namespace", "prefix"}: remove those objects."""
    io = io_factory(scratch["pool"], scratch["namespace"])
    try:
        remove_objects_with_prefix(io, scratch["prefix"], log)
    finally:
        io.close()
