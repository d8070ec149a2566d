"""Own only what it created: the scratch pool must be perfwatch's, the S3 probe bucket must be one it
created or an empty one, and removal goes on until the scratch is gone. Pure logic with fakes."""

from __future__ import annotations

from typing import Any

import pytest

from perfwatch.benchmarks.base import BenchError
from perfwatch.benchmarks.kinds import rgw
from perfwatch.benchmarks.lifecycle import scratch_pool
from perfwatch.benchmarks.records import scratch as scratch_records
from perfwatch.benchmarks.records.store import BenchStore
from perfwatch.ceph.seam import FetchError
from perfwatch.common.daemon_counters.fetch_reasons import REASON_ERROR
from tests.unit.perfwatch.benchmarks.records.test_store import KV

OPTS = {
    "scratch_pool": "perfwatch",
    "scratch_namespace": "perfwatch",
    "scratch_pool_create": True,
    "scratch_pool_pg_num": 32,
}


class Pools:
    """The pools as the mgr's OSD map and df show them: ids assigned in order and never reused."""

    def __init__(self, apps: dict[str, dict[str, Any]]) -> None:
        self.apps = apps
        self.ids = {name: i + 1 for i, name in enumerate(apps)}
        self.objects: dict[str, int | None] = {}
        self.max_id = len(apps)
        self.created: list[str] = []
        self.tagged: list[str] = []
        self.ready_after = 0  # polls before a new pool's PGs have primaries
        self.fail_tag = False  # the mgr dies between `osd pool create` and tagging the pool
        self.on_create: Any = None  # called with the pool's name just before it is created

    def pool_applications(self, name: str) -> dict[str, Any] | None:
        return self.apps.get(name)

    def pool(self, name: str) -> tuple[int, int] | None:
        return (self.ids[name], 32) if name in self.apps else None

    def pool_max(self) -> int:
        return self.max_id

    def pool_objects(self, name: str) -> int | None:
        return self.objects.get(name, 0) if name in self.apps else None  # None in objects: df lacks it

    def create_pool(self, name: str, pg_num: int) -> None:
        if self.on_create:
            self.on_create(name)
        self.created.append(name)
        self.add(name, {})
        self.polls = 0

    def add(self, name: str, apps: dict[str, Any]) -> None:
        """A pool made (by perfwatch, or by hand) with these applications."""
        self.max_id += 1
        self.ids[name], self.apps[name] = self.max_id, apps

    def tag_pool(self, name: str, application: str) -> None:
        if self.fail_tag:
            raise RuntimeError("the mgr restarted")
        self.tagged.append(name)
        self.apps[name][application] = {}

    def pg_primaries(self, pool_id: int) -> dict[int, int]:
        """A new pool's PGs get their primaries a few polls after it was created."""
        self.polls += 1
        return {pg: pg % 3 for pg in range(32)} if self.polls > self.ready_after else {0: 0}


def store(kv: KV) -> BenchStore:
    """What a (new) mgr loads from the key-value store, which outlives a mgr restart."""
    return BenchStore(kv.get, kv.put, history_limit=10, window=3, log=Log())


def ensure(pools: Pools, kv: KV, options: dict | None = None) -> tuple[int, int]:
    return scratch_pool.ensure_pool(pools, options or OPTS, store(kv), Log())


@pytest.mark.parametrize(
    ("apps", "problem"),
    [
        ({"perfwatch": {}}, None),
        ({"perfwatch": {}, "rbd": {}}, "is also used by rbd"),  # an RBD pool tagged perfwatch too
        ({"rgw": {}}, "is not perfwatch's: it belongs to application rgw (no 'perfwatch' application tag)"),
        ({}, "it has no application tag"),
        ({"perfwatch": {}, "cephfs": {"data": "x"}}, "is also used by cephfs"),
    ],
)
def test_only_a_pool_tagged_perfwatch_and_used_by_nothing_else_is_ours(apps: dict, problem: str | None) -> None:
    found = scratch_pool.ownership_problem(".rgw.root", apps)
    assert (found is None) if problem is None else (problem in (found or "")), found


def test_a_missing_pool_is_created_and_tagged_and_an_existing_foreign_one_refused_unchanged() -> None:
    pools, kv = Pools({".rgw.root": {"rgw": {}}}), KV()
    assert ensure(pools, kv) == (2, 32)
    assert pools.created == ["perfwatch"] and pools.apps["perfwatch"] == {"perfwatch": {}}
    assert store(kv).pool_creations() == {}, "the creation record goes once the pool is tagged"
    with pytest.raises(BenchError, match=r"scratch pool '\.rgw\.root' is not perfwatch's"):
        ensure(pools, kv, dict(OPTS, scratch_pool=".rgw.root"))
    assert pools.created == ["perfwatch"] and pools.tagged == ["perfwatch"]


