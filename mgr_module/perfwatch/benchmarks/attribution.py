"""Whose regression a slow replicated write is. Pure.

The rados probe writes one object per OSD, whose PG that OSD is acting primary of, and reads it back. A
replicated write waits for every OSD of the PG's acting set, so one slow OSD makes the writes of every
primary whose PG holds it slow: on a 3-OSD, 3-replica cluster, all three. A read is served by the primary
alone. So a write regression is the primary's own only when the evidence says so:

1. local evidence, among the acting sets of the slow writes: OSDs whose read regressed in the same run
   (reads touch only them), and OSDs whose own commits were slow while the probe ran
   (commit_evidence.py: far slower than the fastest half of the OSDs read, and a real share of the slow
   writes' latency, at least COMMIT_SHARE of the fastest slow write);
2. else the OSDs common to the acting sets of every slow write and to none of the writes that were fast
   (a slow OSD slows every write it takes part in);
3. else (no single cause shows: a network, a cluster-wide load): every slow write stays its primary's.

A slow write whose primary is not among the causes found is the symptom of the causes in its acting set:
it is not raised as a regression of its own, its verdict says whose it is. It stays out of the baseline
like any slow result. Only when a cause found has a regressed result of its own in the run (so that one
OSD is still named); otherwise nothing changes.
"""

from typing import Dict, FrozenSet, Iterable, List, Optional, Set

from .baseline import Verdict
from .commit_evidence import slow_committers

WRITE, READ = "write_latency", "read_latency"
# A replica's commits explain a slow write only if they take a real share of it: a commit of 1 ms next to
# writes of 300 ms (a network fault) is no cause, however far above its peers' 0.2 ms.
COMMIT_SHARE = 0.2


def _osd_of(key: str, kind: str, metric: str) -> Optional[int]:
    prefix = "{}/{}/osd.".format(kind, metric)
    if not key.startswith(prefix):
        return None
    try:
        return int(key[len(prefix) :])
    except ValueError:
        return None


def causes(
    slow_writes: Set[int],
    fast_writes: Set[int],
    slow_reads: Set[int],
    acting: Dict[int, List[int]],
    slow_commits: Optional[Set[int]] = None,
) -> Set[int]:
    """The OSDs the slow writes are blamed on (rules 1-3 of the module docstring); slow_commits: the OSDs
    whose own commits were slow (rule 1)."""
    involved: Set[int] = set()
    for primary in slow_writes:
        involved.update(acting.get(primary, [primary]))
    local = (slow_reads | (slow_commits or set())) & involved
    if local:
        return local
    common: Optional[Set[int]] = None
    for primary in slow_writes:
        members = set(acting.get(primary, [primary]))
        common = members if common is None else common & members
    healthy: Set[int] = set()
    for primary in fast_writes:
        healthy.update(acting.get(primary, [primary]))
    found = (common or set()) - healthy
    return found if found else set(slow_writes)


def attribute(
    verdicts: List[Verdict],
    kind: str,
    acting: Dict[int, List[int]],
    commit_latency: Optional[Dict[int, float]] = None,
) -> List[Verdict]:
    """The verdicts of one run of `kind`, with the write regressions of OSDs that are only replicas of a
    slow OSD turned into explained, unregressed ones (module docstring). commit_latency: each OSD's own
    mean commit latency during the run, seconds (Run.commit_latency)."""
    slow_writes: Set[int] = set()
    fast_writes: Set[int] = set()
    slow_reads: Set[int] = set()
    slow_write_values: List[float] = []
    for v in verdicts:
        osd = _osd_of(v.key, kind, WRITE)
        if osd is not None:
            (slow_writes if v.regressed else fast_writes).add(osd)
            if v.regressed:
                slow_write_values.append(v.value)
        osd = _osd_of(v.key, kind, READ)
        if osd is not None and v.regressed:
            slow_reads.add(osd)
    if len(slow_writes) < 2:
        return verdicts  # one slow write names its primary, the OSD it measured
    latency = commit_latency or {}
    floor = COMMIT_SHARE * min(slow_write_values)
    slow_commits = set(slow_committers(latency, set(latency), floor))
    blamed = causes(slow_writes, fast_writes, slow_reads, acting, slow_commits)
    named = _named(verdicts, kind, blamed)
    if not named or blamed >= slow_writes:
        return verdicts
    out = []
    for v in verdicts:
        osd = _osd_of(v.key, kind, WRITE)
        if osd is None or not v.regressed or osd in blamed:
            out.append(v)
            continue
        whose = sorted(blamed & set(acting.get(osd, [])) or named)
        reason = "{}; a replica write waited for {}".format(v.reason, ", ".join(_evidence(o, latency) for o in whose))
        out.append(v._replace(regressed=False, reason=reason))
    return out


def _named(verdicts: Iterable[Verdict], kind: str, blamed: Set[int]) -> FrozenSet[int]:
    """The blamed OSDs that have a regressed result of their own in the run."""
    found = set()
    for v in verdicts:
        for metric in (WRITE, READ):
            osd = _osd_of(v.key, kind, metric)
            if osd is not None and osd in blamed and v.regressed:
                found.add(osd)
    return frozenset(found)


def _evidence(osd: int, latency: Dict[int, float]) -> str:
    if osd in latency:
        return "osd.{} (its own commits took {:.0f} ms)".format(osd, latency[osd] * 1000)
    return "osd.{}".format(osd)
