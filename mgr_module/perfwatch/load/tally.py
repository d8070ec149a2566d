"""What the perf queries counted in one window (since the module last asked), as rates: per pool and per
client cluster-wide, and per OSD its busiest pools and clients. Pure.

get_osd_perf_counters answers {"counters": [{"k": [[sub-key groups], ...], "c": [[a, b], ...]}]}, one
pair per counter in the query's order: [value, 0] for ops and bytes, [sum of OSD-side latency in ns, ops]
for latencies; the sums of every OSD report since the previous get, which the get resets.
"""

import re
from typing import Any, Callable, Dict, Iterable, List, NamedTuple, Optional, Tuple

from .queries import COUNTERS

NS = 1e9


class Counts(NamedTuple):
    """One key's counts over a window. An op that reads and writes (a class call, an RBD object-map
    update) is a write and a read both (Ceph counts write_* for may_write or may_cache, read_* for
    may_read): shares and rankings use `ops`, Ceph's own count of all ops, never write_ops + read_ops."""

    write_ops: float = 0.0
    read_ops: float = 0.0
    write_bytes: float = 0.0
    read_bytes: float = 0.0
    write_ns: float = 0.0  # summed OSD-side latency of the writes
    read_ns: float = 0.0
    ops: float = 0.0  # all ops, each once

    def plus(self, other: "Counts") -> "Counts":
        return Counts(*(a + b for a, b in zip(self, other)))

    def by_op(self) -> Dict[str, Tuple[float, float, float]]:
        """op ("read", "write") -> (ops, bytes, summed latency in ns)."""
        return {
            "write": (self.write_ops, self.write_bytes, self.write_ns),
            "read": (self.read_ops, self.read_bytes, self.read_ns),
        }


_INDEX = {name: i for i, name in enumerate(COUNTERS)}


def _counts(pairs: List[Any]) -> Counts:
    def first(name: str) -> float:
        value = float(pairs[_INDEX[name]][0])
        if not 0 <= value < float("inf"):  # negative, NaN or infinite: not a count
            raise ValueError("counter {} is {}".format(name, value))
        return value

    return Counts(
        first("write_ops"),
        first("read_ops"),
        first("write_bytes"),
        first("read_bytes"),
        first("write_latency"),
        first("read_latency"),
        first("ops"),
    )


def parse(answer: Optional[Dict[str, Any]]) -> Dict[Tuple[str, ...], Counts]:
    """Sub-key values (the first group each captured) -> Counts, from one get_osd_perf_counters answer
    of a query with COUNTERS in order. Malformed entries are skipped: the answer comes from the OSDs of
    any release."""
    out: Dict[Tuple[str, ...], Counts] = {}
    for entry in (answer or {}).get("counters") or []:
        try:
            if not all(isinstance(groups, list) for groups in entry["k"]):  # ["17"] is not [["17"]]
                continue
            key = tuple(str(groups[0]) for groups in entry["k"])
            counts = _counts(entry["c"])
        except (KeyError, IndexError, TypeError, ValueError):
            continue
        out[key] = out[key].plus(counts) if key in out else counts
    return out


class Window(NamedTuple):
    """What the queries counted in the seconds since the module last asked each of them."""

    seconds: float  # of the pool query
    pools: Dict[Tuple[int, int], Counts]  # (pool id, OSD id) -> counts
    client_seconds: float
    clients: Dict[Tuple[str, int, int], Counts]  # (client, pool id, OSD id) -> counts
    client_limit: int  # the client query's max_count (0: no client query)


EMPTY = Window(1.0, {}, 1.0, {}, 0)


_ID = re.compile(r"^(0|[1-9][0-9]{0,9})$")  # ASCII digits only (str.isdigit takes "²"), no leading zero
_CLIENT = re.compile(r"^client[.][0-9]{1,20}$")


def _is_id(text: str) -> bool:
    return bool(_ID.match(text))


def window(
    seconds: float,
    pools: Dict[Tuple[str, ...], Counts],
    client_seconds: float,
    clients: Dict[Tuple[str, ...], Counts],
    client_limit: int,
) -> Window:
    """A Window from parse()d answers: pool and OSD ids as integers (keys that are not are skipped)."""
    by_pool: Dict[Tuple[int, int], Counts] = {}
    for key, counts in pools.items():
        if len(key) == 2 and _is_id(key[0]) and _is_id(key[1]):
            by_pool[(int(key[0]), int(key[1]))] = counts
    by_client: Dict[Tuple[str, int, int], Counts] = {}
    for key, counts in clients.items():
        if len(key) == 3 and _CLIENT.match(key[0]) and _is_id(key[1]) and _is_id(key[2]):
            by_client[(key[0], int(key[1]), int(key[2]))] = counts
    return Window(max(seconds, 1e-3), by_pool, max(client_seconds, 1e-3), by_client, client_limit)


def group(per_key: Dict[Any, Counts], by: Callable[[Any], Any]) -> Dict[Any, Counts]:
    """by(key) -> the counts of its keys summed."""
    out: Dict[Any, Counts] = {}
    for key, counts in per_key.items():
        g = by(key)
        out[g] = out[g].plus(counts) if g in out else counts
    return out


def nested(per_pair: Dict[Tuple[Any, Any], Counts]) -> Dict[Any, Dict[Any, Counts]]:
    """(outer, inner) -> counts as outer -> inner -> counts."""
    out: Dict[Any, Dict[Any, Counts]] = {}
    for (outer, inner), counts in per_pair.items():
        out.setdefault(outer, {})[inner] = counts
    return out


def pools_per_osd(win: Window) -> Dict[int, Dict[int, Counts]]:
    return nested({(osd, pool): c for (pool, osd), c in win.pools.items()})


def clients_per_osd(win: Window) -> Dict[int, Dict[str, Counts]]:
    return nested(group(win.clients, lambda k: (k[2], k[0])))


def busiest(entities: Dict[Any, Counts], n: int) -> List[Tuple[Any, Counts]]:
    """The n entities with the most ops (bytes, then the name, break ties), busiest first; none idle."""
    ranked = sorted(
        ((e, c) for e, c in entities.items() if c.ops > 0 or c.write_bytes + c.read_bytes > 0),
        key=lambda item: (-item[1].ops, -(item[1].write_bytes + item[1].read_bytes), str(item[0])),
    )
    return ranked[: max(0, n)]


def sampled_osds(win: Window) -> int:
    """OSDs that counted more (client, pool) keys than the client query's limit in this window. An OSD
    samples only when one report (5 s) has more keys than the limit; a window holds several reports, so this
    over-reports: 0 says no OSD sampled, above 0 that some may have (their clients' figures approximate)."""
    if win.client_limit <= 0:
        return 0
    keys: Dict[int, int] = {}
    for _client, _pool, osd in win.clients:
        keys[osd] = keys.get(osd, 0) + 1
    return sum(1 for n in keys.values() if n > win.client_limit)


def rates(counts: Counts, seconds: float) -> Iterable[Tuple[str, float, float, Optional[float]]]:
    """(op, ops/s, bytes/s, mean OSD-side latency in seconds or None without ops) of one key's counts."""
    for op, (ops, size, ns) in counts.by_op().items():
        yield op, ops / seconds, size / seconds, (ns / ops / NS) if ops > 0 else None
