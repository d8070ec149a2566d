"""Whose regression a slow replicated write is. Pure. Why: docs/decisions/slow-replica-evidence.md.

A replicated write waits for every OSD of its PG's acting set, so one slow OSD slows the probe writes of
every primary whose PG holds it; a read is its primary's alone. A slow write's causes, within its acting set:
1. members whose read regressed in the run, or whose own commits were slow and took COMMIT_SHARE or more of
   the write's latency (commit_evidence.py); 2. else the OSDs common to all slow writes rule 1 left
   unexplained (two or more) and to no fast one; 3. else none: the write stays its primary's. A write whose
   primary is no cause is not raised when a cause has a write result of its own (is_explained: its streak is
   held), and that cause's write is raised even if fast; else it stays raised, its reason naming the cause.
"""

from typing import Dict, FrozenSet, Iterable, List, Optional, Set

from ..engine.commit_evidence import slow_committers
from .baseline import Verdict

WRITE, READ = "write_latency", "read_latency"
# A replica's commits explain a slow write only if the write could have waited mostly for them: a commit of
# 12 ms beside a write of 50 ms (0.24) is no cause, however far above its peers'. Live, a throttled OSD's
# commits took 0.33 and more of the writes; 0.4 at times named a peer instead.
COMMIT_SHARE = 0.3
EXPLAINED = "; a replica write waited for "
LIKELY_CAUSE = "; its acting set's "


def _osd_of(key: str, kind: str, metric: str) -> Optional[int]:
    prefix = "{}/{}/osd.".format(kind, metric)
    if not key.startswith(prefix):
        return None
    try:
        return int(key[len(prefix) :])
    except ValueError:
        return None


def is_explained(verdict: Verdict) -> bool:
    """A slow write that attribute() found to be another OSD's regression (its streak is held, not reset)."""
    return not verdict.regressed and EXPLAINED in verdict.reason


def common_cause(slow_writes: Set[int], fast_writes: Set[int], acting: Dict[int, List[int]]) -> Set[int]:
    """Rule 2: the OSDs in the acting set of every slow write and of no fast one; empty if none, or if that
    would be every slow write's primary (nothing singled out)."""
    if len(slow_writes) < 2:
        return set()
    common: Optional[Set[int]] = None
    for primary in slow_writes:
        members = set(acting.get(primary, [primary]))
        common = members if common is None else common & members
    healthy: Set[int] = set()
    for primary in fast_writes:
        healthy.update(acting.get(primary, [primary]))
    found = (common or set()) - healthy
    return set() if found >= slow_writes else found


def causes_per_write(
    verdicts: List[Verdict],
    kind: str,
    acting: Dict[int, List[int]],
    commit_latency: Dict[int, float],
    classes: Dict[int, str],
) -> Dict[int, Set[int]]:
    """For each slow write's primary, the OSDs of its acting set its slowness is blamed on (rules 1-2;
    absent: rule 3, its own)."""
    slow: Dict[int, float] = {}
    fast: Set[int] = set()
    slow_reads: Set[int] = set()
    for v in verdicts:
        osd = _osd_of(v.key, kind, WRITE)
        if osd is not None:
            if v.regressed:
                slow[osd] = v.value
            elif v.baseline is not None:  # a write not judged yet (no baseline) says nothing of its set
                fast.add(osd)
        osd = _osd_of(v.key, kind, READ)
        if osd is not None and v.regressed:
            slow_reads.add(osd)
    out: Dict[int, Set[int]] = {}
    unexplained: Set[int] = set()
    for primary, latency in slow.items():
        members = set(acting.get(primary, [primary]))
        local = (slow_reads | _slow_committers(commit_latency, classes, COMMIT_SHARE * latency)) & members
        if local:
            out[primary] = local
        else:
            unexplained.add(primary)
    found = common_cause(unexplained, fast, acting)
    for primary in unexplained:
        blamed = found & set(acting.get(primary, [primary]))
        if blamed:
            out[primary] = blamed
    return out


def _slow_committers(latency: Dict[int, float], classes: Dict[int, str], floor: float) -> Set[int]:
    """Slow committers judged within each device class (an HDD among SSDs is not slow for an HDD)."""
    by_class: Dict[str, Set[int]] = {}
    for osd in latency:
        by_class.setdefault(classes.get(osd, ""), set()).add(osd)
    found: Set[int] = set()
    for members in by_class.values():
        found.update(slow_committers(latency, members, floor))
    return found


def attribute(
    verdicts: List[Verdict],
    kind: str,
    acting: Dict[int, List[int]],
    commit_latency: Optional[Dict[int, float]] = None,
    classes: Optional[Dict[int, str]] = None,
) -> List[Verdict]:
    """The verdicts of one run of `kind`, with the write regressions of OSDs that are only replicas of a
    slow OSD turned into explained, unregressed ones (module docstring). commit_latency: each OSD's own
    mean commit latency during the run, seconds (Run.commit_latency); classes: device class per OSD."""
    latency = commit_latency or {}
    blamed = causes_per_write(verdicts, kind, acting, latency, classes or {})
    measured = _measured(verdicts, kind)
    waited: Dict[int, List[int]] = {}  # cause -> the primaries whose slow writes waited for it
    for primary, found in blamed.items():
        for cause in found - {primary}:
            waited.setdefault(cause, []).append(primary)
    out = []
    for v in verdicts:
        osd = _osd_of(v.key, kind, WRITE)
        if osd is None:
            out.append(v)
            continue
        causes: Optional[Set[int]] = blamed.get(osd) if v.regressed else None
        if osd in waited and not v.regressed and osd in measured:
            # the slow OSD's own probe write was fast (it found the device idle), yet the writes of its
            # peers waited for it: the regression is its own
            whose = ", ".join("osd.{}".format(o) for o in sorted(waited[osd]))
            out.append(v._replace(regressed=True, reason=_evidence(osd, latency) + ": the writes of " + whose
                                  + " waited for it"))  # fmt: skip
        elif not causes or osd in causes:
            out.append(v)
        elif causes & measured:
            shown = ", ".join(_evidence(o, latency) for o in sorted(causes & measured))
            out.append(v._replace(regressed=False, reason=v.reason + EXPLAINED + shown))
        else:  # the cause has no result of its own to raise: this one stays, naming it
            shown = ", ".join(_evidence(o, latency) for o in sorted(causes))
            out.append(
                v._replace(reason=v.reason + LIKELY_CAUSE + shown + " is the likely cause (no result of its own)")
            )
    return out


def _measured(verdicts: Iterable[Verdict], kind: str) -> FrozenSet[int]:
    """The OSDs with a write result of their own in the run (a cause found can be raised there)."""
    return frozenset(o for o in (_osd_of(v.key, kind, WRITE) for v in verdicts) if o is not None)


def _evidence(osd: int, latency: Dict[int, float]) -> str:
    if osd in latency:
        return "osd.{} (its own commits took {:.0f} ms)".format(osd, latency[osd] * 1000)
    return "osd.{}".format(osd)
