"""An OSD's BlueStore commit latency counter, read from one `perf dump` answer. Pure.

Pacific 16.2 names it `commit_lat`; Quincy renamed it `txc_commit_lat` (Reef 18.2 and Tentacle 20.2 have
only that name): the first of COMMIT_COUNTERS found is read."""

from typing import Any, Optional, Tuple

Reading = Tuple[float, float]  # (sum in seconds, count) of the counter

# BlueStore's transaction commit latency counter, by the name each release gives it (the first found is read)
COMMIT_COUNTERS = ("commit_lat", "txc_commit_lat")  # Pacific's, then Quincy's and later
COMMIT_COMMAND = {"prefix": "perf dump", "logger": "bluestore"}  # the logger: either name, one request


def commit_reading(answer: Any) -> Optional[Reading]:
    """(sum, avgcount) from an answer to COMMIT_COMMAND; None when it has none of COMMIT_COUNTERS."""
    try:
        logger = answer["bluestore"]
        counter = next(logger[name] for name in COMMIT_COUNTERS if name in logger)
        return float(counter["sum"]), float(counter["avgcount"])
    except (KeyError, TypeError, ValueError, StopIteration):
        return None
