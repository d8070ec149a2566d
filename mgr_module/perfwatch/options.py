"""The module's options as plain data: module.py turns them into MgrModule Options.

Kept free of Ceph imports so tests can check every option is typed, described and has a default
inside its own bounds.
"""

from typing import Any, Dict, List

OptionSpec = Dict[str, Any]

OPTIONS: List[OptionSpec] = [
    {
        "name": "server_addr",
        "type": "str",
        "default": "::",
        "desc": "Address the metrics endpoint listens on ('::' is every address, IPv4 too)",
        "long_desc": "Set per mgr with mgr/perfwatch/<mgr id>/server_addr.",
        "runtime": True,
    },
    {
        "name": "server_port",
        "type": "int",
        "default": 9284,
        "min": 1024,
        "max": 65535,
        "desc": "Port of the metrics endpoint (Ceph's prometheus module has 9283)",
        "long_desc": "Set per mgr with mgr/perfwatch/<mgr id>/server_port, e.g. when two mgrs share a host.",
        "runtime": True,
    },
    {
        "name": "request_timeout",
        "type": "secs",
        "default": 10,
        "min": 1,
        "max": 300,
        "desc": "Seconds to wait for one daemon's answer before counting it as a timeout",
        "runtime": True,
    },
    {
        "name": "max_requests_in_flight",
        "type": "int",
        "default": 8,
        "min": 1,
        "max": 128,
        "desc": "Requests to daemons outstanding at once during a collection",
        "runtime": True,
    },
    {
        "name": "standby_behaviour",
        "type": "str",
        "default": "default",
        "enum_allowed": ["default", "error"],
        "desc": "What a standby mgr answers on /metrics: an empty 200 (default) or standby_error_status_code",
        "runtime": True,
    },
    {
        "name": "standby_error_status_code",
        "type": "int",
        "default": 500,
        "min": 400,
        "max": 599,
        "desc": "HTTP status a standby answers /metrics with when standby_behaviour is 'error'",
        "runtime": True,
    },
    {
        "name": "collect_interval",
        "type": "secs",
        "default": 30,
        "min": 5,
        "max": 3600,
        "desc": "Seconds between two collections of daemon counters",
        "long_desc": "Every interval each up OSD is asked for 'perf dump' and 'dump_mempools'. "
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
