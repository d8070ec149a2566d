"""A daemon's counters as one row of values in the fixed layout of a counter table (counters.OSD_SPECS or
RGW_SPECS), and many daemons' rows rendered family by family. Pure.

A row is one tuple of numbers, not a Sample and a label tuple per value: at 10,000 OSDs those were 450,000
objects a cycle to make, keep and walk in every garbage collection (docs/decisions/collection-cost.md). Its
slots become exposition Columns, written by filling one template per table entry with the daemon's name and
the value. counters.extract_detail reads through the same layout, so the table's rules (spellings, loggers
tried in turn, the four ways of reading a value) live once.
"""

from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

from ..exposition import EXACT_INTEGERS, Column, Value, exposable
from ..metrics_model import Labels, Sample
from .counter_families import MEMPOOL_BYTES, MEMPOOL_ITEMS


class Slot(NamedTuple):
    """One series of each daemon: a table entry's value, or its _sum or _count."""

    entry: int  # index of the table entry (Spec) it comes from
    family: str
    suffix: str
    labels: Labels  # besides ceph_daemon


class Row(NamedTuple):
    """One daemon's reading: a value or None per slot of its layout, and the entries it lacks."""

    values: Tuple[Optional[Value], ...]
    missing: Tuple[str, ...]  # "logger.counter" of entries every release has that the daemon lacks
    unavailable: Tuple[str, ...]  # "logger.counter" of release-dependent entries its release lacks
    mempools: Tuple["Mempool", ...] = ()  # (pool, bytes, items) of the bluestore_cache_* pools


def number(raw: Any) -> Value:
    """exposable(), for an entry whose place says it must be a number (a latency's sum, a mempool's bytes),
    a numeric string too (as float() read them before): TypeError or ValueError when it is not, and the
    daemon's reading fails."""
    value = exposable(float(raw) if isinstance(raw, str) else raw)  # a numeric string read as its number
    if value is None:
        raise TypeError("{!r} is not a number".format(raw))
    return value


def as_float(value: Value) -> float:
    return float(value)  # "NaN", "+Inf" and "-Inf" parse as floats too


class Layout:
    """The slots of a counter table, and how to read one daemon's dump into them."""

    def __init__(self, specs: Sequence[Any]) -> None:
        """specs: counters.Spec entries (family, logger, names, read, labels, releases, other_loggers)."""
        self.specs = tuple(specs)
        slots: List[Slot] = []
        for i, spec in enumerate(self.specs):
            for suffix in ("_sum", "_count") if spec.read == "avg" else ("",):
                slots.append(Slot(i, spec.family, suffix, tuple(spec.labels)))
        self.slots = tuple(slots)
        self.names = tuple("{}.{}".format(spec.logger, spec.names[0]) for spec in self.specs)
        self.loggers = tuple(sorted({lg for spec in self.specs for lg in (spec.logger, *spec.other_loggers)}))
        # per entry, what read() needs of it, made once: how to read it, its spellings, the loggers to try,
        # whether only some releases have it, its name, and the empty slots it leaves when absent
        self._plan = tuple(
            (spec.read, tuple(spec.names), (spec.logger, *spec.other_loggers), bool(spec.releases), name,
             (None, None) if spec.read == "avg" else (None,))
            for spec, name in zip(self.specs, self.names)
        )  # fmt: skip

    def read(self, dump: Dict[str, Any], mempools: Tuple["Mempool", ...] = ()) -> Row:
        """One daemon's row from its `perf dump` (a dict of loggers: the whole dump, or only self.loggers)."""
        values: List[Optional[Value]] = []
        missing: List[str] = []
        unavailable: List[str] = []
        for how, names, loggers, optional, name, empty in self._plan:
            got: Tuple[Optional[Value], ...] = ()
            for logger_name in loggers:
                logger = dump.get(logger_name)
                if isinstance(logger, dict):
                    got = _read(how, names, logger)
                    if got:
                        break
            if got:
                values.extend(got)
            else:
                values.extend(empty)
                (unavailable if optional else missing).append(name)
        return Row(tuple(values), tuple(missing), tuple(unavailable), mempools)

    def samples(self, row: Row, daemon: str) -> List[Sample]:
        """The row as samples labelled ceph_daemon first, in table order (then the mempools)."""
        base: Labels = (("ceph_daemon", daemon),)
        out = [
            Sample(slot.family, slot.suffix, base + slot.labels, as_float(value))
            for slot, value in zip(self.slots, row.values)
            if value is not None
        ]
        return out + mempool_samples(row.mempools, daemon)

    def columns(self, rows: Sequence[Tuple[str, Row]]) -> List[Column]:
        """Every daemon's row (daemon name, row) as columns labelled ceph_daemon, one per slot and per
        mempool (exposition.render writes them)."""
        out = []
        for index, slot in enumerate(self.slots):
            series: List[Tuple[str, Value]] = []
            for daemon, row in rows:
                value = row.values[index]
                if value is not None:
                    series.append((daemon, value))
            out.append(Column(slot.family, slot.suffix, "ceph_daemon", slot.labels, series))
        sizes: Dict[str, List[Tuple[str, Value]]] = {}
        items: Dict[str, List[Tuple[str, Value]]] = {}
        for daemon, row in rows:
            for pool, size, count in row.mempools:
                sizes.setdefault(pool, []).append((daemon, size))
                if count is not None:
                    items.setdefault(pool, []).append((daemon, count))
        for family, by_pool in ((MEMPOOL_BYTES, sizes), (MEMPOOL_ITEMS, items)):
            out.extend(Column(family, "", "ceph_daemon", (("pool", pool),), by_pool[pool]) for pool in sorted(by_pool))
        return out