def test_a_missing_pool_with_creation_off_is_refused_saying_how_to_make_one() -> None:
    problem = scratch_pool.pool_problem(Pools({}), dict(OPTS, scratch_pool_create=False), {})
    assert problem and "ceph osd pool application enable perfwatch perfwatch" in problem


def test_the_creation_is_recorded_in_the_store_before_the_pool_is_created() -> None:
    pools, kv = Pools({".rgw.root": {"rgw": {}}}), KV()
    seen: list[dict] = []
    pools.on_create = lambda name: seen.append(store(kv).pool_creations())
    ensure(pools, kv)
    assert seen == [{"perfwatch": {"pool_max": 1, "at": seen[0]["perfwatch"]["at"]}}]


def test_a_pool_whose_creation_cannot_be_recorded_is_not_created() -> None:
    pools, kv = Pools({}), KV()

    def refuse(key: str, value: str | None) -> None:
        raise OSError("config-key set: EACCES")

    with pytest.raises(OSError, match="EACCES"):
        scratch_pool.ensure_pool(pools, OPTS, BenchStore(kv.get, refuse, 10, 3, Log()), Log())
    assert pools.created == []


def test_a_pool_left_untagged_by_a_mgr_restart_is_finished_by_the_next_mgr() -> None:
    # Seen on Tentacle: the lab enabled prometheus right after perfwatch; the mgr respawned between
    # perfwatch's `osd pool create` and its tagging, and every later run was refused ("no application tag").
    pools, kv = Pools({".rgw.root": {"rgw": {}}}), KV()
    pools.fail_tag = True
    with pytest.raises(RuntimeError, match="the mgr restarted"):
        ensure(pools, kv)
    assert pools.apps["perfwatch"] == {}
    pools.fail_tag = False
    assert scratch_pool.pool_problem(pools, OPTS, store(kv).pool_creations()) is None  # `bench run` accepts it
    assert ensure(pools, kv) == (2, 32)  # the next mgr's first run
    assert pools.created == ["perfwatch"] and pools.apps["perfwatch"] == {"perfwatch": {}}
    assert store(kv).pool_creations() == {}


@pytest.mark.parametrize(
    ("made_before_the_record", "objects", "why"),
    [
        (True, 0, "it has no application tag"),  # an operator's untagged pool of that name, older than the record
        (False, 5, "holds 5 objects perfwatch did not write: not touching it"),
        (False, None, "the mgr has no object count for it yet"),  # df without it: not tagged on a guess
    ],
)
def test_an_untagged_pool_perfwatch_did_not_begin_to_create_or_that_holds_objects_is_refused_untouched(
    made_before_the_record: bool, objects: int | None, why: str
) -> None:
    pools, kv = Pools({}), KV()
    if made_before_the_record:
        pools.add("perfwatch", {})
    store(kv).begin_pool_creation("perfwatch", pools.pool_max())
    if not made_before_the_record:
        pools.add("perfwatch", {})
    pools.objects["perfwatch"] = objects
    with pytest.raises(BenchError, match=why):
        ensure(pools, kv)
    assert pools.apps["perfwatch"] == {} and pools.tagged == [] and pools.created == []


def test_a_creation_record_of_another_pool_proves_nothing_about_this_one() -> None:
    pools, kv = Pools({"perfwatch": {}}), KV()
    store(kv).begin_pool_creation("other-pool", 0)
    with pytest.raises(BenchError, match="it has no application tag"):
        ensure(pools, kv)
    assert pools.tagged == []


def test_a_creation_the_mon_refused_leaves_no_record_behind() -> None:
    pools, kv = Pools({}), KV()

    def refused(name: str) -> None:
        raise FetchError(REASON_ERROR, "mon: osd pool create: -34 pg_num 32 would exceed mon_max_pg_per_osd")

    pools.on_create = refused
    with pytest.raises(FetchError, match="mon_max_pg_per_osd"):
        ensure(pools, kv)
    assert store(kv).pool_creations() == {}
    pools.add("perfwatch", {})  # made by hand afterwards, untagged: not perfwatch's
    with pytest.raises(BenchError, match="it has no application tag"):
        ensure(pools, kv)


