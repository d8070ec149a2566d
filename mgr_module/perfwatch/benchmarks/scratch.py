"""Where benchmarks may write: the scratch pool and namespace, created only when allowed."""

from typing import Any, Dict, Tuple

from .base import BenchError


def scratch_location(options: Dict[str, Any]) -> Tuple[str, str]:
    return str(options["scratch_pool"]), str(options["scratch_namespace"])


def ensure_pool(adapter: Any, options: Dict[str, Any]) -> Tuple[int, int]:
    """(pool id, pg_num) of the scratch pool; creates it when scratch_pool_create allows."""
    pool, _ns = scratch_location(options)
    found = adapter.pool(pool)
    if found is None:
        if not options["scratch_pool_create"]:
            raise BenchError(
                "scratch pool {!r} does not exist and scratch_pool_create is off: create it, "
                "or set mgr/perfwatch/scratch_pool to a pool the module may write to".format(pool)
            )
        adapter.create_pool(pool, int(options["scratch_pool_pg_num"]), "perfwatch")
        found = adapter.pool(pool)
        if found is None:
            raise BenchError("scratch pool {!r} was created but is not in the OSD map yet".format(pool))
    return found


PER_PASS = 10000


def remove_objects_with_prefix(io: Any, prefix: str, log: Any) -> int:
    """Remove the namespace's objects whose name starts with prefix, at most PER_PASS at a time;
    raises BenchError when more remain, so the scratch entry is kept and the next pass continues."""
    names = io.list_objects(prefix, limit=PER_PASS + 1)
    io.remove_many(names[:PER_PASS])
    if names:
        log.info("removed %d scratch objects %s*", min(len(names), PER_PASS), prefix)
    if len(names) > PER_PASS:
        raise BenchError("more than {} scratch objects {}*: continuing next pass".format(PER_PASS, prefix))
    return min(len(names), PER_PASS)


def cleanup_prefixed(io_factory: Any, scratch: Dict[str, Any], log: Any) -> None:
    """The cleanup of a kind that registered {"pool", "namespace", "prefix"}: remove those objects."""
    io = io_factory(scratch["pool"], scratch["namespace"])
    try:
        remove_objects_with_prefix(io, scratch["prefix"], log)
    finally:
        io.close()
