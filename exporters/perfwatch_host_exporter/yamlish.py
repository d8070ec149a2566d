"""The part of YAML that web config files use, parsed with the standard library alone. Pure.

Block mappings (`key: value`, `key:` then an indented block), block sequences (`- item`), flow
sequences of scalars (`[a, b]`), scalars plain, 'single-quoted' or "double-quoted", `true`/`false`,
comments. Anything else (anchors, tags, multi-line strings, flow mappings, several documents) is refused
with its line number rather than guessed at: this reads security settings.
"""

import json
import re
from typing import Any, Dict, List, Optional, Tuple

# a key: "double-quoted", 'single-quoted' or plain (not starting as a YAML feature does), then a colon
# followed by a space or the end of the line
_KEY = re.compile(
    r"^(?P<key>\"(?:[^\"\\]|\\.)*\"|'(?:[^']|'')*'|[^\s#'\"\[\]{}&*!|>%@`-][^:#]*?|-[^\s:#][^:#]*?)\s*:(?:\s+|$)"
)


class YamlError(ValueError):
    pass


Line = Tuple[int, int, str]  # (line number, indent, text without comment)


MAX_DEPTH = 16  # nested mappings: a web config has three levels


def loads(text: str) -> Any:
    """The document's value: a dict, list, string, bool, or None for an empty document. Raises YamlError
    for anything else; never another exception."""
    lines: List[Line] = []
    for number, raw in enumerate(text.splitlines(), 1):
        if "\t" in raw[: len(raw) - len(raw.lstrip())]:
            raise YamlError("line {}: a tab in the indentation".format(number))
        body = _strip_comment(raw, number).rstrip()
        if not body.strip():
            continue
        if body.strip() in ("---", "...") and not lines:
            continue
        if body.startswith(("---", "...")):
            raise YamlError("line {}: only one document is read".format(number))
        lines.append((number, len(body) - len(body.lstrip(" ")), body.strip()))
    if not lines:
        return None
    value, end = _block(lines, 0, lines[0][1], 0)
    if end != len(lines):
        raise YamlError("line {}: indentation does not fit the lines above".format(lines[end][0]))
    return value


def _strip_comment(raw: str, number: int) -> str:
    """The line without a trailing `# comment` (a # that starts the line or follows a space, outside quotes)."""
    quote: Optional[str] = None
    escaped = False
    for i, char in enumerate(raw):
        if quote:
            if escaped:
                escaped = False
            elif char == "\\" and quote == '"':
                escaped = True
            elif char == quote:
                quote = None
        elif char in "'\"" and (i == 0 or raw[i - 1] in " :-[,"):
            quote = char
        elif char == "#" and (i == 0 or raw[i - 1] in " \t"):
            return raw[:i]
    if quote:
        raise YamlError("line {}: a quoted string is not closed".format(number))
    return raw


def _block(lines: List[Line], start: int, indent: int, depth: int) -> Tuple[Any, int]:
    """The mapping or sequence whose lines start at `start`, indented `indent`; and the next line's index."""
    number, _, text = lines[start]
    if depth > MAX_DEPTH:
        raise YamlError("line {}: nested deeper than {} levels".format(number, MAX_DEPTH))
    if text == "-" or text.startswith("- "):
        return _sequence(lines, start, indent)
    if _KEY.match(text):
        return _mapping(lines, start, indent, depth)
    if start + 1 < len(lines) and lines[start + 1][1] >= indent:
        raise YamlError("line {}: not a key: value line".format(number))
    return _scalar(text, number), start + 1


def _mapping(lines: List[Line], start: int, indent: int, depth: int) -> Tuple[Dict[str, Any], int]:
    found: Dict[str, Any] = {}
    i = start
    while i < len(lines) and lines[i][1] == indent:
        number, _, text = lines[i]
        match = _KEY.match(text)
        if match is None:
            raise YamlError("line {}: not a key: value line".format(number))
        key = _scalar(match.group("key"), number)
        if not isinstance(key, str):
            raise YamlError("line {}: a key must be a string".format(number))
        if key in found:
            raise YamlError("line {}: {} is given twice".format(number, key))
        rest = text[match.end() :].strip()
        i += 1
        if rest:
            found[key] = _scalar(rest, number)
        elif i < len(lines) and lines[i][1] > indent:
            found[key], i = _block(lines, i, lines[i][1], depth + 1)
        elif i < len(lines) and lines[i][1] == indent and lines[i][2].startswith("-"):
            found[key], i = _sequence(lines, i, indent)  # a sequence may sit at its key's indent
        else:
            found[key] = None
    if i < len(lines) and lines[i][1] > indent:
        raise YamlError("line {}: indented more than the keys above".format(lines[i][0]))
    return found, i


def _sequence(lines: List[Line], start: int, indent: int) -> Tuple[List[Any], int]:
    items: List[Any] = []
    i = start
    while i < len(lines) and lines[i][1] == indent and (lines[i][2] == "-" or lines[i][2].startswith("- ")):
        number, _, text = lines[i]
        rest = text[1:].strip()
        if not rest or _KEY.match(rest):
            raise YamlError("line {}: only scalars are read in a sequence".format(number))
        items.append(_scalar(rest, number))
        i += 1
    return items, i


def _scalar(text: str, number: int) -> Any:
    if not text:
        raise YamlError("line {}: an empty value in a [flow sequence] (a trailing comma?)".format(number))
    if text.startswith('"'):
        if len(text) < 2 or not text.endswith('"'):
            raise YamlError("line {}: a double-quoted string must end the value".format(number))
        try:
            return json.loads(text)  # YAML's double-quoted escapes are JSON's, for what a config holds
        except ValueError:
            raise YamlError("line {}: a double-quoted string YAML and JSON read differently".format(number)) from None
    if text.startswith("'"):
        if len(text) < 2 or not text.endswith("'") or re.search(r"(?<!')'(?!')", text[1:-1]):
            raise YamlError("line {}: a single-quoted string must end the value".format(number))
        return text[1:-1].replace("''", "'")
    if text.startswith("["):
        if not text.endswith("]"):
            raise YamlError("line {}: a [flow sequence] must end the value".format(number))
        inner = text[1:-1].strip()
        return [_scalar(item.strip(), number) for item in inner.split(",")] if inner else []
    if text[0] in "{&*!|>%@`":
        raise YamlError("line {}: {!r} starts a YAML feature this reader does not take".format(number, text[0]))
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if text in ("null", "~"):
        return None
    return text