@pytest.mark.parametrize(
    ("data", "kept", "dropped"),
    [
        ({"perfwatch": {"pool_max": 3, "at": 1.5}}, {"perfwatch": {"pool_max": 3, "at": 1.5}}, 0),
        (
            {"perfwatch": {"pool_max": "3", "at": 1.5}, "x": {"pool_max": 1, "at": 2}},
            {"x": {"pool_max": 1, "at": 2}},
            1,
        ),
        ({"": {"pool_max": 3, "at": 1.5}, "y": {"pool_max": True, "at": 1}, "z": []}, {}, 3),
    ],
)
def test_a_broken_creation_record_keeps_only_entries_that_prove_something(data: dict, kept: dict, dropped: int) -> None:
    cleaned = scratch_records.clean_pool_creations(data)
    assert cleaned.value == kept and len(cleaned.dropped) == dropped
    assert scratch_records.clean_pool_creations(["perfwatch"]).value is None


class Io:
    def __init__(self, names: list[str], per_list: int) -> None:
        self.names = names
        self.per_list = per_list
        self.lists = 0

    def list_objects(self, prefix: str, limit: int) -> list[str]:
        self.lists += 1
        return [n for n in self.names if n.startswith(prefix)][: min(limit, self.per_list)]

    def remove_many(self, names: list[str]) -> None:
        self.names = [n for n in self.names if n not in set(names)]


class Log:
    def __getattr__(self, name: str) -> Any:
        return lambda *a, **k: None


def test_removal_goes_on_batch_after_batch_until_no_object_of_the_prefix_is_left() -> None:
    io = Io([f"rados-1.{i}" for i in range(25)] + ["rados-2.0", "user-object"], per_list=10)
    assert scratch_pool.remove_objects_with_prefix(io, "rados-1.", Log()) == 25
    assert io.names == ["rados-2.0", "user-object"] and io.lists == 4


def test_removal_past_its_time_budget_keeps_the_entry_for_the_next_pass() -> None:
    io = Io([f"rados-1.{i}" for i in range(25)], per_list=10)
    ticks = iter(range(0, 1000, 200))
    with pytest.raises(BenchError, match="remain after 300 s"):
        scratch_pool.remove_objects_with_prefix(io, "rados-1.", Log(), budget=300, clock=lambda: float(next(ticks)))
    assert len(io.names) == 5


class FakeS3:
    """A bucket as the probe sees it through S3 (RGW's answers: creating a bucket one owns is a 200)."""

    def __init__(self, exists: bool, objects: list[str], tags: bytes | None = None, owner: str = "probe") -> None:
        self.exists, self.objects, self.tags, self.owner = exists, list(objects), tags, owner
        self.calls: list[tuple[str, str, str]] = []

    @property
    def tagged(self) -> bool:
        return self.tags is not None and rgw.has_owner_tag(self.tags)

    def request(self, method: str, path: str, body: bytes = b"", query: str = "", ok: tuple = (200, 204),
                content_type: str = "") -> tuple[int, float, bytes]:  # fmt: skip
        self.calls.append((method, path, query))
        if method == "GET" and path == "/":  # who the probe's user is
            return 200, 0.0, b"<ListAllMyBucketsResult><Owner><ID>probe</ID></Owner></ListAllMyBucketsResult>"
        if method == "PUT" and not query:
            self.exists = True
            return 200, 0.0, b""
        if not self.exists:
            assert 404 in ok, "a missing bucket must be expected"
            return 404, 0.0, b"<Error><Code>NoSuchBucket</Code></Error>"
        if method == "PUT" and query == "tagging":
            self.tags = body
            return 200, 0.0, b""
        if method == "GET" and query == "acl":
            return 200, 0.0, f"<AccessControlPolicy><Owner><ID>{self.owner}</ID></Owner></AccessControlPolicy>".encode()
        if method == "GET" and query == "tagging":
            return (200, 0.0, self.tags) if self.tags is not None else (404, 0.0, b"")
        if method == "GET":
            keys = "".join(f"<Contents><Key>{k}</Key></Contents>" for k in self.objects[:3])
            return 200, 0.0, f"<ListBucketResult>{keys}</ListBucketResult>".encode()
        raise AssertionError(f"the claim must not {method} anything")


USER_TAGS = b"<Tagging><TagSet><Tag><Key>team</Key><Value>backup</Value></Tag></TagSet></Tagging>"


@pytest.mark.parametrize(
    ("s3", "why"),
    [
        (FakeS3(True, ["rgw-important-backup.tar", "rgw-2024-report.csv", "keepme.txt"]), "holds objects perfwatch"),
        (FakeS3(True, ["rgw-important-backup.tar"], tags=USER_TAGS), "holds objects perfwatch did not write"),
        (FakeS3(True, [], tags=USER_TAGS), "carries tags that are not perfwatch's"),
        # another user's empty bucket, with a policy granting the probe's user s3:*
        (FakeS3(True, [], owner="alice"), "belongs to user 'alice', not to the probe's user 'probe'"),
        (FakeS3(True, [], tags=rgw.tagging_xml(), owner="alice"), "belongs to user 'alice'"),
    ],
)
def test_a_bucket_that_is_not_the_probes_is_refused_and_nothing_in_it_touched(s3: FakeS3, why: str) -> None:
    objects, tags = list(s3.objects), s3.tags
    with pytest.raises(BenchError, match=why):
        rgw.claim_bucket(s3, "backups")  # type: ignore[arg-type]
    assert s3.objects == objects and s3.tags == tags
    assert [c for c in s3.calls if c[0] != "GET"] == [], "only looked"


