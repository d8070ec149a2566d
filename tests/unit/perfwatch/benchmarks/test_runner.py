"""The runner's rules with a fake adapter and a fake kind: guard, one heavy at a time, cancel and
cleanup, orphans, history before "finished", regressions, the schedule."""

from __future__ import annotations

import errno
import json
import threading
import time
from typing import Any

import pytest

from perfwatch.benchmarks.base import Benchmark, Context, ParamSpec
from perfwatch.benchmarks.kinds.registry import KINDS
from perfwatch.benchmarks.lifecycle.run_control import Refused
from perfwatch.benchmarks.measurement import Measurement
from perfwatch.benchmarks.records.store import BenchStore
from perfwatch.benchmarks.run import Run
from perfwatch.benchmarks.runner import Runner
from perfwatch.ceph.seam import OsdInfo
from perfwatch.commands import bench_replies as commands
from perfwatch.commands.output import OutputFormat
from perfwatch.options import declared as options


def entry(run_id: str) -> dict:
    """A scratch entry as the kinds register them: objects named with the run id, in perfwatch's own pool
    and namespace (the cleanup acts on no other)."""
    return {"pool": "perfwatch", "namespace": "perfwatch", "prefix": run_id}


class FakeBenchAdapter:
    def __init__(self) -> None:
        self.health = "HEALTH_OK"
        self.pgs = {"active+clean": 32}
        self.up = {0: True, 1: True, 2: True}

    def osd_infos(self) -> list[OsdInfo]:
        return [OsdInfo(i, f"host{i}", up, "ssd") for i, up in self.up.items()]

    def cluster_state(self) -> tuple[str, dict[str, int]]:
        return self.health, dict(self.pgs)

    def osd_op_latency(self, osd_id: int) -> dict[str, float]:
        return {"sum": 0.0, "avgcount": 0.0}

    def pool_applications(self, name: str) -> dict[str, Any] | None:
        return {"perfwatch": {}} if name == "perfwatch" else None


class FakeKind(Benchmark):
    name = "fake"
    heavy = True
    params = (ParamSpec("value", 100, 1, 1000, "the IOPS each OSD reports"),)

    def __init__(self) -> None:
        self.release = threading.Event()
        self.release.set()
        self.cleaned: list[dict] = []
        self.fail_cleanup = False

    def run(self, ctx: Context) -> list[Measurement]:
        ctx.register_scratch(entry(ctx.run_id))
        while not self.release.wait(0.01):
            ctx.check()
        return [Measurement(self.name, "iops", o.id, float(ctx.params["value"]), "iops") for o in ctx.osds]

    def cleanup(self, adapter: Any, io_factory: Any, scratch: dict, log: Any, options: dict) -> None:
        if self.fail_cleanup:
            raise RuntimeError("pool unreachable")
        self.cleaned.append(scratch)


class Progress:
    def __init__(self) -> None:
        self.events: list[tuple] = []

    def update(self, *a: Any) -> None:
        self.events.append(("update", *a))

    def complete(self, *a: Any) -> None:
        self.events.append(("complete", *a))

    def fail(self, *a: Any) -> None:
        self.events.append(("fail", *a))


class Log:
    def __getattr__(self, name: str) -> Any:
        return lambda *a, **k: None


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> dict:
    kind = FakeKind()
    monkeypatch.setitem(KINDS, "fake", kind)
    kv: dict[str, str] = {}
    opts = options.defaults()
    store = BenchStore(kv.get, lambda k, v: kv.__setitem__(k, v), 10, 10)
    adapter = FakeBenchAdapter()
    progress = Progress()
    finished: list = []
    r = Runner(adapter, lambda p, n: None, store, lambda: opts, Log(), progress, finished.append)
    return {"runner": r, "kind": kind, "adapter": adapter, "store": store, "kv": kv, "opts": opts,
            "progress": progress, "finished": finished}  # fmt: skip


def wait_done(r: Runner, run_id: str) -> Run:
    run = r.runs[run_id]
    assert run.thread is not None
    run.thread.join(5)
    assert run.state != "running"
    return run


