"""Our family names (the host exporter's and the mgr module's) can never be ones Ceph's own exporters
write: `ceph-exporter` (beside ours on every Quincy+ host) and the mgr `prometheus` module.

Both name a perf counter `ceph_` + promethize(logger + "_" + counter), as
tests/fixtures/exporter/ceph_exporter_naming.py restates; ours all start `ceph_perfwatch_`, so a clash needs
a Ceph logger that promethizes to that. The fixture ceph_counter_schemas.json holds every logger and
counter (any priority) of an OSD, a mon and an RGW of Ceph 16.2.15, 18.2.7 and 20.2.4, read from their
admin sockets, and the families each release's prometheus module served, perf counters included.
"""

import json
from typing import Any

import pytest

from perfwatch.collection.module_families import MODULE_REGISTRY
from perfwatch.common.exposition import PREFIX
from perfwatch.common.metrics_model import Registry
from perfwatch_host_exporter.families import EXPORTER_REGISTRY
from tests import paths
from tests.fixtures.exporter.ceph_exporter_naming import counter_family_names, emulate, exporter_labels, promethize

FIXTURES = paths.EXPORTER_FIXTURES
SCHEMAS: dict[str, Any] = json.loads((FIXTURES / "ceph_counter_schemas.json").read_text())
# The families ceph-exporter writes about itself (src/exporter/DaemonMetricCollector.cc)
CEPH_EXPORTER_OWN = (
    "ceph_exporter_scrape_time",
    "ceph_exporter_minflt_total",
    "ceph_exporter_majflt_total",
    "ceph_exporter_num_threads",
    "ceph_exporter_cpu_usage",
    "ceph_exporter_cpu_total",
    "ceph_exporter_vm_size",
    "ceph_exporter_resident_size",
)
_SUFFIXES = {
    "counter": ("", "_created"),
    "gauge": ("",),
    "summary": ("", "_sum", "_count", "_created"),
    "histogram": ("", "_bucket", "_sum", "_count", "_created"),
}


def sample_names(registry: Registry) -> set[str]:
    """Every sample name a registry's families may write (or a parser may derive), with the prefix."""
    names = set()
    for family in registry.families():
        names.update(PREFIX + family.name + suffix for suffix in _SUFFIXES[family.type])
        if family.type == "counter" and family.name.endswith("_total"):
            names.add(PREFIX + family.name[: -len("_total")])  # the family name a parser reports
    return names


OURS = sample_names(EXPORTER_REGISTRY) | sample_names(MODULE_REGISTRY)


def ceph_counter_names(release: str) -> set[str]:
    """Every name ceph-exporter could write for the captured daemons of a release, at any priority."""
    names = set()
    for loggers in SCHEMAS[release]["counter_schema"].values():
        for logger, counters in loggers.items():
            for counter, (_priority, type_) in counters.items():
                names.update(counter_family_names(logger, counter, type_))
    return names


def test_every_name_we_write_is_in_our_namespace() -> None:
    assert len(OURS) > 100
    assert all(name.startswith("ceph_perfwatch_") for name in OURS)
    assert not [n for n in OURS if n.startswith(("ceph_exporter_", "ceph_daemon_"))]


def test_promethize_as_ceph_has_it() -> None:
    assert promethize("osd_op_r") == "ceph_osd_op_r"
    assert promethize("AsyncMessenger::Worker-0_msgr_recv_bytes") == "ceph_AsyncMessenger_Worker_0_msgr_recv_bytes"
    assert (
        promethize("throttle-msgr_dispatch_throttler-client_get") == "ceph_throttle_msgr_dispatch_throttler_client_get"
    )
    assert promethize("mds_mem_ino+") == "ceph_mds_mem_ino_plus"
    assert promethize("mds_mem_ino-") == "ceph_mds_mem_ino_minus"
    assert counter_family_names("osd", "op_r_latency", 0x5) == [
        "ceph_osd_op_r_latency_sum",
        "ceph_osd_op_r_latency_count",
    ]


@pytest.mark.parametrize("release", sorted(SCHEMAS))
def test_no_ceph_logger_can_land_in_our_namespace(release: str) -> None:
    """A ceph-exporter name starts "ceph_perfwatch_" only if the logger's does "perfwatch"."""
    loggers = {logger for kind in SCHEMAS[release]["counter_schema"].values() for logger in kind}
    assert "osd" in loggers and "bluestore" in loggers and "rgw" in loggers
    assert not [logger for logger in loggers if promethize(logger).lower().startswith("ceph_perfwatch")]
    theirs = ceph_counter_names(release)
    assert {"ceph_osd_op_r", "ceph_osd_op_w", "ceph_osd_op_r_latency_sum", "ceph_osd_op_r_latency_count"} <= theirs
    assert {"ceph_osd_op_r_out_bytes", "ceph_osd_op_w_in_bytes", "ceph_bluestore_kv_sync_lat_sum"} <= theirs
    assert not [name for name in theirs if name.lower().startswith("ceph_perfwatch")]
    assert not theirs & OURS
    assert not set(CEPH_EXPORTER_OWN) & OURS


@pytest.mark.parametrize("release", sorted(SCHEMAS))
def test_the_prometheus_module_names_the_same_way_and_apart_from_ours(release: str) -> None:
    """The families the release's mgr prometheus module served (exclude_perf_counters=false): the
    OSD op counters named as ceph-exporter names them, nothing of ours."""
    served = set(SCHEMAS[release]["mgr_prometheus_families"])
    wanted = ("op_r", "op_w", "op_r_latency", "op_w_latency", "op_r_out_bytes", "op_w_in_bytes")
    osd = SCHEMAS[release]["counter_schema"]["osd"]["osd"]
    for counter in wanted:
        assert set(counter_family_names("osd", counter, osd[counter][1])) <= served, counter
    assert not served & OURS
    assert not [name for name in served if name.startswith("ceph_perfwatch_")]


def test_ceph_exporter_labels_its_daemons_as_we_do() -> None:
    """ceph_daemon="osd.0" from the socket's name on both sides, so the two join; an RGW gets
    instance_id instead (and a socket name without one, like the lab's client.rgw.lab, none at all)."""
    assert exporter_labels("ceph-osd.0") == {"ceph_daemon": "osd.0"}
    assert exporter_labels("ceph-mon.a") == {"ceph_daemon": "mon.a"}
    assert exporter_labels("ceph-client.rgw.foo.node1.abcdef.7.94739968030880") == {"instance_id": "abcdef"}
    assert exporter_labels("ceph-client.rgw.lab") == {}
    schema = {
        "osd": [
            {
                "labels": {},
                "counters": {
                    "op_r": {"priority": 8, "type": 10},
                    "op_wip": {"priority": 5, "type": 2},
                    "agent_skip": {"priority": 0, "type": 10},
                },
            }
        ]
    }
    dump = {"osd": [{"labels": {}, "counters": {"op_r": 91, "op_wip": 0, "agent_skip": 0}}]}
    assert emulate("ceph-osd.0", schema, dump) == [
        'ceph_osd_op_r{ceph_daemon="osd.0"} 91',
        'ceph_osd_op_wip{ceph_daemon="osd.0"} 0',
    ]
