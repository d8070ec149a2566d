"""Some top-level members of a JSON object, decoded without decoding the rest. Pure.

An OSD's `perf dump` is about 20 kB of JSON in some 30 loggers, and the module needs nine of them: decoding
the whole text was the largest part of a collection cycle (75 us an OSD, 0.75 s of CPU at 10,000 OSDs).
Each wanted logger is found by its key, `"name":`, and only its value is decoded.

The first occurrence of that key is the logger's only if no counter of an earlier logger bears the same
name. Ceph has no such counter; should one appear, it would decode as a number or as an average's
{"avgcount", "sum", "avgtime"} (or an empty object), and members() then gives up (None): the caller
decodes the whole text. It gives up on anything else it does not expect too, so each member it returns
is what a whole decode gives (it does not read the rest of the text: one broken after the wanted loggers
still gives them).
"""

import json
from typing import Any, Dict, Iterable, Optional

_DECODER = json.JSONDecoder()
_WHITESPACE = " \t\n\r"
_AVERAGE_KEYS = frozenset(("avgcount", "sum", "avgtime"))
_KEYS: Dict[str, str] = {}  # a member's name -> how its key is written, `"name":`


def members(text: str, names: Iterable[str]) -> Optional[Dict[str, Any]]:
    """{name: decoded value} of each of `names` that is a member of the JSON object `text`, each an object
    itself (a logger); None when that cannot be told without decoding all of it."""
    start = 0
    while start < len(text) and text[start] in _WHITESPACE:
        start += 1
    if not text.startswith("{", start):
        return None
    out: Dict[str, Any] = {}
    for name in names:
        key = _KEYS.get(name)
        if key is None:
            key = _KEYS[name] = json.dumps(name) + ":"
        at = text.find(key, start)
        if at < 0:
            continue  # nowhere in the text: not a member
        at += len(key)
        while at < len(text) and text[at] in _WHITESPACE:
            at += 1
        try:
            value, _end = _DECODER.raw_decode(text, at)
        except ValueError:
            return None
        if not isinstance(value, dict) or not value or set(value) <= _AVERAGE_KEYS:
            return None  # maybe a counter of that name, not the logger
        out[name] = value
    return out


def loads(text: str, names: Iterable[str]) -> Any:
    """The members `names` of a JSON object's text (as members()), or, when they cannot be told apart, the
    whole text decoded (ValueError when it is not JSON)."""
    wanted = tuple(names)
    found = members(text, wanted)
    return found if found is not None else json.loads(text)