def test_a_heavy_round_is_refused_with_every_reason(env: dict) -> None:
    env["adapter"].health = "HEALTH_ERR"
    env["adapter"].pgs = {"active+clean": 30, "active+recovering": 2}
    env["adapter"].up[1] = False
    with pytest.raises(Refused) as refused:
        env["runner"].start("fake", None, {})
    text = str(refused.value)
    assert "HEALTH_ERR" in text and "2 of 32 PGs" in text and "recovery" in text and "down: osd.1" in text
    assert env["runner"].runs == {}


def test_bad_input_is_a_value_error_naming_the_limit(env: dict) -> None:
    with pytest.raises(ValueError, match="value must be between 1 and 1000"):
        env["runner"].start("fake", None, {"value": 5000})
    with pytest.raises(ValueError, match=r"no such OSD: osd\.9"):
        env["runner"].start("fake", [9], {})
    with pytest.raises(ValueError, match="unknown kind"):
        env["runner"].start("nope", None, {})


def test_an_osd_bench_size_no_run_can_use_is_einval_naming_the_range(env: dict) -> None:
    code, out, err = commands.run(env["runner"], "osd", None, {"mib_4m": 8, "writes_4k": None}, OutputFormat.plain)
    assert (code, out, err) == (-errno.EINVAL, "", "mib_4m 8 is out of range: mib_4m must be between 16 and 10240")
    assert env["runner"].runs == {}


def test_one_heavy_round_at_a_time_and_cancel_cleans_up(env: dict) -> None:
    env["kind"].release.clear()
    first = env["runner"].start("fake", None, {})
    with pytest.raises(Refused, match="still running"):
        env["runner"].start("fake", None, {})
    assert env["runner"].cancel(first.run_id) == [first.run_id]
    run = wait_done(env["runner"], first.run_id)
    assert run.state == "cancelled"
    assert env["kind"].cleaned == [entry(first.run_id)]
    assert env["store"].scratch() == {}
    assert env["progress"].events[-1][0] == "fail"
    assert env["store"].history("fake")[-1]["state"] == "cancelled"


def test_a_finished_run_is_in_the_history_before_it_shows_as_finished(env: dict) -> None:
    seen: list[str] = []
    env["runner"].on_finished = lambda run: seen.append(run.state)
    run = wait_done(env["runner"], env["runner"].start("fake", None, {}).run_id)
    assert seen == ["running"], "callbacks run before the state is published"
    assert run.state == "done"
    record = env["store"].history("fake")[-1]
    assert record["run_id"] == run.run_id and len(record["results"]) == 3
    assert env["progress"].events[-1] == ("complete", "perfwatch-" + run.run_id)


def test_results_far_below_baseline_are_regressions_until_they_recover(env: dict) -> None:
    r = env["runner"]
    for _ in range(3):
        wait_done(r, r.start("fake", None, {"value": 1000}).run_id)
    assert env["store"].regressions() == {}
    wait_done(r, r.start("fake", [1], {"value": 100}).run_id)
    assert set(env["store"].regressions()) == {"fake/iops/osd.1"}
    wait_done(r, r.start("fake", [1], {"value": 900}).run_id)
    assert env["store"].regressions() == {}
    assert json.loads(env["kv"]["bench/regressions"])["data"] == {}


def test_scratch_of_a_previous_mgr_is_removed_and_a_failed_cleanup_is_retried(env: dict) -> None:
    env["store"].add_scratch("fake-old-1", "fake", entry("fake-old-1"))
    env["kind"].fail_cleanup = True
    assert env["runner"].cleanup_orphans() == []
    assert "fake-old-1" in env["store"].scratch()
    env["kind"].fail_cleanup = False
    assert env["runner"].cleanup_orphans() == ["fake-old-1"]
    assert env["store"].scratch() == {} and env["kind"].cleaned == [entry("fake-old-1")]


