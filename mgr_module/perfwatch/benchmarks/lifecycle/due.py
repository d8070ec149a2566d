"""When a kind is due. Pure: the time, the last run and the options in; a yes or no out."""

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


def in_window(minute_of_day: int, window: Optional[Tuple[int, int]]) -> bool:
    if window is None:
        return True
    start, end = window
    if start < end:
        return start <= minute_of_day < end
    return minute_of_day >= start or minute_of_day < end  # wraps midnight


def is_due(now: float, last_run: Optional[float], interval: float, minute_of_day: int, window: str = "") -> bool:
    """interval <= 0 means never on a schedule (on command only)."""
    if interval <= 0:
        return False
    if not in_window(minute_of_day, parse_window(window)):
        return False
    return last_run is None or now - last_run >= interval
