"""mgr_module/perfwatch/options/validation.py and mgr_module/perfwatch/options/s3_endpoint.py: every option the mgr
cannot check, good and bad values, and what a refused value turns off."""

import subprocess
import sys

import pytest

from perfwatch.benchmarks.kinds.registry import KINDS
from perfwatch.benchmarks.lifecycle import schedule
from perfwatch.options import declared as options
from perfwatch.options import s3_endpoint as s3_endpoint_check
from perfwatch.options import validation
from tests import paths

GOOD_ENDPOINTS = [
    "",
    "http://127.0.0.1:7480",
    "http://198.18.1.1:17480/",
    "https://rgw.example.com",
    "https://rgw.example.com:443/s3",
    "http://[::1]:7480",
    "http://[2001:db8::5]:8080/prefix/",
    "http://rgw-1.ceph.svc.cluster.local:80",
    "http://ceph_rgw_1:7480",
    "HTTP://RGW:80",
    "http://[::ffff:10.0.0.5]:7480",  # IPv6 forms that carry an allowed IPv4 address
    "http://[::10.0.0.5]:7480",
    "http://[64:ff9b::a00:5]:7480",
    "http://[64:ff9b:1::a00:5]:7480",
    "http://[64:ff9b:1:a00:5::]:7480",  # local-use NAT64 at /48: 10.0.0.5 in octets 6-7 and 9-10
    "http://[2002:a00:5::1]:7480",
    "http://[2001:0:4136:e378:8000:63bf:f5ff:fffa]:7480",  # Teredo, client 10.0.0.5
]

BAD_ENDPOINTS = [
    ("file:///etc/passwd#", "not an http:// or https:// URL"),
    ("file:///etc/passwd", "not an http:// or https:// URL"),
    ("ftp://x", "not an http:// or https:// URL"),
    ("gopher://rgw:70/", "not an http:// or https:// URL"),
    ("rgw:7480", "not an http:// or https:// URL"),
    ("http://169.254.169.254/", "cloud metadata address"),
    ("http://169.254.169.254/latest/meta-data/", "cloud metadata address"),
    ("http://169.254.10.1:7480", "link-local"),
    ("http://[fe80::1]:80", "link-local"),
    ("http://[fe80::1%25eth0]:80", "link-local"),
    ("http://[fd00:ec2::254]/", "cloud metadata address"),
    ("http://100.100.100.200/", "cloud metadata address"),
    ("http://[::ffff:169.254.169.254]/", "cloud metadata address"),
    ("http://[64:ff9b::a9fe:a9fe]/", "cloud metadata address"),
    ("http://[::169.254.169.254]/", "cloud metadata address"),  # IPv4-compatible ::/96
    ("http://[::a9fe:a9fe]/", "cloud metadata address"),
    ("http://[::169.254.10.1]/", "link-local"),
    ("http://[::100.100.100.200]/", "cloud metadata address"),
    ("http://[64:ff9b:1::a9fe:a9fe]/", "cloud metadata address"),  # local-use NAT64 (RFC 8215), /96
    ("http://[64:ff9b:1:a9fe:a9:fe00::]/", "cloud metadata address"),  # the same at /48
    ("http://[64:ff9b:1:ffa9:fe:a9fe::]/", "cloud metadata address"),  # at /56
    ("http://[64:ff9b:1:ffff:a9:fea9:fe00:0]/", "cloud metadata address"),  # at /64
    ("http://[64:ff9b:1::a9fe:a01]/", "link-local"),
    ("http://[2002:a9fe:a9fe::1]/", "cloud metadata address"),  # 6to4: the IPv4 in bits 16-47
    ("http://[2002:a9fe:a01::1]/", "link-local"),
    ("http://[2002:e000:fb::1]/", "multicast"),
    ("http://[2001:0:4136:e378:8000:63bf:5601:5601]/", "cloud metadata address"),  # Teredo client, inverted
    ("http://[2001:0:4136:e378:8000:63bf:5601:f5fe]/", "link-local"),
    ("http://metadata.google.internal", "cloud metadata host name"),
    ("http://METADATA.google.internal./", "cloud metadata host name"),
    ("http://metadata/", "cloud metadata host name"),
    ("http://0.0.0.0:7480", "unspecified"),
    ("http://[::]:7480", "unspecified"),
    ("http://224.0.0.251/", "multicast"),
    ("http://[ff02::1]/", "multicast"),
    ("http://255.255.255.255/", "broadcast"),
    ("http://2130706433/", "numeric host"),
    ("http://0251.0376.0251.0376/", "numeric host"),
    ("http://0xa9fea9fe/", "numeric host"),
    ("http://user:pw@host/", "user information"),
    ("http://user@host/", "user information"),
    ("http://host/?x=1", "query or a fragment"),
    ("http://host/#frag", "query or a fragment"),
    ("http://host/?", "query or a fragment"),
    ("http://host:0/", "port"),
    ("http://host:65536/", "port"),
    ("http://host:/", "port"),
    ("http://host:80a/", "port"),
    ("http:///path", "no host"),
    ("http://", "no host"),
    ("http://a b/", "spaces"),
    ("http://host/\x00", "control"),
    ("http://h\u00f6st/", "non-ASCII"),
    ("http://host\\@evil/", "backslash"),
    ("http://-host-/", "not a valid host name"),
    ("http://" + "a" * 64 + ".example/", "not a valid host name"),
    ("http://x/" + "p" * 2000, "longer than"),
]


