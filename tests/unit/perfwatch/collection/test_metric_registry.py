"""The registry families are declared in: duplicates and suffix clashes refused, label names enforced;
the module's and the exporter's registries build and share only the OSD counter families (the exporter's
--daemon-counters), which the exporter reads with perfwatch.common.daemon_counters.counters in one place."""

import ast
from pathlib import Path

import pytest

from perfwatch.collection.module_families import MODULE_REGISTRY
from perfwatch.common import exposition
from perfwatch.common.metrics_model import TYPES, Registry, Sample
from perfwatch_host_exporter import daemon_counters
from perfwatch_host_exporter.families import EXPORTER_REGISTRY
from tests import paths

EXPORTER_DIR = paths.REPO / "exporters" / "perfwatch_host_exporter"


def test_a_second_family_of_the_same_name_is_refused_even_if_identical() -> None:
    registry = Registry()
    registry.declare("things_total", "counter", "Things", ("ceph_daemon",))
    with pytest.raises(ValueError, match="things_total"):
        registry.declare("things_total", "counter", "Things", ("ceph_daemon",))
    with pytest.raises(ValueError):
        registry.declare("things_total", "gauge", "Other things")


@pytest.mark.parametrize(
    "first,second",
    [
        (("x", "counter"), ("x_total", "gauge")),
        (("x_total", "gauge"), ("x", "counter")),
        (("x_total", "counter"), ("x", "gauge")),
        (("x", "counter"), ("x_created", "gauge")),
        (("x", "histogram"), ("x_bucket", "gauge")),
        (("x", "histogram"), ("x_count", "gauge")),
        (("x", "histogram"), ("x_sum", "gauge")),
        (("x_bucket", "gauge"), ("x", "histogram")),
        (("x", "summary"), ("x_count", "counter")),
        (("x_sum", "gauge"), ("x", "summary")),
    ],
)
def test_names_that_clash_through_a_suffix_are_refused(first: tuple, second: tuple) -> None:
    registry = Registry()
    registry.declare(first[0], first[1], "first")
    with pytest.raises(ValueError, match="clashes"):
        registry.declare(second[0], second[1], "second")
    assert [f.name for f in registry.families()] == [first[0]], "a refused family is not half-declared"


def test_names_that_only_look_alike_are_fine() -> None:
    registry = Registry()
    registry.declare("x_total", "counter", "a counter")
    registry.declare("x_totals", "gauge", "a gauge")
    registry.declare("y", "histogram", "a histogram")
    registry.declare("y_buckets", "gauge", "another gauge")
    assert [f.name for f in registry.families()] == ["x_total", "x_totals", "y", "y_buckets"]


def test_bad_declarations_are_refused() -> None:
    registry = Registry()
    for args in [
        ("a", "untyped", "unknown type", ()),
        ("a-b", "gauge", "not a metric name", ()),
        ("a", "gauge", "not a label name", ("ceph-daemon",)),
        ("a", "gauge", "a reserved label name", ("__name__",)),
        ("a", "gauge", "a label twice", ("x", "x")),
        ("a", "histogram", "le is the histogram's", ("le",)),
        ("a", "summary", "quantile is the summary's", ("quantile",)),
    ]:
        with pytest.raises(ValueError):
            registry.declare(*args)
    with pytest.raises(ValueError):
        registry.declare("a", "gauge", "optional but not a label", ("x",), optional=("y",))
    assert registry.families() == ()


def registry_for_labels() -> Registry:
    registry = Registry()
    registry.declare("errors_total", "counter", "Errors", ("ceph_daemon", "reason"))
    registry.declare("result", "gauge", "Results", ("ceph_daemon", "kind"), optional=("ceph_daemon",))
    registry.declare("lat_seconds", "histogram", "Latency", ("ceph_daemon",))
    registry.declare("wait_seconds", "summary", "Waits", ("ceph_daemon",))
    return registry


