"""When a kind is due. Pure: the time, the last run and the options in; a yes or no out."""

from typing import Optional, Tuple

from ...options.window import parse_window


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
