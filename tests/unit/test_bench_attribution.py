"""Whose regression a slow replicated write is (attribution.py): the slow OSD is named, not its peers."""

from __future__ import annotations

import random

from perfwatch.benchmarks.attribution import attribute, causes
from perfwatch.benchmarks.baseline import Verdict


def verdict(metric: str, osd: int, regressed: bool, kind: str = "rados") -> Verdict:
    value = 0.5 if regressed else 0.01
    reason = "50.00x its own baseline" if regressed else ""
    return Verdict(f"{kind}/{metric}/osd.{osd}", value, "seconds", 0.01, 0.02 if regressed else 1.0, None, None,
                   regressed, reason)  # fmt: skip


def regressed(verdicts: list[Verdict]) -> list[str]:
    return sorted(v.key for v in verdicts if v.regressed)


def test_three_osds_three_replicas_the_slow_one_is_named_by_its_own_reads() -> None:
    """The lab's case: every write waits for osd.0, only osd.0's reads are slow."""
    acting = {0: [0, 1, 2], 1: [1, 2, 0], 2: [2, 0, 1]}
    run = [verdict("write_latency", o, True) for o in range(3)]
    run += [verdict("read_latency", 0, True), verdict("read_latency", 1, False), verdict("read_latency", 2, False)]
    judged = attribute(run, "rados", acting)
    assert regressed(judged) == ["rados/read_latency/osd.0", "rados/write_latency/osd.0"]
    peers = [v for v in judged if v.key in ("rados/write_latency/osd.1", "rados/write_latency/osd.2")]
    assert all("a replica write waited for osd.0" in v.reason for v in peers)
    assert all(v.value == 0.5 for v in peers), "the measurement itself is kept"


def test_a_large_cluster_names_the_osd_common_to_the_slow_writes_without_local_evidence() -> None:
    """20 OSDs, 3 replicas, random acting sets (one probed object per primary, as the probe does); osd.13 is
    slow (its reads are cached: no read evidence): the writes of every primary whose acting set holds osd.13
    are slow, and only osd.13 is named. Every seed of a hundred, not one lucky draw."""
    checked = 0
    for seed in range(100):
        rng = random.Random(seed)
        osds = list(range(20))
        acting = {p: [p, *rng.sample([o for o in osds if o != p], 2)] for p in osds}
        slow = {p for p in osds if 13 in acting[p]}
        if len(slow) < 3:
            continue  # osd.13 in too few acting sets for a common cause to show
        run = [verdict("write_latency", p, p in slow) for p in osds]
        judged = attribute(run + [verdict("read_latency", p, False) for p in osds], "rados", acting)
        assert regressed(judged) == ["rados/write_latency/osd.13"], (seed, acting)
        explained = [v for v in judged if v.key.startswith("rados/write_latency/") and v.reason.endswith("osd.13")]
        assert len(explained) == len(slow) - 1
        checked += 1
    assert checked > 50, checked


def test_no_single_cause_keeps_every_slow_write_its_primarys() -> None:
    """A slow network or a cluster-wide load: every write slow, no read evidence, no OSD common to all
    slow writes and absent from the fast ones: nothing is explained away."""
    acting = {0: [0, 1, 2], 1: [1, 3, 4], 2: [2, 5, 3], 3: [3, 4, 5]}
    run = [verdict("write_latency", o, True) for o in range(4)]
    assert attribute(run, "rados", acting) == run


def test_a_cause_with_no_regressed_result_of_its_own_changes_nothing() -> None:
    """osd.9 is common to the slow writes but was not probed as a primary: naming nobody would hide the
    problem, so the slow writes stay their primaries'."""
    acting = {0: [0, 9, 5], 1: [1, 9, 6], 2: [2, 3, 4]}
    run = [verdict("write_latency", 0, True), verdict("write_latency", 1, True), verdict("write_latency", 2, False)]
    assert causes({0, 1}, {2}, set(), acting) == {9}
    assert attribute(run, "rados", acting) == run


def test_one_slow_write_and_other_kinds_are_left_alone() -> None:
    acting = {0: [0, 1, 2], 1: [1, 2, 0]}
    one = [verdict("write_latency", 0, True), verdict("write_latency", 1, False)]
    assert attribute(one, "rados", acting) == one
    other_kind = [verdict("write_latency", o, True, kind="rgw") for o in range(2)]
    assert attribute(other_kind, "rados", acting) == other_kind


def test_the_lab_case_without_read_evidence_names_the_osd_whose_own_commits_are_slow() -> None:
    """Every write waits for osd.0, its reads came from cache (no read evidence); its own commits took 150 ms
    during the run against 1-2 ms of the others (the figures seen live)."""
    acting = {0: [0, 1, 2], 1: [1, 2, 0], 2: [2, 0, 1]}
    run = [verdict("write_latency", o, True) for o in range(3)]
    run += [verdict("read_latency", o, False) for o in range(3)]
    assert regressed(attribute(run, "rados", acting)) == regressed(run), "without the evidence: unchanged"
    judged = attribute(run, "rados", acting, {0: 0.150, 1: 0.0013, 2: 0.0011})
    assert regressed(judged) == ["rados/write_latency/osd.0"]
    peers = [v for v in judged if v.key in ("rados/write_latency/osd.1", "rados/write_latency/osd.2")]
    assert all("a replica write waited for osd.0 (its own commits took 150 ms)" in v.reason for v in peers)


def test_commits_that_are_no_real_share_of_the_slow_writes_blame_nobody() -> None:
    """A slow network: writes at 500 ms, osd.1's commits at 5 ms against 1 ms (5x, yet no cause)."""
    acting = {0: [0, 1, 2], 1: [1, 2, 0], 2: [2, 0, 1]}
    run = [verdict("write_latency", o, True) for o in range(3)]
    assert attribute(run, "rados", acting, {0: 0.001, 1: 0.005, 2: 0.001}) == run


def test_commit_evidence_of_an_osd_outside_the_slow_acting_sets_blames_nobody() -> None:
    """osd.9's commits are slow but it holds none of the slow writes' PGs: no cause among them."""
    acting = {0: [0, 1, 2], 1: [1, 2, 0], 2: [2, 0, 1], 3: [3, 9, 4]}
    run = [verdict("write_latency", o, True) for o in range(3)] + [verdict("write_latency", 3, False)]
    latency = {o: 0.001 for o in (0, 1, 2, 3, 4)}
    latency[9] = 0.4
    assert attribute(run, "rados", acting, latency) == run
