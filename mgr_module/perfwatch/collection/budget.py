"""How often the module's collection may run so that it takes at most a set share of one core. Pure.

A collection costs CPU in proportion to the OSDs it reads (about 0.27 ms an OSD: 9 % of a core at 10,000
OSDs and the default collect_interval of 30 s), and the mgr runs every other module in the same process. So
a collection that began at `started` and took `cpu` seconds of CPU is followed by the next only once cpu is
at most `collect_cpu_budget_percent` of the time since it began: each collection, and so the average, keeps
within the budget at any cluster size; what gives is freshness (at 10,000 OSDs and 5 %, every other pass).
The serve loop's other work (benchmark schedule, load attribution) keeps its pace: only the collection waits.
"""

from typing import Optional, Tuple

from ..options import declared as options

# Ceph refuses values outside the option's bounds at `ceph config set`; a value that got past it anyway
# counts as the nearest bound (below the least, a budget of 0 would never collect again).
LEAST_PERCENT = float(options.spec("collect_cpu_budget_percent")["min"])


class CollectionBudget:
    """When the next collection may begin, from the last one's start and CPU; and how many passes waited."""

    def __init__(self) -> None:
        # (monotonic seconds the last collection began, CPU seconds it took): one tuple, swapped whole, so
        # `ceph perfwatch status` in another thread never pairs one collection's start with another's CPU
        self._last: Optional[Tuple[float, float]] = None
        self.deferred = 0  # passes on which the collection was put off to keep within the budget

    @property
    def last_cpu(self) -> float:
        last = self._last
        return 0.0 if last is None else last[1]

    def next_at(self, percent: float) -> Optional[float]:
        """The monotonic time from which a collection keeps within `percent` of a core; None before the first."""
        last = self._last
        if last is None:
            return None
        started, cpu = last
        return started + cpu * 100.0 / max(percent, LEAST_PERCENT)

    def allows(self, now: float, percent: float) -> bool:
        """Whether a collection may begin at `now`; when it may not, the pass counts as deferred. At 100 %
        or more, always (the command threads may add CPU beside the collecting thread's in the same seconds)."""
        due = self.next_at(percent)
        if due is None or not percent < 100.0 or now >= due:  # NaN: as the largest
            return True
        self.deferred += 1
        return False

    def record(self, started: float, cpu: float) -> None:
        """A collection began at `started` (monotonic seconds) and took `cpu` seconds of CPU."""
        self._last = (started, cpu if cpu > 0.0 else 0.0)  # NaN and negative: none