@pytest.mark.parametrize(
    "sample",
    [
        Sample("errors_total", "", (("ceph_daemon", "osd.0"),), 1),  # one missing
        Sample("errors_total", "", (("ceph_daemon", "osd.0"), ("reason", "down"), ("host", "a")), 1),  # one more
        Sample("errors_total", "", (("ceph_daemon", "osd.0"), ("why", "down")), 1),  # another name
        Sample("errors_total", "", (("ceph_daemon", "osd.0"), ("reason", "a"), ("reason", "b")), 1),  # twice
        Sample("result", "", (("ceph_daemon", "osd.0"),), 1),  # the required one missing
        Sample("lat_seconds", "_bucket", (("ceph_daemon", "osd.0"),), 1),  # a bucket without le
        Sample("lat_seconds", "_sum", (("ceph_daemon", "osd.0"), ("le", "1")), 1),  # le off a bucket
        Sample("wait_seconds", "", (("ceph_daemon", "osd.0"),), 1),  # a summary's bare sample needs quantile
    ],
)
def test_a_sample_whose_label_names_are_not_its_familys_is_refused_when_rendered(sample: Sample) -> None:
    registry = registry_for_labels()
    with pytest.raises(ValueError, match="labels"):
        exposition.render(registry, [sample])


def test_a_sample_with_a_suffix_its_family_type_has_not_is_refused() -> None:
    registry = registry_for_labels()
    for sample in [
        Sample("errors_total", "_sum", (("ceph_daemon", "osd.0"), ("reason", "down")), 1),
        Sample("lat_seconds", "", (("ceph_daemon", "osd.0"),), 1),
    ]:
        with pytest.raises(ValueError, match="suffix"):
            exposition.render(registry, [sample])


def test_samples_with_the_declared_label_names_render_in_any_order_optional_ones_left_out() -> None:
    registry = registry_for_labels()
    text = exposition.render(
        registry,
        [
            Sample("errors_total", "", (("reason", "down"), ("ceph_daemon", "osd.0")), 1),
            Sample("result", "", (("kind", "rbd"),), 2),
            Sample("result", "", (("ceph_daemon", "osd.1"), ("kind", "osd")), 3),
            Sample("lat_seconds", "_bucket", (("ceph_daemon", "osd.0"), ("le", "+Inf")), 4),
            Sample("lat_seconds", "_count", (("ceph_daemon", "osd.0"),), 4),
            Sample("wait_seconds", "", (("ceph_daemon", "osd.0"), ("quantile", "0.5")), 0.1),
        ],
    )
    assert 'ceph_perfwatch_errors_total{reason="down",ceph_daemon="osd.0"} 1' in text
    assert 'ceph_perfwatch_result{kind="rbd"} 2' in text
    assert 'ceph_perfwatch_lat_seconds_bucket{ceph_daemon="osd.0",le="+Inf"} 4' in text


def test_the_module_and_the_exporter_registries_build_and_stay_apart() -> None:
    for registry in (MODULE_REGISTRY, EXPORTER_REGISTRY):
        families = registry.families()
        assert families and all(f.type in TYPES for f in families)
        rebuilt = Registry()  # every family again, into a fresh registry: no clash among them
        for f in families:
            rebuilt.declare(f.name, f.type, f.help, f.labels, f.optional)
        assert rebuilt.families() == families
    # they share exactly the OSD counter families the exporter can collect instead of the module
    # (--daemon-counters): same type and help, the exporter's with its cluster and hostname labels too
    module = {f.name: f for f in MODULE_REGISTRY.families()}
    exporter = {f.name: f for f in EXPORTER_REGISTRY.families()}
    assert set(module) & set(exporter) == set(daemon_counters.FAMILIES)
    for name in daemon_counters.FAMILIES:
        assert (exporter[name].type, exporter[name].help) == (module[name].type, module[name].help), name
        assert set(exporter[name].labels) == set(module[name].labels) | {"cluster", "hostname"}, name
    assert "daemon_threads" not in MODULE_REGISTRY and "daemon_threads" in EXPORTER_REGISTRY
    assert "bluestore_onodes" in MODULE_REGISTRY and "bench_iops" in MODULE_REGISTRY


def imported_modules(path: Path) -> set[str]:
    """Every module an exporter file imports, `from perfwatch.common.daemon_counters import counters` as
    perfwatch.common.daemon_counters.counters."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_the_exporter_reads_the_modules_counter_table_in_one_place_only() -> None:
    files = sorted(EXPORTER_DIR.glob("*.py"))
    assert files
    users = {path.name for path in files if "perfwatch.common.daemon_counters.counters" in imported_modules(path)}
    assert users == {"daemon_counters.py"}, (
        f"the exporter imports perfwatch.common.daemon_counters.counters in {sorted(users)}"
    )
    collector = imported_modules(EXPORTER_DIR / "collector.py")
    assert "perfwatch.common.metrics_model" in collector, "the check sees the exporter's imports"
