"""The OSD perf queries perfwatch owns, to say whose load an OSD carries, checked before any is sent. Pure.

A query runs in every primary OSD's I/O path (each sub-key matched with an unanchored regex under the PG
lock), so: two queries of two and three sub-keys, anchored regexes that fail fast, unlike those of Ceph's own
modules (the mgr merges identical queries, and another module's limit would then apply to ours).
- POOLS: per pool and OSD, unlimited: at most pools x OSDs keys, each OSD reporting only its own id.
- CLIENTS: per client, pool and OSD, the `max_count` keys with the most ops per OSD and report; beyond that
  the OSD samples, so a client list is approximate and its totals undercount.
Why, and how OSDs report: docs/decisions/osd-perf-query-tombstone.md.
"""

import re
from typing import Any, Dict, List, Tuple

POOL_ID = "^([0-9]+)$"
OSD_ID = "^([0-9]+)$"
CLIENT_ID = "^(client[.][0-9]+)$"  # entity names of clients; OSDs' own ops (osd.N) are not clients' load

COUNTERS: Tuple[str, ...] = (
    "ops",
    "write_ops",
    "read_ops",
    "write_bytes",
    "read_bytes",
    "write_latency",
    "read_latency",
)
SUB_KEY_TYPES = ("client_id", "client_address", "pool_id", "namespace", "osd_id", "pg_id", "object_name", "snap_id")
CEPH_COUNTERS = (
    "ops",
    "write_ops",
    "read_ops",
    "bytes",
    "write_bytes",
    "read_bytes",
    "latency",
    "write_latency",
    "read_latency",
)
ORDER_BY = "ops"
MAX_COUNT_LIMITS = (1, 1024)  # 0 would make an OSD's sampling index out of range: never sent

POOLS = "pools"
CLIENTS = "clients"
TOMBSTONE = "tombstone"


def tombstone_query() -> Dict[str, Any]:
    """What takes our queries' place on the OSDs when we remove the last of them. An OSD ignores an empty
    query set (Pacific 16.2.15 on: MgrClient applies a configure's OSD queries only when there are some), so
    removing the last query of the mgr leaves it running in every OSD's I/O path until the OSD restarts.
    This one is the cheapest there is: one sub-key, the OSD's own id, matched against a regex that fails at
    its first character (ids are digits); it counts nothing."""
    return {"key_descriptor": [{"type": "osd_id", "regex": "^(-)$"}], "performance_counter_descriptors": ["ops"]}


def pool_query() -> Dict[str, Any]:
    return {
        "key_descriptor": [{"type": "pool_id", "regex": POOL_ID}, {"type": "osd_id", "regex": OSD_ID}],
        "performance_counter_descriptors": list(COUNTERS),
    }


def client_query(max_count: int) -> Dict[str, Any]:
    return {
        "key_descriptor": [
            {"type": "client_id", "regex": CLIENT_ID},
            {"type": "pool_id", "regex": POOL_ID},
            {"type": "osd_id", "regex": OSD_ID},
        ],
        "performance_counter_descriptors": list(COUNTERS),
        "limit": {"order_by": ORDER_BY, "max_count": int(max_count)},
    }


def wanted(enabled: bool, clients_per_osd: int) -> Dict[str, Dict[str, Any]]:
    """The queries the options ask for, by name: none when attribution is off; no client query when
    clients_per_osd is 0."""
    if not enabled:
        return {}
    out = {POOLS: pool_query()}
    if clients_per_osd > 0:
        out[CLIENTS] = client_query(clients_per_osd)
    return out


def problems(query: Dict[str, Any]) -> List[str]:
    """Why the mgr or the OSDs would refuse this query (the mgr answers None and logs; an OSD skips it), or
    what would harm an OSD: [] when it is fit to send. Python's re stands in for ECMAScript here, with the
    constructs ECMAScript lacks refused outright."""
    out: List[str] = []
    unknown = sorted(set(query) - {"key_descriptor", "performance_counter_descriptors", "limit"})
    if unknown:
        out.append("unknown fields {}".format(unknown))
    keys = query.get("key_descriptor")
    if not isinstance(keys, list) or not keys:
        out.append("no key_descriptor")
        keys = []
    for sub in keys:
        kind, regex = sub.get("type"), sub.get("regex")
        if kind not in SUB_KEY_TYPES:
            out.append("sub-key type {!r} is not one of {}".format(kind, ", ".join(SUB_KEY_TYPES)))
        if not isinstance(regex, str) or not regex:
            out.append("sub-key {!r} has no regex".format(kind))
            continue
        if not (regex.startswith("^") and regex.endswith("$")):
            out.append("regex {!r} of {!r} is not anchored (^...$): regex_search matches anywhere".format(regex, kind))
        if "(?P" in regex or "(?<" in regex or re.search(r"\(\?[a-zA-Z]", regex):
            out.append("regex {!r} uses a construct ECMAScript lacks".format(regex))
            continue
        try:
            groups = re.compile(regex).groups
        except re.error as exc:
            out.append("regex {!r} does not compile: {}".format(regex, exc))
            continue
        if groups < 1:
            out.append("regex {!r} of {!r} has no capture group (the key is what it captures)".format(regex, kind))
    counters = query.get("performance_counter_descriptors")
    if not isinstance(counters, list) or not counters:
        out.append("no performance_counter_descriptors")
        counters = []
    out.extend(
        "counter {!r} is not one of {}".format(c, ", ".join(CEPH_COUNTERS)) for c in counters if c not in CEPH_COUNTERS
    )
    limit = query.get("limit")
    if limit is not None:
        if limit.get("order_by") not in counters:
            out.append("limit orders by {!r}, not one of the query's counters".format(limit.get("order_by")))
        count = limit.get("max_count")
        low, high = MAX_COUNT_LIMITS
        if not isinstance(count, int) or isinstance(count, bool) or not low <= count <= high:
            out.append("limit max_count {!r} is not an integer in {}-{}".format(count, low, high))
    return out
