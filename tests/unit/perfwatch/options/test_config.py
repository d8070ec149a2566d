"""config.py: one typed, immutable Config per set of option values, built from the mgr's getters."""

import typing

import pytest

from perfwatch.options import config, validation
from perfwatch.options import declared as options

PYTHON_TYPES = {"int": int, "uint": int, "secs": int, "size": int, "float": float, "bool": bool, "str": str}


def test_config_has_one_typed_field_per_option_in_their_order() -> None:
    assert list(config.Config._fields) == [spec["name"] for spec in options.OPTIONS]
    hints = typing.get_type_hints(config.Config)
    for spec in options.OPTIONS:
        assert hints[spec["name"]] is PYTHON_TYPES[spec["type"]], spec["name"]


def test_defaults_match_the_options_and_are_immutable() -> None:
    cfg = config.defaults()
    assert cfg.as_dict() == options.defaults()
    assert cfg.collect_interval == 30 and cfg.regression_fraction == 0.5
    with pytest.raises(AttributeError):
        cfg.collect_interval = 5  # type: ignore[misc]


def test_read_coerces_validates_and_takes_this_mgrs_address() -> None:
    values = {"collect_interval": "15", "regression_fraction": "0.25", "heavy_bench_window": "garbage"}
    localized = {"server_addr": "10.0.0.7"}
    cfg, refused = config.read(values.get, lambda name, default: localized.get(name, default))
    assert cfg.collect_interval == 15 and isinstance(cfg.collect_interval, int)
    assert cfg.regression_fraction == 0.25
    assert cfg.server_addr == "10.0.0.7"
    assert cfg.heavy_bench_window == "" and list(refused) == ["heavy_bench_window"]


def test_secrets_are_never_shown() -> None:
    cfg = config.defaults()._replace(rgw_s3_access_key="AKIDEXAMPLE", rgw_s3_secret_key="s3cr3t")
    assert cfg.rgw_s3_secret_key == "s3cr3t"  # used as set
    for text in (repr(cfg), str(cfg), str(cfg.redacted())):
        assert "s3cr3t" not in text and "AKIDEXAMPLE" not in text
    assert cfg.redacted()["rgw_s3_secret_key"] == "<set>"
    assert config.defaults().redacted()["rgw_s3_access_key"] == "<not set>"


def test_listen_endpoint_honours_per_mgr_values() -> None:
    assert config.listen_endpoint(lambda name, default: default) == {"addr": "::", "port": 9284}
    per_mgr = {"server_addr": "10.0.0.7", "server_port": 9290.0}
    assert config.listen_endpoint(lambda name, default: per_mgr.get(name, default)) == {
        "addr": "10.0.0.7",
        "port": 9290,
    }


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("collect_interval", "abc", "'abc' is not a whole number of seconds"),
        ("collect_interval", "nan", "'nan' is not a whole number of seconds"),
        ("request_timeout", "inf", "'inf' is not a whole number of seconds"),
        ("max_requests_in_flight", "1e400", "'1e400' is not a whole number"),
        ("regression_fraction", "nan", "'nan' is not a finite number"),
        ("regression_fraction", "-inf", "'-inf' is not a finite number"),
        ("max_osds_per_host", [1], "'[1]' is not a whole number"),
    ],
)
def test_a_value_not_of_its_type_is_refused_and_the_default_used(name: str, value: object, says: str) -> None:
    """Ceph checks an option's type at `ceph config set`; should a value of another type reach the module
    anyway, config.read does not raise (ValueError, OverflowError): the value is refused like any invalid one
    (PERFWATCH_CONFIG_INVALID), its default used, the other values kept."""
    values = {name: value, "history_limit": "77"}
    cfg, refused = config.read(values.get, lambda n, default: default)
    assert cfg.as_dict()[name] == options.defaults()[name]
    assert refused == {name: says}
    assert cfg.history_limit == 77


def test_an_s3_option_not_of_its_type_turns_the_s3_requests_off_as_any_refused_one_does() -> None:
    """The S3 options are strings (any value coerces); what not_typed refuses goes through the same
    consequences as the checks' refusals: a refused heavy_bench_window stops the heavy rounds."""
    cfg, refused = config.read({"heavy_bench_window": "01:00-02:00"}.get, lambda n, default: default)
    assert not refused and cfg.heavy_bench_window == "01:00-02:00"
    values, refused = validation.effective(options.defaults(), options.defaults(), {"heavy_bench_window": "odd"})
    assert refused == {"heavy_bench_window": "odd"}
    assert all(values[n] == 0 for n in validation.HEAVY_INTERVAL_OPTIONS)
