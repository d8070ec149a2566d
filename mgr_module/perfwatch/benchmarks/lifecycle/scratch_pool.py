"""Where benchmarks may write: the scratch pool and namespace, created only when allowed."""

import threading
import time
from typing import Any, Callable, Dict, Optional, Tuple

from ...ceph.seam import FetchError
from ...common.daemon_counters.fetch_reasons import REASON_ERROR
from ..base import BenchError


def scratch_location(options: Dict[str, Any]) -> Tuple[str, str]:
    return str(options["scratch_pool"]), str(options["scratch_namespace"])


# The pool application perfwatch enables on the scratch pool it creates. No other may sit beside it:
# librbd does not tag perfwatch's pool "rbd" when the rbd kind makes its images there, so a pool tagged
# "rbd" too is someone's RBD pool that was tagged "perfwatch" as well.
OWNER_APPLICATION = "perfwatch"


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
    others = sorted(set(applications) - {OWNER_APPLICATION})
    if others:
        return "scratch pool {!r} is also used by {}: perfwatch writes only into a pool of its own".format(
            pool, ", ".join(others)
        )
    return None


def unfinished_creation(
    found: Optional[Tuple[int, int]], applications: Optional[Dict[str, Any]], record: Dict[str, Any]
) -> bool:
    """Whether a pool, found with no application at all, is the one perfwatch began to create when a mgr
    restart (enabling any module restarts the active mgr) cut it off between `osd pool create` and
    tagging. Before creating it, perfwatch recorded (`record`) the highest pool id the OSD map had
    assigned; Ceph never reuses a pool id, so a pool of that name with a higher id came after it."""
    return found is not None and not applications and found[0] > int(record["pool_max"])


def pool_problem(adapter: Any, options: Dict[str, Any], creations: Dict[str, Dict[str, Any]]) -> Optional[str]:
    """Why a run may not write into the scratch pool now (None: it may; a missing pool it may create,
    an untagged one whose creation it began it finishes). creations: BenchStore.pool_creations()."""
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
    record = creations.get(pool)
    if record is not None and unfinished_creation(adapter.pool(pool), applications, record):
        return None
    return ownership_problem(pool, applications)


_ENSURING = threading.Lock()  # one run at a time: two creating at once could record a mark above the pool's id


def ensure_pool(adapter: Any, options: Dict[str, Any], creations: Any, log: Any) -> Tuple[int, int]:
    """(pool id, pg_num) of the scratch pool: created and tagged when missing and allowed (the creation
    recorded first, in creations: a BenchStore), or tagged when a mgr restart cut its creation short;
    BenchError when it exists but is not perfwatch's."""
    with _ENSURING:
        return _ensure_pool(adapter, options, creations, log)


def _ensure_pool(adapter: Any, options: Dict[str, Any], creations: Any, log: Any) -> Tuple[int, int]:
    pool, _ns = scratch_location(options)
    begun = creations.pool_creations()
    problem = pool_problem(adapter, options, begun)
    if problem:
        raise BenchError(problem)
    found = adapter.pool(pool)
    if found is None:
        creations.begin_pool_creation(pool, adapter.pool_max())
        try:
            adapter.create_pool(pool, int(options["scratch_pool_pg_num"]))
        except FetchError as exc:
            if exc.reason == REASON_ERROR:  # the mon refused: no pool was made (a timeout leaves it unknown)
                creations.end_pool_creation(pool)
            raise
        adapter.tag_pool(pool, OWNER_APPLICATION)
        found = adapter.pool(pool)
        if found is None:
            raise BenchError("scratch pool {!r} was created but is not in the OSD map yet".format(pool))
        creations.end_pool_creation(pool)
        wait_for_primaries(adapter, pool, found)
    elif not adapter.pool_applications(pool):  # pool_problem found it to be an unfinished creation
        objects = adapter.pool_objects(pool)
        if objects is None:  # the mgr's df does not list it yet (just after a failover): not on a guess
            raise BenchError(
                "scratch pool {!r} is the pool perfwatch began to create, but the mgr has no object count for "
                "it yet: it is tagged by a later run once the count shows it empty".format(pool)
            )
        if objects:
            raise BenchError(
                "scratch pool {!r} is the pool perfwatch began to create, but it has no application tag and "
                "holds {} objects perfwatch did not write: not touching it. Tag it with `ceph osd pool "
                "application enable {} {}` if it is perfwatch's".format(pool, objects, pool, OWNER_APPLICATION)
            )
        log.warning(
            "scratch pool %s (id %d) was created by perfwatch but not tagged (the mgr restarted in between): "
            "tagging it with application %s now", pool, found[0], OWNER_APPLICATION,
        )  # fmt: skip
        adapter.tag_pool(pool, OWNER_APPLICATION)
        creations.end_pool_creation(pool)
        wait_for_primaries(adapter, pool, found)
    elif pool in begun:  # tagged meanwhile (by a concurrent run, or by hand)
        creations.end_pool_creation(pool)
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


S3_KEY_PREFIX = "perfwatch-probe."  # an S3 probe object's key: this, then the run id
IMAGE_PREFIX = "perfwatch."  # a scratch RBD image's name: this, then the run id


def entry_problem(
    run_id: str, entry: Dict[str, Any], applications: Callable[[str], Optional[Dict[str, Any]]]
) -> Optional[str]:
    """Why a registered scratch entry must not be acted on (None: clean it). Whatever the store says,
    perfwatch deletes only objects named with the run id, in a namespace of its own, in a pool that is
    its own (or an RGW index pool, where the omap probe writes): a tampered or corrupt entry naming
    other objects is never followed."""
    if "s3_key" in entry:
        return (
            None
            if entry["s3_key"] == S3_KEY_PREFIX + run_id
            else "S3 key {!r} is not {}'s".format(entry["s3_key"], run_id)
        )
    pool = entry.get("pool")
    if not isinstance(pool, str) or not pool:
        return "no pool"
    if "image" in entry:
        if entry["image"] != IMAGE_PREFIX + run_id:
            return "image {!r} is not {}'s".format(entry["image"], run_id)
        owners: Tuple[str, ...] = ("perfwatch",)
    elif "prefix" in entry:
        if entry["prefix"] != run_id:
            return "prefix {!r} is not the run id".format(entry["prefix"])
        if not entry.get("namespace"):
            return "no namespace of its own (the default namespace is never cleaned)"
        owners = ("perfwatch", "rgw")
    else:
        return "names no object, image or S3 key"
    apps = applications(pool)
    if apps is None:
        return "pool {!r} is gone (and its objects with it)".format(pool)
    if not any(owner in apps for owner in owners):
        return "pool {!r} is neither perfwatch's nor RGW's ({})".format(
            pool, ", ".join(sorted(apps)) or "no application"
        )
    return None


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