def test_the_store_survives_a_new_runner(env: dict) -> None:
    wait_done(env["runner"], env["runner"].start("fake", None, {}).run_id)
    again = BenchStore(env["kv"].get, lambda k, v: env["kv"].__setitem__(k, v), 10, 10)
    assert again.history("fake")[-1]["state"] == "done"
    assert again.baselines()["fake/iops/osd.0"] == [100.0]


def test_the_schedule_starts_light_kinds_and_leaves_heavy_ones_on_command(
    env: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[str] = []

    def fake_start(kind: str, osds: Any, params: dict, trigger: str = "command") -> Any:
        started.append(kind)
        run = Run(kind + "-x", kind, False, {}, [], trigger)
        return run

    monkeypatch.setattr(env["runner"], "start", fake_start)
    env["runner"].tick(time.time())
    assert sorted(started) == ["net", "rados", "rgw"]
    env["opts"]["osd_bench_interval"] = 3600
    env["opts"]["rados_probe_interval"] = 0
    started.clear()
    env["store"].mark_attempt("net", time.time())
    env["store"].mark_attempt("rgw", time.time())
    env["runner"].tick(time.time())
    assert started == ["osd"]


class LightKind(FakeKind):
    name = "light"
    heavy = False


def test_a_light_probe_regression_must_persist_before_it_is_raised(env: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    light = LightKind()
    monkeypatch.setitem(KINDS, "light", light)
    r = env["runner"]
    for _ in range(3):
        wait_done(r, r.start("light", [0], {"value": 1000}).run_id)
    for n in range(1, 3):  # two slow results in a row: not yet
        wait_done(r, r.start("light", [0], {"value": 100}).run_id)
        assert env["store"].regressions() == {} and env["store"].streaks() == {"light/iops/osd.0": n}
    wait_done(r, r.start("light", [0], {"value": 100}).run_id)
    assert env["store"].regressions()["light/iops/osd.0"]["consecutive"] == 3
    wait_done(r, r.start("light", [0], {"value": 1000}).run_id)  # one good result clears it
    assert env["store"].regressions() == {} and env["store"].streaks() == {}


def test_a_failure_in_the_bookkeeping_still_ends_the_run(env: dict) -> None:
    def boom(run: Any) -> None:
        raise RuntimeError("health update failed")

    env["runner"].on_finished = boom
    run = wait_done(env["runner"], env["runner"].start("fake", None, {}).run_id)
    assert run.state == "failed" and "bookkeeping failed" in run.message
    env["runner"].on_finished = lambda run: None
    assert wait_done(env["runner"], env["runner"].start("fake", None, {}).run_id).state == "done"


class UnsettledKind(FakeKind):
    name = "unsettled"

    def run(self, ctx: Context) -> list[Measurement]:
        ctx.register_scratch(entry(ctx.run_id))
        ctx.unsettled = True  # an op of ours may still land after this run ends
        return [Measurement(self.name, "iops", 0, 1.0, "iops")]


def test_scratch_of_a_run_with_ops_in_flight_is_cleaned_again_later(env: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    kind = UnsettledKind()
    monkeypatch.setitem(KINDS, "unsettled", kind)
    run = wait_done(env["runner"], env["runner"].start("unsettled", None, {}).run_id)
    assert kind.cleaned == [entry(run.run_id)]
    assert run.run_id in env["store"].scratch(), "kept for a later pass"
    assert env["runner"].cleanup_orphans() == [run.run_id]
    assert env["store"].scratch() == {}


class SelfCleaningKind(FakeKind):
    """A light probe that removed every object it wrote (scratch_removed), some op perhaps still in flight."""

    name = "selfcleaning"
    heavy = False
    in_flight = False

    def run(self, ctx: Context) -> list[Measurement]:
        ctx.register_scratch(entry(ctx.run_id))
        ctx.scratch_removed = True
        ctx.unsettled = self.in_flight
        return [Measurement(self.name, "iops", 0, 1.0, "iops")]


def test_a_run_that_removed_all_it_wrote_is_not_listed_for_cleanup_unless_an_op_may_still_land(
    env: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    kind = SelfCleaningKind()
    monkeypatch.setitem(KINDS, "selfcleaning", kind)
    run = wait_done(env["runner"], env["runner"].start("selfcleaning", None, {}).run_id)
    assert run.state == "done" and kind.cleaned == [] and env["store"].scratch() == {}
    kind.in_flight = True
    run = wait_done(env["runner"], env["runner"].start("selfcleaning", None, {}).run_id)
    assert kind.cleaned == [entry(run.run_id)] and run.run_id in env["store"].scratch()


def test_orphan_cleanup_never_touches_a_live_run(env: dict) -> None:
    env["kind"].release.clear()
    run = env["runner"].start("fake", None, {})
    for _ in range(100):
        if run.run_id in env["store"].scratch():
            break
        time.sleep(0.01)
    assert env["runner"].cleanup_orphans() == []
    assert env["kind"].cleaned == []
    env["kind"].release.set()
    wait_done(env["runner"], run.run_id)
    assert env["kind"].cleaned == [entry(run.run_id)]


def test_a_malformed_window_does_not_stop_the_light_probes(env: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[str] = []
    monkeypatch.setattr(
        env["runner"],
        "start",
        lambda kind, *a, **k: started.append(kind) or Run(kind, kind, False, {}, [], ""),
    )
    env["opts"].update(osd_bench_interval=60, heavy_bench_window="tonight")
    env["runner"].tick(time.time())
    assert sorted(started) == ["net", "rados", "rgw"]


def test_reset_baseline_forgets_baselines_and_regressions(env: dict) -> None:
    r = env["runner"]
    for _ in range(3):
        wait_done(r, r.start("fake", None, {"value": 1000}).run_id)
    wait_done(r, r.start("fake", [1], {"value": 100}).run_id)
    assert "fake/iops/osd.1" in env["store"].regressions()
    assert r.reset_baselines("fake", 1) == ["fake/iops/osd.1"]
    assert env["store"].regressions() == {} and "fake/iops/osd.1" not in env["store"].baselines()
    assert "fake/iops/osd.0" in env["store"].baselines()


def test_a_run_a_dead_mgr_left_in_progress_is_history_as_interrupted_with_its_results(env: dict) -> None:
    kv, store = env["kv"], env["store"]
    env["kind"].release.clear()
    run = env["runner"].start("fake", None, {})
    in_progress = json.loads(kv["bench/running"])["data"]
    assert list(in_progress) == [run.run_id]
    # What the dying mgr had measured so far, as its progress saves wrote it:
    partial = dict(in_progress[run.run_id], updated_at=run.started_at + 3)
    partial["results"] = [Measurement("fake", "iops", 0, 42.0, "iops").to_dict()]
    store.save_running(partial)
    # A new active mgr reads the same store: a new store and runner over the same keys.
    successor_store = BenchStore(kv.get, lambda k, v: kv.__setitem__(k, v), 10, 10)
    successor = Runner(
        FakeBenchAdapter(), lambda p, n: None, successor_store, lambda: env["opts"], Log(), Progress(), list
    )
    [record] = successor_store.history("fake")
    assert record["run_id"] == run.run_id and record["state"] == "interrupted"
    assert record["results"] == partial["results"] and record["ended_at"] == partial["updated_at"]
    assert "failover" in record["message"]
    assert successor.outcomes() == {"fake/interrupted": 1}
    assert json.loads(kv["bench/running"])["data"] == {}
    assert run.run_id in successor_store.scratch()  # its scratch is still registered, for the orphan cleanup
    env["kind"].release.set()
    wait_done(env["runner"], run.run_id)


def test_a_finished_run_leaves_nothing_in_progress(env: dict) -> None:
    wait_done(env["runner"], env["runner"].start("fake", None, {}).run_id)
    assert json.loads(env["kv"]["bench/running"])["data"] == {}


def test_each_new_step_of_a_heavy_round_is_shown_in_progress_at_once(env: dict) -> None:
    class Steps(FakeKind):
        def run(self, ctx: Context) -> list[Measurement]:
            for osd in ctx.osds:  # quicker than the once-a-second limit on the same step
                ctx.progress(osd.id / 3, f"on osd.{osd.id}")
            return super().run(ctx)

    KINDS["fake"] = Steps()
    wait_done(env["runner"], env["runner"].start("fake", None, {}).run_id)
    shown = [e[2] for e in env["progress"].events if e[0] == "update"]
    assert [m for m in shown if "on osd." in m] == [f"perfwatch fake bench: on osd.{i}" for i in range(3)]


def test_scratch_of_a_kind_this_version_does_not_know_is_kept_not_dropped(env: dict) -> None:
    env["store"].add_scratch("future-20261123T010203-abcd", "future", entry("future-20261123T010203-abcd"))
    assert env["runner"].cleanup_orphans() == []
    assert "future-20261123T010203-abcd" in env["store"].scratch()


def test_run_ids_named_by_a_broken_scratch_record_are_rebuilt_and_cleaned(env: dict) -> None:
    class Writer(FakeKind):
        writes = True

        def recovered_entries(self, run_id: str, options: dict, adapter: Any) -> list[dict]:
            return [entry(run_id)]

    kind = Writer()
    KINDS["fake"] = kind
    env["kv"]["bench/scratch"] = '{"version": 2, "data": {"fake-20261123T010203-abcd": {"kind": "fake", "entries": 7}}}'
    store = BenchStore(env["kv"].get, lambda k, v: env["kv"].__setitem__(k, v), 10, 10)
    assert store.recovered_scratch() == {"fake-20261123T010203-abcd": "fake"}
    r = Runner(FakeBenchAdapter(), lambda p, n: None, store, lambda: env["opts"], Log(), Progress(), list)
    assert r.cleanup_orphans() == ["fake-20261123T010203-abcd"]
    assert kind.cleaned == [dict(entry("fake-20261123T010203-abcd"), kind="fake")]
    assert store.scratch() == {} and store.recovered_scratch() == {}


def test_a_kind_that_writes_into_the_scratch_pool_refuses_a_pool_that_is_not_perfwatchs(env: dict) -> None:
    class PoolWriter(FakeKind):
        scratch_pool = True

    KINDS["fake"] = PoolWriter()
    apps: dict[str, Any] = {"perfwatch": {"perfwatch": {}}, "rgw": {"rgw": {}}}
    env["adapter"].pool_applications = lambda name: apps.get(name)
    env["opts"]["scratch_pool"] = "rgw"
    with pytest.raises(ValueError, match=r"scratch pool 'rgw' is not perfwatch's: it belongs to application rgw"):
        env["runner"].start("fake", None, {})
    assert env["runner"].runs == {}
    env["opts"]["scratch_pool"] = "perfwatch"
    wait_done(env["runner"], env["runner"].start("fake", None, {}).run_id)


def test_shutdown_cancels_runs_and_stops_cleanups_between_operations(env: dict) -> None:
    class Io:
        stopping = None

    made: list[Io] = []
    r = Runner(FakeBenchAdapter(), lambda p, n: made.append(Io()) or made[-1], env["store"], lambda: env["opts"],
               Log(), Progress(), list)  # fmt: skip
    io = r.io_factory("perfwatch", "perfwatch")
    assert io.stopping is r.stopping and not r.stopping.is_set()
    r.shutdown()
    assert r.stopping.is_set()


def test_the_started_message_says_what_a_run_covers() -> None:
    kinds = KINDS
    assert kinds["rgw"].scope({"keys": 16, "shards": 4}, [0, 1, 2]) == "the bucket index"
    assert kinds["net"].scope({}, [0, 1, 2]) == "the heartbeat ping times of 3 OSDs"
    assert kinds["osd"].scope({}, [4]) == "1 OSD"
    assert kinds["rados"].scope({"seconds": 0, "queue_depth": 16}, [0, 1]) == "2 OSDs"
    assert (
        kinds["rados"].scope({"seconds": 10, "queue_depth": 16}, [0, 1]) == "the scratch pool, 10 s at queue depth 16"
    )
    assert kinds["rbd"].scope({"seconds": 5, "queue_depth": 16, "image_mib": 64}, [0]) == "a 64 MiB scratch image"
