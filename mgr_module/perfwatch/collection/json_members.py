"""Some top-level members of a JSON object, decoded without decoding the rest. Pure.

The collector needs nine of the some 30 loggers of an OSD's `perf dump`, and decoding all of it was the
largest part of a cycle (docs/decisions/collection-cost.md). Each wanted member is found by its key as Ceph
writes it, `"name":`, in Ceph's order, and only its value is decoded; of the text before the key only the
quotes, brackets and backslashes are read, enough to show the key is the top-level object's.
It gives what json.loads gives for those members (but for a member written twice, which Ceph never writes:
this gives the one it finds), or None where it cannot tell (members()), and the caller decodes it all. It
does not check that the rest of the text is JSON: of one that is not, it may give members.
"""

import json
from typing import Any, Dict, Iterable, Optional

_DECODER = json.JSONDecoder()
_WHITESPACE = " \t\n\r"
_KEYS: Dict[str, str] = {}  # a member's name -> how its key is written, `"name":`
_SEPARATORS = _WHITESPACE + ","
_NOT_MARKS = bytes(c for c in range(256) if c not in b'"\\{}[]')  # what _between_members() does not read
_BRACES = bytes.maketrans(b"[]", b"{}")  # a bracket counts as a brace


def members(text: str, names: Iterable[str]) -> Optional[Dict[str, Any]]:
    """{name: decoded value} of each of `names`, members of the JSON object `text` and objects themselves
    (loggers); None when that cannot be told without decoding all of it: one of them is not found as
    Ceph writes a key (`"name":`; a missing logger, or a text cut short, is for the whole decode to judge),
    nor shown to be a member of the top-level object, or the text does not end as an object does."""
    start, end = 0, len(text) - 1
    while start < len(text) and text[start] in _WHITESPACE:
        start += 1
    while end > start and text[end] in _WHITESPACE:
        end -= 1
    if not text.startswith("{", start) or end <= start or text[end] != "}":
        return None
    out: Dict[str, Any] = {}
    first = start + 1  # before the first member
    after = first  # where the last member found ends: Ceph writes loggers sorted by name, so the next is after it
    for name in sorted(names):
        key = _KEYS.get(name)
        if key is None:
            key = _KEYS[name] = json.dumps(name) + ":"
        at = text.find(key, after)
        since = after
        if at < 0 and after > first:  # not in Ceph's order: looked for from the start, as it is written first
            at, since = text.find(key, first), first
        if at < 0 or not _between_members(text, since, at):
            return None
        at += len(key)
        while at < len(text) and text[at] in _WHITESPACE:
            at += 1
        try:
            value, end = _DECODER.raw_decode(text, at)
        except ValueError:
            return None
        if not isinstance(value, dict):
            return None
        out[name] = value
        after = max(after, end)
    return out


def _between_members(text: str, since: int, at: int) -> bool:
    """Whether `at` (where a key was found) is between two members of the top-level object, as `since` is
    (after a member, or the opening brace), in a JSON text. It is when the text between holds no
    backslash (then every quote opens or closes a string, in turn from `since`, outside a string), each
    quote that opens a string is followed by the next quote with no brace or bracket between (no string
    holds one: every one read is outside strings), and these balance (`at` is as deep as `since`, outside
    a string). UTF-8 writes each of these characters as the one byte no other character has."""
    gap = text[since:at]
    if not gap.strip(_SEPARATORS):
        return True  # only a comma: the loggers Ceph writes side by side
    marks = gap.encode("utf-8", "surrogatepass").translate(_BRACES, _NOT_MARKS)  # '"', '\\', '{', '}'
    opening, closing = marks.count(b"{"), marks.count(b"}")
    # the pairs `""` found left to right are every quote and nothing else is but braces: no backslash
    return opening == closing and 2 * marks.count(b'""') + opening + closing == len(marks)


def loads(text: str, names: Iterable[str]) -> Any:
    """The members `names` of a JSON object's text (as members()), or, when they cannot be told apart, the
    whole text decoded (ValueError when it is not JSON)."""
    wanted = tuple(names)
    found = members(text, wanted)
    return found if found is not None else json.loads(text)
