import json
from pathlib import Path

import pytest

from perfwatch_host_exporter import network, rgw, tc
from tests import paths
from tests.fixtures.exporter.fakehost import FakeHost

FIXTURES = paths.EXPORTER_FIXTURES


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_tbf_rate_from_real_tc_json_is_bytes_per_second() -> None:
    # `tc qdisc add dev pwx0 root tbf rate 80mbit ...`: tc -j reports 10,000,000 bytes/s
    qdiscs = tc.parse_qdiscs(fixture("tc_qdisc_all.json"))
    assert qdiscs["pwx0"] == tc.RootQdisc("tbf", 10_000_000.0)
    assert qdiscs["pwx1"].kind == "htb" and qdiscs["pwx1"].rate_bytes is None
    assert qdiscs["eth0"].kind == "pfifo_fast"
    assert tc.parse_qdiscs("") == {}


def test_single_device_output_has_no_dev_field_so_the_exporter_asks_for_all_devices() -> None:
    raw = json.loads(fixture("tc_qdisc_tbf_pwx0.json"))  # `tc -j qdisc show dev pwx0`, as captured
    assert "dev" not in raw[0] and raw[0]["options"]["rate"] == 10_000_000
    assert tc.parse_qdiscs(fixture("tc_qdisc_tbf_pwx0.json")) == {}, "rows without a device are not guessed at"


def test_htb_capacity_is_the_root_classes_ceiling() -> None:
    assert tc.htb_capacity(fixture("tc_class_htb_pwx1.txt")) == 250_000_000.0  # root 1:1 ceil 2Gbit
    assert tc.htb_capacity("class htb 1:10 parent 1:1 prio 0 rate 100Mbit ceil 1Gbit\n") is None
    two_roots = "class htb 1:1 root rate 1Gbit ceil 1Gbit\nclass htb 1:2 root rate 500Mbit\n"
    assert tc.htb_capacity(two_roots) == 125_000_000.0 + 62_500_000.0


@pytest.mark.parametrize(
    ("text", "bytes_per_second"),
    [("80Mbit", 10e6), ("1Gbit", 125e6), ("1500Kbit", 187500.0), ("800bit", 100.0), ("1Mibit", 131072.0)],
)
def test_tc_rates(text: str, bytes_per_second: float) -> None:
    assert tc.parse_rate(text) == bytes_per_second


def test_bad_rate_is_an_error() -> None:
    with pytest.raises(ValueError):
        tc.parse_rate("fast")


class FakeTc:
    def __init__(self, outputs: dict[str, str], fail: bool = False) -> None:
        self.outputs = outputs
        self.fail = fail
        self.calls: list[list[str]] = []

    def __call__(self, args: list[str]) -> str:
        self.calls.append(args)
        if self.fail:
            raise RuntimeError("tc exploded")
        return self.outputs[" ".join(args)]


@pytest.fixture
def host(tmp_path: Path) -> FakeHost:
    h = FakeHost(tmp_path / "host")
    h.interface("lo", None)
    h.interface("eth0", "-1")  # virtio: unknown speed
    h.interface("pwx0", "10000")
    h.interface("pwx1", "10000")
    h.interface("ens1", "25000")
    h.interface("ifb0", None)  # unreadable in real life (EINVAL); absent here
    return h


def test_capacity_from_tc_else_speed(host: FakeHost) -> None:
    fake = FakeTc(
        {
            "-j qdisc show": fixture("tc_qdisc_all.json"),
            "class show dev pwx1": fixture("tc_class_htb_pwx1.txt"),
        }
    )
    errors: list[str] = []
    rows = network.capacities(host.root(), fake, errors.append)
    assert {r.device: (r.bytes_per_second, r.source) for r in rows} == {
        "pwx0": (10e6, "tc"),
        "pwx1": (250e6, "tc"),
        "ens1": (25000 * 125000, "speed"),
    }
    assert errors == []


def test_without_tc_or_when_it_fails_speed_is_used(host: FakeHost) -> None:
    rows = network.capacities(host.root(), None, lambda m: None)
    assert {r.device: r.source for r in rows} == {"pwx0": "speed", "pwx1": "speed", "ens1": "speed"}
    errors: list[str] = []
    rows = network.capacities(host.root(), FakeTc({}, fail=True), errors.append)
    assert {r.device: r.source for r in rows} == {"pwx0": "speed", "pwx1": "speed", "ens1": "speed"}
    assert len(errors) == 1 and "tc exploded" in errors[0]


def test_rgw_objecter_counters_are_summed_over_every_objecter() -> None:
    dump = json.loads(fixture("pacific_rgw_perf_dump_objecter.json"))
    assert rgw.objecter_ops(dump) == {"call": 854.0, "omap_rd": 2.0, "omap_wr": 0.0, "omap_del": 0.0}
    assert rgw.objecter_ops({"objecter": {"osdop_call": 3}}) == {"call": 3.0}
    assert rgw.objecter_ops({"rgw": {"req": 1}}) == {}


def test_container_interfaces_are_left_out_by_default(host: FakeHost) -> None:
    for name in ("veth12ab", "cali3f9", "docker0", "lo"):
        host.write(f"sys/class/net/{name}/speed", "10000\n")
    rows = network.capacities(host.root(), None, lambda m: None)
    assert {r.device for r in rows} == {"pwx0", "pwx1", "ens1"}
    everything = network.capacities(host.root(), None, lambda m: None, __import__("re").compile("^lo$"))
    assert {r.device for r in everything} == {"pwx0", "pwx1", "ens1", "veth12ab", "cali3f9", "docker0"}