def _read(how: str, names: Iterable[str], logger: Dict[str, Any]) -> Tuple[Optional[Value], ...]:
    """The slot values of one table entry from its logger; () when the logger does not have it."""
    if how == "pri_sum":
        total = [v for k, v in logger.items() if k in PRI_BYTES and isinstance(v, (int, float))]
        return (exposable(sum(total)),) if total else ()
    raw = None
    for name in names:
        raw = logger.get(name)
        if raw is not None:
            break
    else:
        return ()
    if how == "value":
        if type(raw) is int and -EXACT_INTEGERS < raw < EXACT_INTEGERS:  # most counters: as they are, at once
            return (raw,)
        value = exposable(raw)
        return (value,) if value is not None else ()
    if not isinstance(raw, dict) or "sum" not in raw:
        return ()
    total_seconds = number(raw["sum"])
    if how == "avg_sum":
        return (total_seconds,)
    return total_seconds, number(raw.get("avgcount", 0))


# pri0_bytes ... pri11_bytes: a priority cache's bytes at each of its priorities (PriorityCache::Priority);
# room for more than Ceph has
PRI_BYTES = frozenset("pri{}_bytes".format(i) for i in range(64))


MEMPOOL_LOGGER = "mempool"  # the perf dump's logger of each mempool's bytes and items (every release, 16.2 on)
MEMPOOL_PREFIX = "bluestore_cache_"
_BYTES, _ITEMS = "_bytes", "_items"
# What an OSD lacks when its perf dump has no mempool logger, or one without a bluestore_cache_* pool
MEMPOOLS_MISSING = "{}.{}*".format(MEMPOOL_LOGGER, MEMPOOL_PREFIX)


Mempool = Tuple[str, Value, Optional[Value]]  # (pool without its prefix, bytes, items or None when absent)


def read_mempools(logger: Dict[str, Any]) -> Tuple[Tuple[Mempool, ...], Tuple[str, ...]]:
    """(pool without its prefix, bytes, items) of each bluestore_cache_* pool in a perf dump's mempool logger,
    whose counters are `<pool>_bytes` and `<pool>_items` (the daemon copies them from its mempools every
    heartbeat_interval, 5 s by default: what `dump_mempools` says, at most that old), and what it lacks as
    "mempool.<counter>": a pool's `_items` (its items then None: no value the OSD never gave), or, when the
    logger has no bluestore_cache_* pool at all, "mempool.bluestore_cache_*" (every release has four)."""
    pools = sorted(
        key[len(MEMPOOL_PREFIX) : -len(_BYTES)]
        for key in logger
        if key.startswith(MEMPOOL_PREFIX) and key.endswith(_BYTES) and len(key) > len(MEMPOOL_PREFIX) + len(_BYTES)
    )
    if not pools:
        return (), (MEMPOOLS_MISSING,)
    out: List[Mempool] = []
    missing: List[str] = []
    for pool in pools:
        name = MEMPOOL_PREFIX + pool
        items = logger.get(name + _ITEMS)
        if items is None:
            missing.append("{}.{}{}".format(MEMPOOL_LOGGER, name, _ITEMS))
        out.append((pool, number(logger[name + _BYTES]), None if items is None else number(items)))
    return tuple(out), tuple(missing)


def mempool_samples(pools: Iterable[Mempool], daemon: str) -> List[Sample]:
    samples: List[Sample] = []
    for pool, size, items in pools:
        labels: Labels = (("ceph_daemon", daemon), ("pool", pool))
        samples.append(Sample(MEMPOOL_BYTES, "", labels, as_float(size)))
        if items is not None:
            samples.append(Sample(MEMPOOL_ITEMS, "", labels, as_float(items)))
    return samples
