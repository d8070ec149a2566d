"""The module's options as plain data: module.py turns them into MgrModule Options.

Kept free of Ceph imports so tests can check every option is typed, described and has a default
inside its own bounds.
"""

from typing import Any, Dict, List

OptionSpec = Dict[str, Any]

OPTIONS: List[OptionSpec] = [
    {
        "name": "collect_interval",
        "type": "secs",
        "default": 30,
        "min": 5,
        "max": 3600,
        "desc": "Seconds between two passes of the module's background loop",
        "long_desc": "How often the serve loop wakes to collect counters and run due work. "
        "Shorter intervals cost more requests to every OSD.",
        "runtime": True,
    },
]

NUMERIC_TYPES = ("int", "uint", "secs", "float", "size")


def defaults() -> Dict[str, Any]:
    return {spec["name"]: spec["default"] for spec in OPTIONS}


def coerce(name: str, value: Any) -> Any:
    """A value as its declared type: the mgr hands `secs` and `int` options back as floats or strings."""
    kind = spec(name)["type"]
    if value is None:
        return spec(name)["default"]
    if kind in ("int", "uint", "secs", "size"):
        return int(float(value))
    if kind == "float":
        return float(value)
    if kind == "bool":
        return value if isinstance(value, bool) else str(value).lower() in ("true", "1", "yes", "on")
    return str(value)


def spec(name: str) -> OptionSpec:
    for item in OPTIONS:
        if item["name"] == name:
            return item
    raise KeyError(name)
