"""Which OSDs the light rados probe measures each round, and how many have a fresh result. Pure.

The probe can measure an OSD only while it is the acting primary of one of the scratch pool's PGs
("reachable"). Of those, each round takes at most `per_round`, the ones chosen longest ago first (never chosen
first of all), so every reachable OSD is tried within ceil(reachable / per_round) rounds at any cluster size:
an OSD whose probe fails every round (hung, yet up) takes its turn and no more, where ordering by the last
result kept choosing it first and starved the rest. A stamp later than now (the wall clock set back) counts as
never: its OSD is neither fresh nor put last. The scratch pool's PG count bounds how many OSDs are reachable:
pg_target says how many PGs it should have for a cluster of a given size, within what it may cost the cluster.
"""

import threading
from typing import Dict, Iterable, List, Optional, Set

from ...collection import module_families as mf
from ...common.metrics_model import Sample

STATES = ("fresh", "waiting", "unreachable")  # of an up OSD: together they count every up OSD
MIN_ROUND_SECONDS = 60.0  # a round's length in the fresh window when probes run more often, or only on command
MAX_POOL_PG_NUM = 65536  # mon_max_pool_pg_num's default: the mon refuses more PGs in one pool


def largest_power_of_two_at_most(n: float) -> int:
    return 1 << (int(n).bit_length() - 1) if n >= 1 else 1


def pg_target(
    current: int,
    floor: int,
    in_osds: int,
    pool_size: int,
    pgs_per_osd: float,
    cluster_pg_replicas: int,
    max_pg_per_osd: int,
) -> int:
    """The scratch pool's PG count for this cluster: the largest power of two whose PG replicas add at
    most `pgs_per_osd` per in OSD on average, and keep the cluster's PG replicas (`cluster_pg_replicas`,
    this pool's included) within 80 % of what the mons allow (mon_max_pg_per_osd times in OSDs), the rest
    left to the operator; at least `floor` (the option scratch_pool_pg_num); never fewer than it has
    (`current`): the pool only grows. A power of two, as Ceph advises, so its PGs are equal."""
    size = max(1, pool_size)
    budget = pgs_per_osd * max(1, in_osds) / size
    headroom = (0.8 * max_pg_per_osd * max(1, in_osds) - cluster_pg_replicas) / size + current
    wanted = max(largest_power_of_two_at_most(budget), largest_power_of_two_at_most(floor))
    if wanted > headroom:
        wanted = largest_power_of_two_at_most(headroom) if headroom >= 1 else 1
    return max(current, min(wanted, MAX_POOL_PG_NUM))


def _past(at: Optional[float], now: float) -> float:
    """A stamp for ordering: never (or later than now: the clock was set back) sorts first."""
    return at if at is not None and at <= now else float("-inf")


def rounds_to_cover(reachable: int, per_round: int) -> int:
    return max(1, -(-reachable // max(1, per_round)))


class ProbeCoverage:
    """When each OSD last had a probe result, and the probe's view of the cluster at its last round."""

    def __init__(self, kind: str = "rados") -> None:
        self.kind = kind
        self._lock = threading.Lock()
        self._measured_at: Dict[int, float] = {}  # OSD -> when it last had a result (in memory: a failover resets)
        self._chosen_at: Dict[int, float] = {}  # OSD -> when a round last chose it, whatever came of it
        self._up: Set[int] = set()
        self._reachable: Set[int] = set()
        self._per_round = 1
        self._interval = 0.0

    def choose(
        self,
        up: Iterable[int],
        reachable: Iterable[int],
        per_round: int,
        interval: float,
        now: float,
        whole: bool = True,
    ) -> List[int]:
        """The OSDs to probe this round: of the up OSDs that are reachable, at most per_round, the least
        recently chosen first (ties by id). A round over the whole cluster (`whole`) is remembered as the
        view for the coverage figures; a run asked for on some OSDs (`up` holds only those) leaves it as is."""
        up_set = set(up)
        candidates = sorted(set(reachable) & up_set)
        with self._lock:
            if whole:
                self._up, self._reachable = up_set, set(candidates)
                self._per_round, self._interval = max(1, per_round), max(0.0, interval)
            order = sorted(candidates, key=lambda osd: (self._last_turn(osd, now), osd))
            chosen = sorted(order[: max(1, per_round)])
            for osd in chosen:
                self._chosen_at[osd] = now
        return chosen

    def _last_turn(self, osd: int, now: float) -> float:
        """When the OSD last had its turn: chosen, or measured (a run on command measures it too)."""
        return max(_past(self._chosen_at.get(osd), now), _past(self._measured_at.get(osd), now))

    def measured(self, osds: Iterable[int], at: float) -> None:
        with self._lock:
            for osd in osds:
                self._measured_at[osd] = at

    def fresh_seconds(self) -> float:
        """How old a result may be and still count as fresh: the rounds to cover every reachable OSD, plus
        one round's slack (a round that ran late), each as long as the probe interval, at least a minute."""
        with self._lock:
            rounds = rounds_to_cover(len(self._reachable), self._per_round) + 1
            return rounds * max(MIN_ROUND_SECONDS, self._interval)

    def counts(self, now: float) -> Dict[str, int]:
        """Up OSDs by state: fresh (a result within fresh_seconds), waiting (reachable, no fresh result
        yet: their turn comes within rounds_to_cover), unreachable (primary of no scratch PG: not measured
        until the pool's PGs place one there)."""
        window = self.fresh_seconds()
        with self._lock:
            out = dict.fromkeys(STATES, 0)
            for osd in self._up:
                at: Optional[float] = self._measured_at.get(osd)
                if at is not None and 0 <= now - at <= window:
                    out["fresh"] += 1
                elif osd in self._reachable:
                    out["waiting"] += 1
                else:
                    out["unreachable"] += 1
            return out

    def samples(self, now: float) -> List[Sample]:
        """None before the first round: nothing is known yet (a 0 would read as no OSD covered)."""
        with self._lock:
            if not self._up:
                return []
            rounds = rounds_to_cover(len(self._reachable), self._per_round)
        kind = ("kind", self.kind)
        out = [Sample(mf.BENCH_PROBE_COVERAGE, "", (kind, ("state", state)), float(n)) for state, n in
               sorted(self.counts(now).items())]  # fmt: skip
        out.append(Sample(mf.BENCH_PROBE_ROUNDS_TO_COVER, "", (kind,), float(rounds)))
        return out
