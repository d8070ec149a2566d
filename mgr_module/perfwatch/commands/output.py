"""Command output: plain text for people, JSON for tools (`--format json`)."""

import enum
import json
from typing import Any, Callable


class OutputFormat(enum.Enum):
    plain = "plain"
    json = "json"
    json_pretty = "json-pretty"


def render(data: Any, fmt: OutputFormat, plain: Callable[[Any], str]) -> str:
    if fmt is OutputFormat.json:
        return json.dumps(data, sort_keys=True)
    if fmt is OutputFormat.json_pretty:
        return json.dumps(data, sort_keys=True, indent=2)
    return plain(data)


def key_value_lines(rows: Any, indent: int = 0) -> str:
    """Aligned `key  value` lines; nested dicts are indented under their key."""
    items = list(rows.items())
    width = max((len(str(k)) for k, _ in items), default=0)
    out = []
    for key, value in items:
        if isinstance(value, dict):
            out.append(" " * indent + str(key))
            out.append(key_value_lines(value, indent + 2))
        else:
            out.append(" " * indent + str(key).ljust(width) + "  " + _fmt(value))
    return "\n".join(line for line in out if line)


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return "{:.3f}".format(value)
    return str(value)
