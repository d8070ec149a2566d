"""Whose regression a slow replicated write is (attribution.py): the slow OSD is named, not its peers."""

from __future__ import annotations

import random

from perfwatch.benchmarks.judging.attribution import attribute, common_cause, is_explained
from perfwatch.benchmarks.judging.baseline import Verdict


def verdict(metric: str, osd: int, regressed: bool, kind: str = "rados") -> Verdict:
    value = 0.2 if regressed else 0.01  # seconds: the lab's peers' writes behind a throttled OSD
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
    assert all(v.value == 0.2 for v in peers), "the measurement itself is kept"


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


def test_a_cause_with_no_regressed_result_of_its_own_keeps_the_writes_raised_and_names_it() -> None:
    """osd.9 is common to the slow writes but was not probed as a primary: naming nobody would hide the
    problem, so the slow writes stay their primaries', and their reasons name osd.9."""
    acting = {0: [0, 9, 5], 1: [1, 9, 6], 2: [2, 3, 4]}
    run = [verdict("write_latency", 0, True), verdict("write_latency", 1, True), verdict("write_latency", 2, False)]
    assert common_cause({0, 1}, {2}, acting) == {9}
    judged = attribute(run, "rados", acting)
    assert regressed(judged) == regressed(run)
    assert all("its acting set's osd.9 is the likely cause" in v.reason for v in judged if v.regressed)


def test_one_slow_write_and_other_kinds_are_left_alone() -> None:
    acting = {0: [0, 1, 2], 1: [1, 2, 0]}
    one = [verdict("write_latency", 0, True), verdict("write_latency", 1, False)]
    assert attribute(one, "rados", acting) == one, "one slow write without local evidence names its primary"
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


# ----- each names the OSD at fault, and hides no second one ---------------------------------------------

NINE = {0: [0, 1, 2], 1: [1, 2, 0], 2: [2, 0, 1], 3: [3, 4, 5], 4: [4, 5, 3], 5: [5, 3, 4],
        6: [6, 7, 8], 7: [7, 8, 6], 8: [8, 6, 7]}  # fmt: skip


def test_a_second_slow_osd_without_a_commit_figure_is_not_hidden_by_the_first() -> None:
    """osd.0 throttled (its commits at 150 ms); osd.3 slow too but with no commit figure (restarted, its
    request timed out): the writes of osd.3-5 hold no osd.0 and stay raised."""
    run = [verdict("write_latency", o, o <= 5) for o in range(9)] + [
        verdict("read_latency", o, False) for o in range(9)
    ]
    commits = {o: 0.002 for o in range(9) if o != 3}
    commits[0] = 0.15
    judged = attribute(run, "rados", NINE, commits)
    assert regressed(judged) == [f"rados/write_latency/osd.{o}" for o in (0, 3, 4, 5)]


def test_an_unrelated_slow_read_does_not_take_the_blame_of_a_common_cause() -> None:
    """No commit evidence; osd.3 slows every write of its PGs; osd.7's read regressed once (noise), and
    osd.7's PG holds osd.3: osd.3 stays named, osd.7's own write stays its own."""
    acting = dict(NINE)
    acting[7] = [7, 3, 8]
    slow = {p for p, a in acting.items() if 3 in a}
    run = [verdict("write_latency", o, o in slow) for o in range(9)]
    run += [verdict("read_latency", o, o == 7) for o in range(9)]
    judged = attribute(run, "rados", acting, {})
    assert "rados/write_latency/osd.3" in regressed(judged)  # osd.3-5 share one set: rule 3, all stay


def test_a_busy_peer_whose_commits_are_no_real_share_of_the_write_is_no_cause() -> None:
    """osd.3 slow for a reason its commits do not show (network, CPU): writes of 50 ms; osd.4 busy,
    committing at 12 ms against 1.5 ms: not the cause of 50 ms writes (COMMIT_SHARE)."""
    slow = {p for p, a in NINE.items() if 3 in a}
    run = [verdict("write_latency", o, o in slow) for o in range(9)]
    run = [v._replace(value=0.05) if v.regressed else v for v in run]
    commits = {o: 0.0015 for o in range(9)}
    commits[4] = 0.012
    judged = attribute(run, "rados", NINE, commits)
    assert "rados/write_latency/osd.3" in regressed(judged)


def test_a_throttled_replica_whose_mean_commit_is_a_third_of_the_write_is_the_cause() -> None:
    """Live on Tentacle (3 OSDs, osd.0 at 20 IOPS): osd.2's write 114 ms, osd.0's commits 41.3 ms on average
    (some served at once by the throttle), its peers' 7.8 and 5.8 ms: osd.0 is named, not osd.2."""
    acting = {0: [0, 1, 2], 1: [1, 2, 0], 2: [2, 0, 1]}
    run = [verdict("write_latency", 2, True)._replace(value=0.114)]
    run += [verdict("write_latency", o, False) for o in (0, 1)]
    run += [verdict("read_latency", o, False) for o in range(3)]
    judged = attribute(run, "rados", acting, {0: 0.0413, 1: 0.0058, 2: 0.0078})
    assert regressed(judged) == ["rados/write_latency/osd.0"]
    assert any(is_explained(v) for v in judged)