@pytest.mark.parametrize(
    ("s3", "tagged_now"),
    [
        (FakeS3(exists=False, objects=[]), True),  # created by the probe: tagged as ours
        (FakeS3(exists=True, objects=[]), True),  # an empty, untagged bucket: adopted and tagged
        (FakeS3(exists=True, objects=["anything"], tags=rgw.tagging_xml()), False),  # ours from before
    ],
)
def test_a_bucket_perfwatch_created_or_an_empty_one_is_the_probes(s3: FakeS3, tagged_now: bool) -> None:
    rgw.claim_bucket(s3, "perfwatch-probe")  # type: ignore[arg-type]
    assert s3.tagged
    assert (("PUT", "/perfwatch-probe", "tagging") in s3.calls) == tagged_now


def test_probe_object_keys_carry_the_run_id() -> None:
    assert rgw.s3_key("rgw-20261123T010203-abcd") == "perfwatch-probe.rgw-20261123T010203-abcd"


def test_a_new_pool_is_ready_only_when_every_pg_has_a_primary() -> None:
    pools = Pools({})
    naps: list[float] = []
    pools.create_pool("perfwatch", 32)
    pools.ready_after = 3
    scratch_pool.wait_for_primaries(pools, "perfwatch", (1, 32), sleep=naps.append)
    assert pools.polls == 4 and len(naps) == 3
    pools.polls = -1000  # a pool whose PGs never peer
    ticks = iter(range(100))
    with pytest.raises(BenchError, match="after 60 s the mgr knows a primary for only 1 of its 32 PGs"):
        scratch_pool.wait_for_primaries(
            pools, "perfwatch", (1, 32), clock=lambda: float(next(ticks)), sleep=naps.append
        )


RUN = "rados-20261123T000000-abcd"
APPS = {"perfwatch": {"perfwatch": {}}, "default.rgw.buckets.index": {"rgw": {}}, "cephfs_data": {"cephfs": {}}}


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"pool": "perfwatch", "namespace": "perfwatch", "prefix": RUN}, None),
        ({"pool": "default.rgw.buckets.index", "namespace": "perfwatch", "prefix": RUN}, None),
        ({"pool": "perfwatch", "namespace": "perfwatch", "image": "perfwatch." + RUN}, None),
        ({"s3_bucket": "b", "s3_key": "perfwatch-probe." + RUN}, None),
        # a tampered registry: an empty prefix in the default namespace of a cephfs pool
        ({"pool": "cephfs_data", "namespace": "", "prefix": ""}, "prefix '' is not the run id"),
        ({"pool": "cephfs_data", "namespace": "x", "prefix": RUN}, "neither perfwatch's nor RGW's (cephfs)"),
        ({"pool": "perfwatch", "namespace": "", "prefix": RUN}, "no namespace of its own"),
        ({"pool": "perfwatch", "namespace": "perfwatch", "prefix": "rados-"}, "is not the run id"),
        ({"pool": "perfwatch", "namespace": "perfwatch", "image": "user-disk"}, "image 'user-disk' is not"),
        ({"pool": "default.rgw.buckets.index", "namespace": "", "image": "perfwatch." + RUN}, "neither perfwatch's"),
        ({"s3_bucket": "b", "s3_key": "rgw-important-backup.tar"}, "is not rados-20261123T000000-abcd's"),
        ({"pool": "gone", "namespace": "perfwatch", "prefix": RUN}, "is gone"),
        ({"pool": "perfwatch"}, "names no object"),
    ],
)
def test_cleanup_acts_only_on_entries_naming_the_runs_own_objects_in_its_own_places(
    entry: dict, problem: str | None
) -> None:
    found = scratch_pool.entry_problem(RUN, entry, APPS.get)
    assert (found is None) if problem is None else (problem in (found or "")), found


def test_the_omap_probe_writes_only_into_index_pools_of_rgw() -> None:
    class Adapter:
        def pool_names_ending(self, suffix: str) -> list[str]:
            return ["default.rgw.buckets.index", "notrgw.buckets.index"]

        def pool_applications(self, name: str) -> dict[str, Any] | None:
            return {"rgw": {}} if name.startswith("default") else {"cephfs": {}}

    assert rgw.index_pools(Adapter()) == ["default.rgw.buckets.index"]
