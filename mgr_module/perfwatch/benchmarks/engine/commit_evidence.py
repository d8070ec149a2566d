"""Each OSD's own commit latency while the rados probe ran: the evidence local to one OSD that tells which
member of a slow acting set is slow (attribution.py). Why: docs/decisions/slow-replica-evidence.md.

A write's latency belongs to every OSD of its PG; BlueStore's commit latency (ceph/commit_latency.py: its
name differs by release) counts only this OSD's own commits, so a throttled device shows there alone. The
probe reads it from every OSD of the probed acting sets before and after its writes, one request per OSD
each time, in parallel, within BUDGET_SECONDS, at most MAX_OSDS OSDs (beyond that only the common-cause rule
of attribution.py judges). The window closes when the writes have ended: the removes' commits left in could
pull a slow OSD's mean under the share of a write that rule 1 of attribution.py wants.
"""

import math
import threading
import time
from typing import Callable, Dict, Iterable, List, Optional

from ...ceph.commit_latency import Reading
from ...common.daemon_counters.fetch_reasons import REASON_BUSY

MAX_OSDS = 128  # OSDs read per probe run at most (two small requests each); the default 32 PGs of 3 hold 96
BUDGET_SECONDS = 5.0  # all the readings of one pass: an OSD that does not answer by then gives no evidence
# An OSD's commits are slow when they take this many times the typical of the fastest half of the OSDs
# read; the fastest half is the reference because one slow OSD of three would pull a median with it.
OUTLIER_FACTOR = 4.0
# An OSD busy answering another request of the mgr (the collector's `perf dump`, every collect_interval)
# is asked again this often until the budget ends: refused at once, the probe lacked the evidence of the
# one OSD it needed in about one run in thirty.
BUSY_RETRY_SECONDS = 0.05


def read_all(
    read: Callable[[int], Optional[Reading]], osds: Iterable[int], workers: int, budget: float = BUDGET_SECONDS
) -> Dict[int, Reading]:
    """The counter of each OSD (in parallel, `workers` at a time, all within `budget` seconds; one busy
    with another request is asked again until then); an OSD that cannot be read in time is left out (a
    probe never fails or waits long for its evidence). More than MAX_OSDS: none read."""
    chosen = sorted(set(osds))
    if len(chosen) > MAX_OSDS:
        return {}
    out: Dict[int, Reading] = {}
    lock = threading.Lock()
    deadline = time.monotonic() + budget

    def one(osd: int) -> None:
        while True:
            try:
                reading = read(osd)
                break
            except Exception as exc:  # timeout, error, a non-BlueStore OSD: no evidence from it
                if getattr(exc, "reason", None) != REASON_BUSY or time.monotonic() + BUSY_RETRY_SECONDS > deadline:
                    return
                time.sleep(BUSY_RETRY_SECONDS)  # busy: its other request is answered in milliseconds
        if reading is not None and time.monotonic() <= deadline:
            with lock:
                out[osd] = reading

    step = max(1, workers)
    for start in range(0, len(chosen), step):
        if time.monotonic() >= deadline:
            break
        threads = [threading.Thread(target=one, args=(osd,), daemon=True) for osd in chosen[start : start + step]]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
    with lock:
        return dict(out)


def window_latency(before: Dict[int, Reading], after: Dict[int, Reading]) -> Dict[int, float]:
    """Mean seconds per commit between the two readings, for each OSD that committed in between (a counter
    that went back, as after a restart, gives nothing; nor does a sum that is not finite: inf - inf is NaN,
    which would sort before every real figure and make the others' reference)."""
    out: Dict[int, float] = {}
    for osd, (sum0, count0) in before.items():
        if osd not in after:
            continue
        sum1, count1 = after[osd]
        if count1 > count0 and sum1 >= sum0 and math.isfinite(sum1) and math.isfinite(sum0):
            out[osd] = (sum1 - sum0) / (count1 - count0)
    return out


SHOWN_SLOWEST = 3  # OSDs named in the probe's log line (commit_summary), the slowest first


def commit_summary(latency: Dict[int, float]) -> str:
    """The slowest SHOWN_SLOWEST OSDs' mean commit latency and the median of all, in milliseconds, for the
    log: "osd.0 150.2 ms, osd.2 3.1 ms, osd.1 2.9 ms (median of 3: 3.1 ms)"; "none read" when empty."""
    if not latency:
        return "none read"
    ranked = sorted(latency.items(), key=lambda item: (-item[1], item[0]))
    shown = ", ".join("osd.{} {:.1f} ms".format(osd, value * 1e3) for osd, value in ranked[:SHOWN_SLOWEST])
    values = sorted(latency.values())
    return "{} (median of {}: {:.1f} ms)".format(shown, len(values), values[len(values) // 2] * 1e3)


def slow_committers(latency: Dict[int, float], among: Iterable[int], floor: float) -> List[int]:
    """The OSDs of `among` whose commits took OUTLIER_FACTOR times the typical of the fastest half of them,
    and at least `floor` seconds (a slow write's own share: a commit far below it did not make it slow).
    Fewer than two OSDs with a figure: nothing to compare, none. A figure that is not finite is none."""
    figures = sorted((latency[o], o) for o in set(among) if o in latency and math.isfinite(latency[o]))
    if len(figures) < 2:
        return []
    fastest = [v for v, _ in figures[: max(1, len(figures) // 2)]]
    reference = fastest[len(fastest) // 2]
    return sorted(o for v, o in figures if v >= max(floor, OUTLIER_FACTOR * reference) and v > 0)
