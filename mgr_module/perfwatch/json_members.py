"""Some top-level members of a JSON object, decoded without decoding the rest. Pure.

An OSD's `perf dump` is about 20 kB of JSON in some 30 loggers, and the module needs nine of them: decoding
the whole text was the largest part of a collection cycle (75 us an OSD, 0.75 s of CPU at 10,000 OSDs).
Each wanted logger is found by its key as Ceph writes it, `"name":`, and only its value is decoded. They
are looked for in the order Ceph writes them (by name), each after the end of the one before (and from
the start where it is not there): a quarter of the text read, not all of it nine times.

What it returns is what a whole decode gives wherever Ceph could have written the text. Where it could
not tell, it gives up (None) and the caller decodes the whole text: a logger not found (absent, spelled
with escapes or a space before the colon, or a text cut short), a text that does not end as an object
does, or a value that is not a logger's (a counter named like the logger, where it is looked for and
before it: a number or an average's {"avgcount", "sum", "avgtime"}; one before the logger found last is
passed over, and what it gives is then the logger a whole decode gives). Two cases it does not catch, as
Ceph writes neither: a logger written twice (it takes the first it finds, a whole decode the last), and a
logger's name as a key of an object nested deeper than a counter's average. Nor does it check the rest
of the text is JSON.
"""

import json
from typing import Any, Dict, Iterable, Optional

_DECODER = json.JSONDecoder()
_WHITESPACE = " \t\n\r"
_AVERAGE_KEYS = frozenset(("avgcount", "sum", "avgtime"))
_KEYS: Dict[str, str] = {}  # a member's name -> how its key is written, `"name":`


def members(text: str, names: Iterable[str]) -> Optional[Dict[str, Any]]:
    """{name: decoded value} of each of `names`, members of the JSON object `text` and objects themselves
    (loggers); None when that cannot be told without decoding all of it: one of them is not found as
    Ceph writes a key (`"name":`; a missing logger, or a text cut short, is for the whole decode to judge),
    or the text does not end as an object does."""
    start, end = 0, len(text) - 1
    while start < len(text) and text[start] in _WHITESPACE:
        start += 1
    while end > start and text[end] in _WHITESPACE:
        end -= 1
    if not text.startswith("{", start) or end <= start or text[end] != "}":
        return None
    out: Dict[str, Any] = {}
    after = start  # where the last member found ends: Ceph writes loggers sorted by name, so the next is after it
    for name in sorted(names):
        key = _KEYS.get(name)
        if key is None:
            key = _KEYS[name] = json.dumps(name) + ":"
        at = text.find(key, after)
        if at < 0 and after > start:  # not in Ceph's order: looked for from the start, as it is written first
            at = text.find(key, start)
        if at < 0:
            return None
        at += len(key)
        while at < len(text) and text[at] in _WHITESPACE:
            at += 1
        try:
            value, end = _DECODER.raw_decode(text, at)
        except ValueError:
            return None
        if not isinstance(value, dict) or not value or set(value) <= _AVERAGE_KEYS:
            return None  # maybe a counter of that name, not the logger
        out[name] = value
        after = max(after, end)
    return out


def loads(text: str, names: Iterable[str]) -> Any:
    """The members `names` of a JSON object's text (as members()), or, when they cannot be told apart, the
    whole text decoded (ValueError when it is not JSON)."""
    wanted = tuple(names)
    found = members(text, wanted)
    return found if found is not None else json.loads(text)
