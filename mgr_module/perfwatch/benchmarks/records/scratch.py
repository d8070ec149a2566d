"""The records of scratch data awaiting cleanup: the registry, run ids recovered from broken ones, and the
scratch pools perfwatch began to create. Pure."""

from typing import Any, Dict, Optional

from . import common


def _scratch_entry_ok(entry: Any) -> bool:
    return isinstance(entry, dict) and all(
        isinstance(entry[field], str) for field in common.SCRATCH_TEXT_FIELDS if field in entry
    )


def clean_scratch(data: Any) -> common.Cleaned:
    """bench/scratch: run id -> {"kind", "entries"}: what an unfinished run wrote, for its cleanup.

    Nothing here is dropped quietly: a run whose item is broken is reported in `recovered` (with its
    kind, or the kind its run id names) so that its scratch can still be found by its run-id prefix."""
    found, dropped = common.as_mapping(data, "the scratch registry")
    if found is None:
        return common.unusable(dropped[0])
    out: Dict[str, Dict[str, Any]] = {}
    recovered: Dict[str, str] = {}
    for run_id, item in found.items():
        kind = item.get("kind") if isinstance(item, dict) else None
        kind = kind if isinstance(kind, str) and common.NAME.match(kind) else common.kind_of_run_id(run_id)
        entries = item.get("entries") if isinstance(item, dict) else None
        if not run_id:
            dropped.append("scratch item with an empty run id")
            recovered.update(common.run_ids_in(repr(item)))
            continue
        if not isinstance(entries, list):
            dropped.append("scratch {}: no list of entries".format(run_id))
            recovered[run_id] = kind
            recovered.update(common.run_ids_in(repr(item)))
            continue
        good = [e for e in entries if _scratch_entry_ok(e)]
        if len(good) < len(entries):
            dropped.append("scratch {}: {} broken entries".format(run_id, len(entries) - len(good)))
            recovered[run_id] = kind
            recovered.update(common.run_ids_in(repr([e for e in entries if e not in good])))
        if len(good) > common.MAX_SCRATCH_ENTRIES:
            dropped.append("scratch {}: entries beyond {}".format(run_id, common.MAX_SCRATCH_ENTRIES))
            recovered[run_id] = kind
            good = good[: common.MAX_SCRATCH_ENTRIES]
        if not kind:  # no kind to clean it with: only its run id (the prefix of its objects) is left
            dropped.append("scratch {}: no kind".format(run_id))
            recovered[run_id] = ""
            continue
        out[run_id] = dict(item, kind=kind, entries=good)
    kinds = {run_id: item["kind"] for run_id, item in out.items()}
    for run_id in common.bound(out):
        recovered[run_id] = kinds[run_id]
        dropped.append("scratch {}: beyond {} runs".format(run_id, common.MAX_KEYS))
    return common.ok(out, dropped, recovered)


def clean_recovered(data: Any) -> common.Cleaned:
    """bench/recovered_scratch: run id -> kind ("" when unknown), of runs named by broken scratch records."""

    def problem(run_id: str, kind: Any) -> Optional[str]:
        return None if run_id and isinstance(kind, str) else "recovered run id {!r}: {!r}".format(run_id, kind)

    return common.clean_entries(data, "recovered run ids", problem)


def clean_pool_creations(data: Any) -> common.Cleaned:
    """bench/pool_creations: pool name -> {"pool_max": the highest pool id the OSD map had assigned when
    perfwatch decided to create the pool, "at": epoch seconds}: saved before `osd pool create`, dropped
    once the pool carries perfwatch's application tag."""

    def problem(pool: str, value: Any) -> Optional[str]:
        good = (
            bool(pool)
            and isinstance(value, dict)
            and common.is_int(value.get("pool_max"))
            and common.is_number(value.get("at"))
        )
        return None if good else "pool creation {!r}: {!r}".format(pool, value)

    return common.clean_entries(data, "pool creations", problem)
