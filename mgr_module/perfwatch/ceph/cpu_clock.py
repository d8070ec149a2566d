"""A thread's CPU seconds, as the collection's budget (collection/budget.py) and the command threads (call_pool.py)
measure them. Pure: no Ceph.

Linux (and most Unixes) gives each thread a CPU clock of its own, CLOCK_THREAD_CPUTIME_ID; where there is
none, thread_cpu_clock() says so (None) and the caller chooses what stands in for it. A clock that fails
when read gives NaN (reading()): nothing that measures itself may fail for its meter.
"""

import math
import time
from typing import Callable, Optional

_THREAD_CLOCK = getattr(time, "CLOCK_THREAD_CPUTIME_ID", None)

Clock = Callable[[], float]


def thread_cpu_clock() -> Optional[Clock]:
    """The calling thread's CPU seconds as a clock, or None where the platform has no such clock."""
    clock_id = _THREAD_CLOCK
    if clock_id is None:
        return None
    try:
        time.clock_gettime(clock_id)
    except (AttributeError, OSError):
        return None
    return lambda: time.clock_gettime(clock_id)


def reading(clock: Optional[Clock]) -> float:
    """The clock's seconds now; NaN when there is no clock or it fails."""
    if clock is None:
        return math.nan
    try:
        return clock()
    except Exception:
        return math.nan
