from prometheus_client.parser import text_string_to_metric_families

from perfwatch.common import exposition
from perfwatch.common.metrics_model import Registry, Sample

THINGS_HELP = 'Things\\counted\nover "lines"'
FAMILIES = Registry()
FAMILIES.declare("things_total", "counter", THINGS_HELP, ("ceph_daemon",))
FAMILIES.declare("lat_seconds", "summary", "A latency", ("ceph_daemon",))
FAMILIES.declare("size_bytes", "gauge", "A size", ("ceph_daemon",))


def test_help_and_type_appear_once_per_family_with_samples_together() -> None:
    text = exposition.render(
        FAMILIES,
        [
            Sample("things_total", "", (("ceph_daemon", "osd.0"),), 1),
            Sample("size_bytes", "", (("ceph_daemon", "osd.0"),), 2),
            Sample("things_total", "", (("ceph_daemon", "osd.1"),), 3),
        ],
    )
    lines = text.splitlines()
    assert lines.count("# TYPE ceph_perfwatch_things_total counter") == 1
    assert lines.count("# TYPE ceph_perfwatch_size_bytes gauge") == 1
    things = [i for i, line in enumerate(lines) if line.startswith("ceph_perfwatch_things_total{")]
    assert things == [2, 3], "a family's samples must be contiguous"


def test_escaping_of_help_and_label_values() -> None:
    paths = Registry()
    paths.declare("things_total", "counter", THINGS_HELP, ("path",))
    text = exposition.render(paths, [Sample("things_total", "", (("path", 'a\\b"c\nd'),), 1)])
    assert '# HELP ceph_perfwatch_things_total Things\\\\counted\\nover "lines"' in text
    assert 'ceph_perfwatch_things_total{path="a\\\\b\\"c\\nd"} 1' in text
    family = next(iter(text_string_to_metric_families(text)))
    assert family.samples[0].labels["path"] == 'a\\b"c\nd'


def test_summary_sum_and_count_parse_as_one_family() -> None:
    labels = (("ceph_daemon", "osd.3"),)
    text = exposition.render(
        FAMILIES, [Sample("lat_seconds", "_sum", labels, 0.25), Sample("lat_seconds", "_count", labels, 10)]
    )
    (family,) = list(text_string_to_metric_families(text))
    assert family.name == "ceph_perfwatch_lat_seconds" and family.type == "summary"
    assert {s.name: s.value for s in family.samples} == {
        "ceph_perfwatch_lat_seconds_sum": 0.25,
        "ceph_perfwatch_lat_seconds_count": 10,
    }


def test_values_integers_floats_and_specials() -> None:
    assert exposition.format_value(3.0) == "3"
    assert exposition.format_value(0.000141542) == "0.000141542"
    assert exposition.format_value(float("nan")) == "NaN"
    assert exposition.format_value(float("inf")) == "+Inf"
    assert exposition.format_value(1e20) == "1e+20"


def test_undeclared_family_is_a_bug_not_silent_output() -> None:
    import pytest

    with pytest.raises(KeyError):
        exposition.render(FAMILIES, [Sample("nope", "", (), 1)])
    assert exposition.render(FAMILIES, []) == ""
