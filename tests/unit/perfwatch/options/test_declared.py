from perfwatch.options import declared as options

VALID_TYPES = {"uint", "int", "str", "float", "bool", "addr", "addrvec", "uuid", "size", "secs"}


def test_every_option_is_typed_described_and_defaulted() -> None:
    names = [spec["name"] for spec in options.OPTIONS]
    assert len(names) == len(set(names)), "option names must be unique"
    for spec in options.OPTIONS:
        assert spec["type"] in VALID_TYPES, spec
        assert spec.get("desc"), f"{spec['name']} needs a description"
        assert "default" in spec, spec


def test_numeric_defaults_lie_inside_their_bounds() -> None:
    for spec in options.OPTIONS:
        if spec["type"] in options.NUMERIC_TYPES:
            assert "min" in spec and "max" in spec, f"{spec['name']} needs min and max"
            assert spec["min"] <= spec["default"] <= spec["max"], spec


def test_defaults_and_lookup() -> None:
    assert options.defaults()["collect_interval"] == 30
    assert options.spec("collect_interval")["min"] == 5


def test_values_from_the_mgr_are_coerced_to_their_declared_type() -> None:
    assert options.coerce("collect_interval", 10.0) == 10
    assert isinstance(options.coerce("collect_interval", "15"), int)
    assert options.coerce("collect_interval", None) == 30