@pytest.mark.parametrize("value", GOOD_ENDPOINTS)
def test_good_endpoints(value: str) -> None:
    assert s3_endpoint_check.check_s3_endpoint(value) is None


@pytest.mark.parametrize(("value", "why"), BAD_ENDPOINTS)
def test_bad_endpoints_say_why_and_what_is_accepted(value: str, why: str) -> None:
    message = s3_endpoint_check.check_s3_endpoint(value)
    assert message is not None and why in message, message
    assert "accepted:" in message


def test_an_endpoint_message_never_shows_a_password() -> None:
    message = s3_endpoint_check.check_s3_endpoint("http://admin:hunter2@rgw:7480/")
    assert message is not None and "hunter2" not in message and "<userinfo>@rgw:7480" in message


def test_names_resolving_to_refused_addresses_are_refused() -> None:
    def resolver(answers: list) -> object:
        return lambda host, port: answers

    assert s3_endpoint_check.resolved_address("rgw", 80, resolver(["10.0.0.5", "fd12::5"])) == "10.0.0.5"
    for answers in (
        ["169.254.169.254"],
        ["10.0.0.5", "fe80::1%eth0"],
        ["0.0.0.0"],
        ["::ffff:169.254.169.254"],
        ["::169.254.169.254"],
        ["10.0.0.5", "64:ff9b:1::a9fe:a9fe"],
        ["2002:a9fe:a9fe::1"],
        ["2001:0:4136:e378:8000:63bf:5601:5601"],
    ):
        with pytest.raises(ValueError, match="rgw resolves to"):
            s3_endpoint_check.resolved_address("rgw", 80, resolver(answers))
    with pytest.raises(ValueError, match="no address"):
        s3_endpoint_check.resolved_address("rgw", 80, resolver([]))
    with pytest.raises(ValueError, match="metadata host name"):
        s3_endpoint_check.resolved_address("metadata.google.internal", 80, resolver(["10.0.0.5"]))


@pytest.mark.parametrize("value", ["", "22:00-06:00", "00:00-23:59", "1:00-2:30", " 08:00 - 17:00 "])
def test_good_windows(value: str) -> None:
    assert validation.check_window(value) is None


@pytest.mark.parametrize("value", ["garbage", "25:00-99:99", "24:00-01:00", "10:60-11:00", "10:00", "10-12", "-"])
def test_bad_windows(value: str) -> None:
    message = validation.check_window(value)
    assert message is not None and repr(value) in message and "HH:MM-HH:MM" in message


@pytest.mark.parametrize("value", ["10:00-10:00", "00:00-0:00", " 06:30 - 06:30 "])
def test_a_window_of_no_length_is_refused_saying_empty_means_any_time(value: str) -> None:
    message = validation.check_window(value)
    assert message is not None and repr(value) in message, message
    assert "starts and ends at the same time" in message and "leave the option empty for any time" in message
    used, refused = validation.effective(
        dict(options.defaults(), heavy_bench_window=value, osd_bench_interval=3600, rbd_bench_interval=7200),
        options.defaults(),
    )
    assert list(refused) == ["heavy_bench_window"] and used["heavy_bench_window"] == ""
    assert used["osd_bench_interval"] == 0 and used["rbd_bench_interval"] == 0  # scheduled heavy rounds off
    assert "heavy_bench_window" in validation.health_checks(refused)["PERFWATCH_CONFIG_INVALID"]["summary"]


@pytest.mark.parametrize("value", ["perfwatch", "my-pool.scratch_1", "x" * 128, "ns:1"])
def test_good_names(value: str) -> None:
    assert validation.check_name(value) is None


@pytest.mark.parametrize("value", ["", "a/b", "../x", "a\nb", "a\x00", "a b", " x", "\t", "x" * 129, "a\u200bb"])
def test_bad_names(value: str) -> None:
    message = validation.check_name(value)
    assert message is not None and "accepted: 1-128 characters" in message


@pytest.mark.parametrize("value", ["perfwatch-probe", "abc", "a.b-c.9", "0" * 63])
def test_good_buckets(value: str) -> None:
    assert validation.check_bucket(value) is None


@pytest.mark.parametrize(
    "value", ["ab", "a" * 64, "Perfwatch", "-abc", "abc-", ".abc", "a..b", "a_b", "192.168.1.1", "a b c", ""]
)
def test_bad_buckets(value: str) -> None:
    message = validation.check_bucket(value)
    assert message is not None and "3-63 characters" in message


@pytest.mark.parametrize("value", ["us-east-1", "default", "zg1", "a" * 32])
def test_good_regions(value: str) -> None:
    assert validation.check_region(value) is None


