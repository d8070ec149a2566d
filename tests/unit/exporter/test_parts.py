"""The exporter's parts (exporters/perfwatch_host_exporter/parts/): registered once each, run in their
registered order, and each reported with the seconds it took and whether it succeeded, as node_exporter
reports its collectors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from perfwatch_host_exporter.parts import PARTS
from perfwatch_host_exporter.parts.registry import DAEMON, HOST, Part, PartRegistry
from tests.unit.exporter.test_collector import build, collector, value, values

HOST_LABELS = {"hostname": "node1"}
IN_ORDER = ["process", "cgroup", "osd_devices", "osd_counters", "rgw_objecter", "device_kinds", "network"]


def parts_reported(got: dict[Any, float], family: str) -> dict[str, float]:
    return {dict(labels)["part"]: v for (name, labels), v in got.items() if name.endswith(family)}


def test_every_part_is_registered_once_in_its_order_and_a_second_name_or_an_unknown_scope_is_refused() -> None:
    assert PARTS.names() == IN_ORDER
    registry = PartRegistry()

    @registry.register("one")
    class One(Part):
        pass

    assert (One.name, One.scope) == ("one", DAEMON)
    with pytest.raises(ValueError, match="'one' registered twice"):
        registry.register("one", HOST)(type("Again", (Part,), {}))
    with pytest.raises(ValueError, match="scope 'cluster'"):
        registry.register("two", "cluster")
    assert registry.names() == ["one"]


@pytest.mark.parametrize("daemon_counters", [False, True])
def test_each_enabled_part_reports_its_success_and_duration(tmp_path: Path, daemon_counters: bool) -> None:
    host, fake = build(tmp_path)
    got = values(collector(host, fake, daemon_counters=daemon_counters).render())
    enabled = [p for p in IN_ORDER if daemon_counters or p != "osd_counters"]  # --daemon-counters turns it on
    assert parts_reported(got, "exporter_part_success") == dict.fromkeys(enabled, 1.0)
    assert sorted(parts_reported(got, "exporter_part_duration_seconds")) == sorted(enabled)


def test_a_part_is_timed_over_every_daemon_it_reads(tmp_path: Path) -> None:
    host, fake = build(tmp_path)

    class Ticking:
        """Each reading 0.25 s after the last."""

        def __init__(self) -> None:
            self.now = 1000.0

        def __call__(self) -> float:
            self.now += 0.25
            return self.now

    c = collector(host, fake, clock=Ticking())  # type: ignore[arg-type]
    seconds = parts_reported(values(c.render()), "exporter_part_duration_seconds")
    # osd.0, mon.a and rgw.x are reported: each daemon part is timed three times, each time at least 0.25 s
    for name in ("process", "cgroup", "osd_devices", "rgw_objecter"):
        assert seconds[name] >= 3 * 0.25, name
    assert seconds["network"] >= 0.25 and seconds["device_kinds"] >= 0.25


def test_a_part_that_counts_an_error_says_it_failed_and_the_others_do_not(tmp_path: Path) -> None:
    host, fake = build(tmp_path)
    del fake.replies[("/lab/run/ceph-client.rgw.x.asok", "perf dump")]  # the RGW's socket answers nothing
    got = values(collector(host, fake).render())
    success = parts_reported(got, "exporter_part_success")
    assert success.pop("rgw_objecter") == 0.0
    assert set(success.values()) == {1.0}
    assert value(got, "exporter_collection_errors_total", source="asok", **HOST_LABELS) == 1


def test_a_part_that_raises_says_it_failed_and_ends_only_that_daemons_samples(tmp_path: Path) -> None:
    host, fake = build(tmp_path)
    c = collector(host, fake)
    process = c.part("process")
    real = process.daemon

    def failing(run: Any, daemon: Any, st: Any, base: Any) -> Any:
        if daemon.ident.label == "mon.a":
            raise RuntimeError("a bug")
        return real(run, daemon, st, base)

    process.daemon = failing  # type: ignore[method-assign]
    got = values(c.render())
    assert parts_reported(got, "exporter_part_success")["process"] == 0.0
    assert value(got, "exporter_collection_errors_total", source="proc", **HOST_LABELS) == 2  # mon.a, and pid 400
    daemons = {dict(labels).get("ceph_daemon") for (name, labels) in got if name.endswith("daemon_threads")}
    assert daemons == {"osd.0", "rgw.x"}
