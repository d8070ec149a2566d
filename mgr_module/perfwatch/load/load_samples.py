"""A load window as samples: per pool and the busiest clients cluster-wide, and per OSD its totals and its
busiest pools and clients, within a bound on the per-OSD series. Pure."""

from typing import Any, Dict, List, NamedTuple, Tuple

from ..collection.module_families import LOAD, LOAD_QUERY_ERRORS
from ..common.metrics_model import Sample
from .tally import Counts, Window, busiest, clients_per_osd, group, pools_per_osd, rates, sampled_osds


class Limits(NamedTuple):
    top_clients: int  # clients cluster-wide
    top_per_osd: int  # pools and clients per OSD
    osd_series_max: int  # per-OSD series in all (totals, pools, clients); the busiest OSDs keep theirs


def _rate_samples(
    ops_family: str,
    bytes_family: str,
    labels: Tuple[Tuple[str, str], ...],
    counts: Counts,
    seconds: float,
    latency_family: str = "",
) -> List[Sample]:
    out = []
    for op, ops, size, latency in rates(counts, seconds):
        tagged = (*labels, ("op", op))
        out.append(Sample(ops_family, "", tagged, ops))
        out.append(Sample(bytes_family, "", tagged, size))
        if latency_family and latency is not None:
            out.append(Sample(latency_family, "", tagged, latency))
    return out


def _weight(counts: Counts) -> Tuple[float, float]:
    return (counts.ops, counts.write_bytes + counts.read_bytes)


def samples(win: Window, pool_names: Dict[int, str], limits: Limits) -> Tuple[List[Sample], int]:
    """(the samples, how many OSDs with load got no per-OSD series for want of room under
    osd_series_max). Pools no longer in the OSD map are left out: their name is unknown."""
    out: List[Sample] = []
    for pool, counts in sorted(group(win.pools, lambda k: k[0]).items()):
        if pool in pool_names:
            out.extend(
                _rate_samples(
                    LOAD["pool_ops"],
                    LOAD["pool_bytes"],
                    (("pool", pool_names[pool]),),
                    counts,
                    win.seconds,
                    LOAD["pool_latency_seconds"],
                )
            )
    for client, counts in busiest(group(win.clients, lambda k: k[0]), limits.top_clients):
        out.extend(
            _rate_samples(
                LOAD["client_ops"],
                LOAD["client_bytes"],
                (("client", str(client)),),
                counts,
                win.client_seconds,
                LOAD["client_latency_seconds"],
            )
        )
    pools_of, clients_of = pools_per_osd(win), clients_per_osd(win)
    osd_totals = {osd: _sum(entities.values()) for osd, entities in pools_of.items()}
    room = max(0, limits.osd_series_max)
    left_out = 0
    for osd in sorted(osd_totals, key=lambda o: (tuple(-w for w in _weight(osd_totals[o])), o)):
        daemon = (("ceph_daemon", "osd.{}".format(osd)),)
        top_pools = [(p, c) for p, c in busiest(pools_of.get(osd, {}), len(pools_of.get(osd, {}))) if p in pool_names]
        top_pools = top_pools[: limits.top_per_osd]
        top_clients = busiest(clients_of.get(osd, {}), limits.top_per_osd)
        series = 4 * (1 + len(top_pools) + len(top_clients))  # (ops, bytes) x (read, write) each
        if series > room:
            left_out += 1
            continue
        room -= series
        out.extend(_rate_samples(LOAD["osd_ops"], LOAD["osd_bytes"], daemon, osd_totals[osd], win.seconds))
        for pool, counts in top_pools:
            out.extend(
                _rate_samples(
                    LOAD["osd_pool_ops"],
                    LOAD["osd_pool_bytes"],
                    (*daemon, ("pool", pool_names[pool])),
                    counts,
                    win.seconds,
                )
            )
        for client, counts in top_clients:
            out.extend(
                _rate_samples(
                    LOAD["osd_client_ops"],
                    LOAD["osd_client_bytes"],
                    (*daemon, ("client", str(client))),
                    counts,
                    win.client_seconds,
                )
            )
    if win.client_limit > 0:
        out.append(Sample(LOAD["clients_sampled_osds"], "", (), float(sampled_osds(win))))
    out.append(Sample(LOAD["window_seconds"], "", (), win.seconds))
    out.append(Sample(LOAD["osds_without_series"], "", (), float(left_out)))
    return out, left_out


def _sum(counts: Any) -> Counts:
    total = Counts()
    for c in counts:
        total = total.plus(c)
    return total


def state_samples(registered: Dict[str, int], wanted: List[str], errors: Dict[Tuple[str, str], int]) -> List[Sample]:
    """Which queries are registered (0 for one wanted but not registered), and the errors so far."""
    out = [
        Sample(LOAD["queries"], "", (("query", name),), 1.0 if name in registered else 0.0)
        for name in sorted(set(registered) | set(wanted))
    ]
    out.extend(
        Sample(LOAD_QUERY_ERRORS, "", (("query", q), ("reason", r)), float(n)) for (q, r), n in sorted(errors.items())
    )
    return out
