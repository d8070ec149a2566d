"""The OSD counters as rows (counter_rows.py): rendered family by family from rows, they give exactly the
samples the Sample path gives, and they refuse what the registry refuses."""

import copy
import math
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from perfwatch.collection.module_families import MODULE_REGISTRY
from perfwatch.common import exposition
from perfwatch.common.daemon_counters import counters
from perfwatch.common.daemon_counters.counter_rows import Layout
from perfwatch.common.exposition import exposable
from perfwatch.common.metrics_model import Registry, Sample
from tests.unit.fakes import PERF_DUMP


def parsed(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            key = (s.name, frozenset(s.labels.items()))
            assert key not in out, f"{key} twice"
            out[key] = s.value
    return out


def same(a: dict[Any, float], b: dict[Any, float]) -> bool:
    return a.keys() == b.keys() and all(
        (math.isnan(a[k]) and math.isnan(b[k])) or a[k] == b[k] for k in a
    )  # NaN is a value like any other here


def odd_dump() -> dict[str, Any]:
    """A dump with every kind of surprise the reading must carry through the same way on both paths."""
    dump = copy.deepcopy(PERF_DUMP)
    dump["bluestore"]["bluestore_onode_hits"] = dump["bluestore"].pop("onode_hits")  # the older spelling
    dump["bluestore"]["onode_misses"] = float("nan")
    dump["bluestore"]["bluestore_onodes"] = 12.0  # a whole float: written as 12
    dump["bluefs"]["db_used_bytes"] = 2**60  # beyond an exact float: written as a float
    dump["bluefs"]["slow_used_bytes"] = "seven"  # not a number: missing, as before
    dump["bluestore"]["bluestore_buffer_hit_bytes"] = True  # JSON true: 1
    dump["bluestore-pricache"]["target_bytes"] = float("inf")
    del dump["rocksdb"]["get_latency"]
    return dump


@pytest.mark.parametrize("dump", [PERF_DUMP, odd_dump(), {}], ids=["pacific", "odd", "empty"])
def test_rows_render_the_samples_the_sample_path_renders(dump: dict[str, Any]) -> None:
    rows = []
    samples = []
    for osd in range(3):
        row = counters.osd_row(dump)
        rows.append((f"osd.{osd}", row))
        samples.extend(counters.osd_counters(dump, f"osd.{osd}").samples)
    columns = counters.OSD_LAYOUT.columns(rows)
    from_rows = parsed(exposition.render(MODULE_REGISTRY, columns))
    from_samples = parsed(exposition.render(MODULE_REGISTRY, samples))
    assert same(from_rows, from_samples)
    assert {c.family for c in columns if c.series} == {s.family for s in samples}
    if dump:
        assert len(from_rows) > 3 * 30, "the fixture's counters are there"


def test_what_each_odd_value_becomes() -> None:
    row = counters.osd_row(odd_dump())
    by_name = dict(zip((s.family + s.suffix for s in counters.OSD_LAYOUT.slots), row.values, strict=True))
    assert by_name[counters.ONODE_HITS] == PERF_DUMP["bluestore"]["onode_hits"]
    assert by_name[counters.ONODE_MISSES] == "NaN"
    assert by_name[counters.ONODES] == 12 and isinstance(by_name[counters.ONODES], int)
    assert by_name[counters.DB_USED] == float(2**60) and isinstance(by_name[counters.DB_USED], float)
    assert by_name[counters.SLOW_USED] is None and "bluefs.slow_used_bytes" in row.missing
    assert by_name[counters.MEM_TARGET] == "+Inf"
    assert "rocksdb.get_latency" in row.missing


def test_exposable_values() -> None:
    assert exposable(3) == 3 and exposable(3.0) == 3 and exposable(0.25) == 0.25
    assert exposable(False) == 0 and exposable(None) is None and exposable("3") is None
    assert exposable(float("-inf")) == "-Inf"
    assert exposable(1e20) == 1e20 and isinstance(exposable(10**16), float)
    with pytest.raises(OverflowError):
        exposable(10**400)


@pytest.mark.parametrize(
    "where,value",
    [("mempool bytes", None), ("latency sum", None), ("latency count", "x")],
)
def test_a_number_that_is_not_one_fails_the_reading(where: str, value: Any) -> None:
    dump = copy.deepcopy(PERF_DUMP)
    if where == "mempool bytes":
        dump["mempool"]["bluestore_cache_onode_bytes"] = value
    elif where == "latency sum":
        dump["rocksdb"]["submit_latency"]["sum"] = value
    else:
        dump["rocksdb"]["submit_latency"]["avgcount"] = value
    with pytest.raises((TypeError, ValueError)):
        counters.osd_row(dump)


def test_columns_and_samples_of_one_family_are_written_together() -> None:
    """A benchmark family holds per-OSD results (columns) and cluster-wide ones (samples): one family."""
    registry = Registry()
    registry.declare("lat_seconds", "gauge", "x", ("ceph_daemon", "kind"), optional=("ceph_daemon",))
    registry.declare("up", "gauge", "y", ("ceph_daemon",))
    items = [
        exposition.Column("lat_seconds", "", "ceph_daemon", (("kind", "rados"),), [("osd.0", 0.002), ("osd.1", 3)]),
        exposition.Column("up", "", "ceph_daemon", (), [("osd.0", 1)]),
        Sample("lat_seconds", "", (("kind", "rbd"),), 0.004),
        exposition.Column("lat_seconds", "", "ceph_daemon", (("kind", "net"),), []),
    ]
    text = exposition.render(registry, items)
    families = {f.name: f.samples for f in text_string_to_metric_families(text)}
    assert [(s.labels, s.value) for s in families["ceph_perfwatch_lat_seconds"]] == [
        ({"ceph_daemon": "osd.0", "kind": "rados"}, 0.002),
        ({"ceph_daemon": "osd.1", "kind": "rados"}, 3.0),
        ({"kind": "rbd"}, 0.004),
    ]
    assert text.count("# TYPE ceph_perfwatch_lat_seconds") == 1
    assert exposition.render(registry, [exposition.Column("up", "", "ceph_daemon", (), [])]) == ""


def test_the_registry_refuses_a_layout_whose_labels_it_does_not_declare() -> None:
    registry = Registry()
    registry.declare("x_total", "counter", "x", ("ceph_daemon",))
    spec = counters.Spec("x_total", "osd", ("op_r",), "value", (("op", "read"),))
    row = Layout((spec,)).read(PERF_DUMP)
    with pytest.raises(ValueError):
        exposition.render(registry, Layout((spec,)).columns([("osd.0", row)]))
    with pytest.raises(KeyError):
        exposition.render(registry, Layout((spec._replace(family="y_total"),)).columns([("osd.0", row)]))


def test_a_label_value_with_a_percent_sign_or_quote_is_written_as_it_is() -> None:
    registry = Registry()
    registry.declare("x_total", "counter", "x", ("ceph_daemon", "op"))
    spec = counters.Spec("x_total", "osd", ("op_r",), "value", (("op", '50%"s'),))
    layout = Layout((spec,))
    text = exposition.render(registry, layout.columns([('osd."0', layout.read(PERF_DUMP))]))
    (sample,) = next(iter(text_string_to_metric_families(text))).samples
    assert sample.labels == {"ceph_daemon": 'osd."0', "op": '50%"s'}
    assert sample.value == PERF_DUMP["osd"]["op_r"]


def test_a_numeric_string_where_a_number_belongs_is_read_as_its_number() -> None:
    """As float() read them before the rows: a latency's sum and a mempool's bytes."""
    dump = copy.deepcopy(PERF_DUMP)
    dump["rocksdb"]["get_latency"]["sum"] = "0.5"
    dump["mempool"]["bluestore_cache_data_bytes"] = "131072"
    got = {(s.family, s.suffix, dict(s.labels).get("pool")): s.value for s in counters.osd_counters(dump, "o").samples}
    assert got[(counters.GET_LAT, "_sum", None)] == 0.5
    assert got[("bluestore_mempool_bytes", "", "data")] == 131072