def test_an_hdd_among_ssds_is_judged_against_hdds() -> None:
    """osd.4 is an HDD (commits 40 ms) among SSDs (1 ms); writes of its PG at 60 ms because of osd.3
    (no commit figure): osd.4 alone in its class is no outlier, so it is not blamed."""
    slow = {p for p, a in NINE.items() if 3 in a}
    run = [verdict("write_latency", o, o in slow) for o in range(9)]
    run = [v._replace(value=0.06) if v.regressed else v for v in run]
    commits = {o: 0.001 for o in range(9) if o != 3}
    commits[4] = 0.04
    classes = {o: "ssd" for o in range(9)}
    classes[4] = "hdd"
    judged = attribute(run, "rados", NINE, commits, classes)
    assert "rados/write_latency/osd.3" in regressed(judged)
    assert not any(is_explained(v) for v in judged)
    blamed_hdd = attribute(run, "rados", NINE, commits, {o: "ssd" for o in range(9)})
    assert "rados/write_latency/osd.3" not in regressed(blamed_hdd), "as one class, the HDD stands out"


def test_a_slow_osd_that_is_no_primary_is_named_in_its_peers_reasons() -> None:
    """osd.0 has primary affinity 0: no result of its own; its commits (150 ms) name it in the reasons of
    the writes that stay raised."""
    acting = {1: [1, 0, 2], 2: [2, 0, 1]}
    run = [verdict("write_latency", o, True) for o in (1, 2)] + [verdict("read_latency", o, False) for o in (1, 2)]
    judged = attribute(run, "rados", acting, {0: 0.15, 1: 0.002, 2: 0.002})
    assert regressed(judged) == regressed(run)
    assert all("osd.0 (its own commits took 150 ms) is the likely cause" in v.reason for v in judged if v.regressed)


def test_a_write_not_judged_yet_does_not_count_as_fast() -> None:
    """100 OSDs, no commit evidence: osd.13 slow; one primary whose PG holds osd.13 has no baseline yet
    (not regressed, not fast either): the common cause is still osd.13."""
    rng = random.Random(1)
    osds = list(range(100))
    acting = {p: [p, *rng.sample([o for o in osds if o != p], 2)] for p in osds}
    slow = {p for p in osds if 13 in acting[p]}
    unjudged = min(slow - {13})
    run = [verdict("write_latency", p, p in slow and p != unjudged) for p in osds]
    run = [v._replace(baseline=None, ratio=None) if v.key.endswith(f"osd.{unjudged}") else v for v in run]
    judged = attribute(run, "rados", acting, {})
    assert regressed(judged) == ["rados/write_latency/osd.13"], (len(slow), regressed(judged))


def test_an_explained_write_clears_its_regression_and_holds_its_streak() -> None:
    """A write explained as another OSD's neither raises nor forgets: a stray explanation in one run does not
    reset the count of a write that is slow on its own account."""
    from perfwatch.benchmarks.judging.regressions import next_streaks

    acting = {0: [0, 1, 2], 1: [1, 2, 0], 2: [2, 0, 1]}
    run = [verdict("write_latency", o, True) for o in range(3)]
    judged = attribute(run, "rados", acting, {0: 0.15, 1: 0.001, 2: 0.001})
    streaks, regressions = next_streaks(judged, {"rados/write_latency/osd.1": 2}, 3, "r1", 1.0)
    assert "rados/write_latency/osd.1" not in streaks, "held: neither lengthened nor forgotten"
    assert regressions["rados/write_latency/osd.1"] is None
    assert streaks["rados/write_latency/osd.0"] == 1
    good = [verdict("write_latency", 1, False)]
    streaks, _ = next_streaks(good, {"rados/write_latency/osd.1": 2}, 3, "r2", 2.0)
    assert streaks["rados/write_latency/osd.1"] is None, "a good result still forgets"


def test_a_throttled_osd_whose_own_write_was_fast_is_still_the_one_raised() -> None:
    """Seen live: osd.0's own probe write met its throttled device idle and took 5 ms, while the replica
    writes of osd.1 and osd.2 waited 100-200 ms for its commits (150 ms): osd.0 is raised, not its peers."""
    acting = {0: [0, 1, 2], 1: [1, 2, 0], 2: [2, 0, 1]}
    run = [verdict("write_latency", 0, False), verdict("write_latency", 1, True), verdict("write_latency", 2, True)]
    run += [verdict("read_latency", o, False) for o in range(3)]
    judged = attribute(run, "rados", acting, {0: 0.150, 1: 0.0013, 2: 0.0011})
    assert regressed(judged) == ["rados/write_latency/osd.0"]
    [own] = [v for v in judged if v.key == "rados/write_latency/osd.0"]
    assert own.value == 0.01 and "the writes of osd.1, osd.2 waited for it" in own.reason
    assert all(is_explained(v) for v in judged if v.key in ("rados/write_latency/osd.1", "rados/write_latency/osd.2"))
