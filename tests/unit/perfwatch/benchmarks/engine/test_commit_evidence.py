"""Each OSD's own commit latency while the rados probe runs (commit_evidence.py), and how the probe
gathers it: the local evidence that names the slow member of a slow acting set."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from perfwatch.benchmarks.engine.commit_evidence import (
    MAX_OSDS,
    commit_summary,
    read_all,
    slow_committers,
    window_latency,
)
from perfwatch.benchmarks.engine.probe_coverage import ProbeCoverage
from perfwatch.benchmarks.kinds.rados import RadosLatency
from perfwatch.ceph.commit_latency import COMMIT_COMMAND, COMMIT_COUNTERS, commit_reading
from perfwatch.ceph.seam import FetchError, OsdInfo
from perfwatch.common.daemon_counters.fetch_reasons import REASON_BUSY, REASON_ERROR
from perfwatch.options import declared as options
from tests import paths

EXPORTER_FIXTURES = paths.EXPORTER_FIXTURES


def test_the_window_is_the_mean_of_the_commits_in_between() -> None:
    before = {0: (1.0, 100.0), 1: (2.0, 100.0), 2: (3.0, 100.0), 3: (4.0, 100.0)}
    after = {0: (1.9, 106.0), 1: (2.012, 106.0), 2: (3.0, 100.0), 3: (0.1, 5.0)}
    got = window_latency(before, after)
    assert sorted(got) == [0, 1]
    assert abs(got[0] - 0.150) < 1e-9 and abs(got[1] - 0.002) < 1e-9
    # osd.2 committed nothing (no figure); osd.3 restarted (its counter went back: no figure)


def test_the_lab_case_names_the_throttled_osd_alone() -> None:
    """Figures seen on the lab (3 hosts, osd.0's device at 20 IOPS, 1 MB/s): 120-170 ms against 1-3 ms."""
    assert slow_committers({0: 0.151, 1: 0.0013, 2: 0.0010}, {0, 1, 2}, 0.06) == [0]
    assert slow_committers({0: 0.120, 1: 0.0032, 2: 0.0030}, {0, 1, 2}, 0.06) == [0]


def test_two_slow_of_three_are_both_named_and_an_even_cluster_none() -> None:
    assert slow_committers({0: 0.15, 1: 0.14, 2: 0.002}, {0, 1, 2}, 0.06) == [0, 1]
    assert slow_committers({0: 0.012, 1: 0.010, 2: 0.011, 3: 0.009}, {0, 1, 2, 3}, 0.0) == []


def test_a_commit_far_above_its_peers_but_small_beside_the_slow_writes_is_no_cause() -> None:
    """A network fault: writes at 300 ms, one OSD's commits at 4 ms against 1 ms (4x, but no share)."""
    assert slow_committers({0: 0.004, 1: 0.001, 2: 0.001}, {0, 1, 2}, 0.2 * 0.3) == []


def test_fewer_than_two_figures_compare_nothing() -> None:
    assert slow_committers({0: 0.5}, {0, 1, 2}, 0.0) == []
    assert slow_committers({}, {0}, 0.0) == []
    assert slow_committers({0: 0.0, 1: 0.0}, {0, 1}, 0.0) == []


def test_answers_without_a_bluestore_commit_counter_give_no_reading() -> None:
    good = {"bluestore": {"commit_lat": {"avgcount": 734, "sum": 1.31721036, "avgtime": 0.0018}}}
    assert commit_reading(good) == (1.31721036, 734.0)
    renamed = {
        "bluestore": {"kv_commit_lat": {"avgcount": 9, "sum": 9.0}, "txc_commit_lat": {"avgcount": 5, "sum": 0.5}}
    }
    assert commit_reading(renamed) == (0.5, 5.0)
    for bad in ({}, {"bluestore": {}}, {"bluestore": {"commit_lat": {"sum": "x", "avgcount": 1}}}, None, []):
        assert commit_reading(bad) is None


def test_every_release_the_lab_runs_has_the_commit_counter_under_one_of_its_names() -> None:
    """Reef and Tentacle renamed commit_lat (txc_commit_lat): the probe read nothing there and named a peer of
    the throttled OSD (live, Tentacle). The schemas are every counter of an OSD of each release."""
    schemas = json.loads((EXPORTER_FIXTURES / "ceph_counter_schemas.json").read_text())
    assert sorted(schemas) == ["16.2.15", "18.2.7", "20.2.4"]
    assert COMMIT_COMMAND == {"prefix": "perf dump", "logger": "bluestore"}  # the whole logger: either name
    for release, schema in schemas.items():
        bluestore = schema["counter_schema"]["osd"]["bluestore"]
        found = [name for name in COMMIT_COUNTERS if name in bluestore]
        assert len(found) == 1, (release, [k for k in bluestore if "commit" in k])


def test_read_all_leaves_out_what_cannot_be_read_and_bounds_parallel_requests() -> None:
    lock = threading.Lock()
    state = {"now": 0, "max": 0}

    def read(osd: int) -> tuple[float, float] | None:
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        try:
            time.sleep(0.02)
            if osd == 3:
                raise TimeoutError("osd.3: no answer in 5 s")
            return None if osd == 4 else (0.1 * osd, 10.0)
        finally:
            with lock:
                state["now"] -= 1

    got = read_all(read, [0, 1, 2, 3, 4, 5, 1], workers=2)
    assert sorted(got) == [0, 1, 2, 5]
    assert state["max"] <= 2


def test_an_osd_that_does_not_answer_costs_the_budget_not_its_timeout() -> None:
    release = threading.Event()

    def read(osd: int) -> tuple[float, float]:
        if osd == 1:
            release.wait(10)  # a hung OSD: the adapter's own timeout would be 10 s
        return (0.0, 1.0)

    t0 = time.monotonic()
    got = read_all(read, range(6), workers=2, budget=0.3)
    elapsed = time.monotonic() - t0
    release.set()
    assert elapsed < 1.5, elapsed
    assert 1 not in got and 0 in got


def test_read_all_reads_nothing_beyond_its_bound() -> None:
    calls: list[int] = []
    assert read_all(lambda o: calls.append(o) or (0.0, 0.0), range(MAX_OSDS + 1), workers=8) == {}
    assert calls == []


# ----- the probe gathers it ---------------------------------------------------------------------


class _Log:
    def __getattr__(self, name: str) -> Any:
        return lambda *a, **k: None


class _Adapter:
    """Three OSDs on one PG each, every acting set of all three; osd.0's commits take 150 ms."""

    def __init__(self) -> None:
        self.counters = {o: [0.0, 0.0] for o in range(3)}
        self.asked: list[int] = []

    def pg_primaries(self, pool_id: int) -> dict[int, int]:
        return {0: 0, 1: 1, 2: 2}

    def pg_acting(self, pool_id: int) -> dict[int, list[int]]:
        return {0: [0, 1, 2], 1: [1, 2, 0], 2: [2, 0, 1]}

    def osd_commit_latency(self, osd: int) -> tuple[float, float]:
        self.asked.append(osd)
        return self.counters[osd][0], self.counters[osd][1]

    def commit(self, slow: float = 0.150) -> None:
        for osd in self.counters:
            self.counters[osd][0] += slow if osd == 0 else 0.002
            self.counters[osd][1] += 1


class _IO:
    timeout = 5.0

    def __init__(self, adapter: _Adapter) -> None:
        self.adapter = adapter

    def write_full(self, name: str, data: bytes, timeout: float) -> float:
        self.adapter.commit()  # a replicated write: a commit on every OSD of the acting set
        return 0.16

    def read(self, name: str, size: int, timeout: float) -> float:
        return 0.001

    def remove(self, name: str, timeout: float) -> None:
        self.adapter.commit(slow=0.002)  # osd.0's device served the removes at once (a throttle's burst)


class _Ctx:
    unsettled = False
    targeted = False
    run_id = "rados-20261124T000000-abcd"
    log = _Log()

    def __init__(self, adapter: _Adapter) -> None:
        self.options = {**options.defaults(), "max_requests_in_flight": 8}
        self.coverage = ProbeCoverage()
        self.scratch_busy = lambda: False
        self.adapter = adapter
        self.osds = [OsdInfo(o, f"host{o}", True, "hdd") for o in range(3)]
        self.acting: dict[int, list[int]] = {}
        self.commit_latency: dict[int, float] = {}

    def check(self) -> None:
        pass

    def step_timeout(self, wanted: float) -> float:
        return wanted

    def remaining(self) -> float:
        return 30.0

    def progress(self, *_: Any) -> None:
        pass


def test_the_probe_records_each_members_own_commit_latency(monkeypatch: Any) -> None:
    monkeypatch.setattr("perfwatch.benchmarks.kinds.rados.time.sleep", lambda s: None)
    adapter = _Adapter()
    ctx = _Ctx(adapter)
    RadosLatency()._probe(ctx, _IO(adapter), 7, 3, "perfwatch")  # type: ignore[arg-type]
    assert ctx.acting == {0: [0, 1, 2], 1: [1, 2, 0], 2: [2, 0, 1]}
    assert sorted(adapter.asked) == [0, 0, 1, 1, 2, 2], "each member read once before and once after"
    assert round(ctx.commit_latency[0], 3) == 0.150, "the writes' commits alone: the fast removes are left out"
    assert round(ctx.commit_latency[1], 3) == round(ctx.commit_latency[2], 3) == 0.002
    assert slow_committers(ctx.commit_latency, ctx.commit_latency, 0.2 * 0.16) == [0]


def test_an_adapter_without_the_counter_leaves_no_evidence_and_the_probe_still_measures(monkeypatch: Any) -> None:
    monkeypatch.setattr("perfwatch.benchmarks.kinds.rados.time.sleep", lambda s: None)
    adapter = _Adapter()
    monkeypatch.setattr(adapter, "osd_commit_latency", None)
    ctx = _Ctx(adapter)
    results = RadosLatency()._probe(ctx, _IO(adapter), 7, 3, "perfwatch")  # type: ignore[arg-type]
    assert len(results) == 6 and ctx.commit_latency == {}


def test_an_osd_busy_with_the_collectors_request_is_asked_again_within_the_budget() -> None:
    """The collector's `perf dump` in flight made the adapter refuse the commit reading (busy): the probe
    lost the one OSD's evidence it needed to name it."""
    refusals = {0: 3, 1: 1000}  # osd.0 busy for three asks; osd.1 busy past the budget

    def read(osd: int) -> tuple[float, float]:
        if refusals.get(osd, 0) > 0:
            refusals[osd] -= 1
            raise FetchError(REASON_BUSY, f"osd.{osd} has not answered an earlier request")
        return (0.5, 5.0)

    t0 = time.monotonic()
    got = read_all(read, [0, 1, 2], workers=3, budget=0.5)
    assert sorted(got) == [0, 2]
    assert refusals[0] == 0
    assert time.monotonic() - t0 < 1.5


def test_an_error_that_is_not_busy_is_not_asked_again() -> None:
    asks: list[int] = []

    def read(osd: int) -> tuple[float, float]:
        asks.append(osd)
        raise FetchError(REASON_ERROR, f"osd.{osd}: -22 unknown logger")

    assert read_all(read, [0, 1], workers=2, budget=0.5) == {}
    assert sorted(asks) == [0, 1]


def test_the_summary_names_the_slowest_first_and_the_median() -> None:
    latency = {1: 0.0029, 0: 0.1502, 2: 0.0031, 3: 0.004}
    assert commit_summary(latency) == "osd.0 150.2 ms, osd.3 4.0 ms, osd.2 3.1 ms (median of 4: 4.0 ms)"
    assert commit_summary({}) == "none read"
