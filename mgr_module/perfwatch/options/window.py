"""The time window options (`*_window`, 'HH:MM-HH:MM', may wrap midnight) read into minutes of the day.
Pure."""

import re
from typing import Optional, Tuple

_WINDOW = re.compile(r"^\s*([01]?\d|2[0-3]):([0-5]\d)\s*-\s*([01]?\d|2[0-3]):([0-5]\d)\s*$")


class EmptyWindowError(ValueError):
    """A window that starts where it ends ('10:00-10:00'): read as any time or as never, so refused;
    "any time" is the empty window."""


def parse_window(text: str) -> Optional[Tuple[int, int]]:
    """'22:00-06:00' -> (1320, 360) in minutes of the day; '' -> None (any time). ValueError otherwise,
    EmptyWindowError when start and end are the same minute."""
    if not text.strip():
        return None
    match = _WINDOW.match(text)
    if not match:
        raise ValueError("time window {!r} is not HH:MM-HH:MM".format(text))
    h1, m1, h2, m2 = (int(g) for g in match.groups())
    start, end = h1 * 60 + m1, h2 * 60 + m2
    if start == end:
        raise EmptyWindowError("time window {!r} starts where it ends; empty means any time".format(text))
    return start, end