@pytest.mark.parametrize("value", ["", "US-EAST-1", "us_east_1", "a" * 33, "eu/1", "x\n"])
def test_bad_regions(value: str) -> None:
    message = validation.check_region(value)
    assert message is not None and "1-32 lowercase letters" in message


@pytest.mark.parametrize("value", ["::", "0.0.0.0", "10.1.2.3", "::1", "2001:db8::1"])
def test_good_server_addrs(value: str) -> None:
    assert validation.check_server_addr(value) is None


@pytest.mark.parametrize("value", ["", "localhost", "[::1]", "10.1.2.3:9284", "garbage", "10.1.2"])
def test_bad_server_addrs(value: str) -> None:
    message = validation.check_server_addr(value)
    assert message is not None and "IPv4 or IPv6 address" in message


def test_every_free_form_string_option_has_a_validator() -> None:
    for spec in options.OPTIONS:
        if spec["type"] == "str" and "enum_allowed" not in spec and spec["name"] not in options.SECRET_OPTIONS:
            assert spec["name"] in validation.CHECKS, spec["name"]
    for name in validation.CHECKS:
        assert validation.check(name, options.defaults()[name]) is None, f"the default of {name} is refused"


def test_heavy_interval_options_are_those_the_runner_schedules() -> None:
    assert set(validation.HEAVY_INTERVAL_OPTIONS) == set(schedule.heavy_interval_options(KINDS))


def configured(**values: object) -> dict:
    return dict(options.defaults(), osd_bench_interval=86400, rbd_bench_interval=86400, **values)


def test_valid_values_are_used_as_given() -> None:
    given = configured(rgw_s3_endpoint="http://10.0.0.5:7480", heavy_bench_window="22:00-06:00")
    used, refused = validation.effective(given, options.defaults())
    assert used == given and refused == {}


def test_a_refused_endpoint_turns_the_s3_probe_off() -> None:
    used, refused = validation.effective(configured(rgw_s3_endpoint="file:///etc/passwd#"), options.defaults())
    assert used["rgw_s3_endpoint"] == "" and list(refused) == ["rgw_s3_endpoint"]


@pytest.mark.parametrize(("name", "value"), [("rgw_s3_bucket", "Bad_Bucket"), ("rgw_s3_region", "US EAST")])
def test_a_refused_bucket_or_region_turns_the_s3_probe_off_too(name: str, value: str) -> None:
    given = configured(rgw_s3_endpoint="http://10.0.0.5:7480", **{name: value})
    used, refused = validation.effective(given, options.defaults())
    assert used["rgw_s3_endpoint"] == "" and used[name] == options.defaults()[name] and list(refused) == [name]


@pytest.mark.parametrize("window", ["garbage", "25:00-99:99"])
def test_a_refused_window_stops_scheduled_heavy_rounds_not_any_time(window: str) -> None:
    used, refused = validation.effective(configured(heavy_bench_window=window), options.defaults())
    assert list(refused) == ["heavy_bench_window"]
    assert used["osd_bench_interval"] == 0 and used["rbd_bench_interval"] == 0  # 0: on command only
    assert used["heavy_bench_window"] == ""
    assert used["rados_probe_interval"] == options.defaults()["rados_probe_interval"]  # light probes go on


def test_a_refused_scratch_pool_falls_back_to_the_default_pool_without_creating_it() -> None:
    used, refused = validation.effective(configured(scratch_pool="a/b"), options.defaults())
    assert used["scratch_pool"] == "perfwatch" and used["scratch_pool_create"] is False
    assert list(refused) == ["scratch_pool"]
    used, _ = validation.effective(configured(scratch_namespace=""), options.defaults())
    assert used["scratch_namespace"] == "perfwatch" and used["scratch_pool_create"] is True


def test_errors_are_logged_once_per_change() -> None:
    first = {"heavy_bench_window": "m1"}
    assert validation.newly_refused({}, first) == first
    assert validation.newly_refused(first, first) == {}
    assert validation.newly_refused(first, {"heavy_bench_window": "m2"}) == {"heavy_bench_window": "m2"}
    assert validation.newly_refused(first, {}) == {}


def test_health_check_names_the_options_and_details_the_messages() -> None:
    assert validation.health_checks({}) == {}
    checks = validation.health_checks({"rgw_s3_endpoint": "e is bad", "heavy_bench_window": "w is bad"})
    check = checks[validation.CONFIG_INVALID]
    assert validation.CONFIG_INVALID == "PERFWATCH_CONFIG_INVALID"
    assert check["severity"] == "warning" and check["count"] == 2
    assert "heavy_bench_window, rgw_s3_endpoint" in check["summary"]
    assert check["detail"] == ["heavy_bench_window: w is bad", "rgw_s3_endpoint: e is bad"]


def test_validation_imports_no_ceph_code() -> None:
    code = "import perfwatch.options.validation, perfwatch.benchmarks.engine.s3_client; print('ok')"
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=paths.REPO / "mgr_module",
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.stdout.strip() == "ok", proc.stderr
