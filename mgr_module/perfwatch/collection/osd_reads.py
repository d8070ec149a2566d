"""The OSDs' counters read for one collection: every up OSD asked COMMANDS through the adapter, a bounded
number at a time, each answer decoded in the collecting thread as it comes, an OSD that does not answer in
time counted as a timeout."""

import collections
import contextlib
import queue
import threading
import time
from typing import Callable, Dict, List, NamedTuple, Optional, Tuple

from ..ceph.call_pool import failure
from ..ceph.seam import CephAdapter, FetchError
from ..common.daemon_counters import counters
from ..common.daemon_counters.counter_rows import Row
from ..common.daemon_counters.fetch_reasons import REASON_DECODE, REASON_ERROR, REASON_TIMEOUT
from . import json_members

COMMANDS = (counters.PERF_DUMP,)  # what each OSD is asked, in this order (its mempools are in its perf dump)


Answer = Tuple[int, object, float]  # an OSD, its answers (or a call_pool failure), when they came (monotonic)


def _hand_over(answers: "queue.Queue[Answer]", osd_id: int, lock: threading.Lock) -> Callable[[object], None]:
    """What the adapter's thread calls with osd_id's answers: puts them in the collecting thread's queue,
    stamped with when they came (an answer is judged late by that, not by when this thread gets to it).
    Stamp and put hold `lock`, as the collecting thread's drain and its reading of the clock do: an answer
    stamped before that reading is in the drained queue, one not in it is stamped after."""

    def put(got: object) -> None:
        with lock:
            answers.put((osd_id, got, time.monotonic()))

    return put


class OsdReading(NamedTuple):
    daemon: str
    row: Optional[Row]  # its counters (counters.OSD_LAYOUT), None when they could not be read
    error: Optional[FetchError]


def parse_osd(daemon: str, fetched: object) -> OsdReading:
    """An OSD's reading from its answers (the adapter's [perf dump] texts), or from the
    failure its request ended with (in the collecting thread)."""
    try:
        error = failure(fetched)
        if error is not None:
            if not isinstance(error, Exception):  # SystemExit and the like: this OSD's read failed
                raise FetchError(REASON_ERROR, repr(error))
            raise error
        if not isinstance(fetched, (list, tuple)) or len(fetched) != len(COMMANDS):
            raise FetchError(REASON_ERROR, "the adapter answered {!r}".format(type(fetched).__name__))
        (text,) = fetched
        try:  # of the perf dump, only the loggers the table reads are decoded (json_members)
            dump = json_members.loads(text, counters.OSD_LOGGERS)
        except ValueError as exc:
            raise FetchError(REASON_DECODE, "{}: {}".format(daemon, exc)) from exc
        try:  # not an object, or a value that is no number (null, a list, 10**400): as the exporter counts it
            row = counters.osd_row(dump)
        except (TypeError, ValueError, OverflowError) as exc:  # NotAnObject is a ValueError
            detail = str(exc) if isinstance(exc, counters.NotAnObject) else "{}: {!r}".format(daemon, exc)
            raise FetchError(REASON_DECODE, detail) from exc
        return OsdReading(daemon, row, None)
    except FetchError as exc:
        return OsdReading(daemon, None, exc)
    except Exception as exc:  # a bug or surprise in one OSD's data must not end the cycle
        return OsdReading(daemon, None, FetchError(REASON_ERROR, repr(exc)))


def read_osds(adapter: CephAdapter, up: List[int], request_timeout: float, max_in_flight: int) -> List[OsdReading]:
    """Every up OSD read, at most max_in_flight at a time: each is asked COMMANDS by the adapter's
    own thread, which hands the answers to this thread; this one decodes them as they come
    (decoding is CPU, which more threads would only contend for). An OSD that has not answered them all
    within request_timeout each is a timeout, and its place goes to the next OSD."""
    todo = collections.deque(up)
    answers = queue.Queue()  # type: queue.Queue[Answer]
    handing_over = threading.Lock()
    due: Dict[int, float] = {}  # OSDs asked and not yet answered -> when they time out
    readings: Dict[int, OsdReading] = {}
    allowed = request_timeout * len(COMMANDS)
    late = FetchError(REASON_TIMEOUT, "no answer in {:.0f} s".format(allowed))
    while todo or due:
        while todo and len(due) < max(1, max_in_flight):
            osd_id = todo.popleft()
            try:
                adapter.submit_osd_texts(osd_id, COMMANDS, request_timeout, _hand_over(answers, osd_id, handing_over))
            except FetchError as exc:  # busy: an earlier request to it is still out
                readings[osd_id] = OsdReading("osd.{}".format(osd_id), None, exc)
                continue
            except Exception as exc:  # an adapter's bug ends this OSD's read, not the cycle
                readings[osd_id] = OsdReading("osd.{}".format(osd_id), None, FetchError(REASON_ERROR, repr(exc)))
                continue
            due[osd_id] = time.monotonic() + allowed
        if not due:
            continue
        got: List[Answer] = []
        with contextlib.suppress(queue.Empty):
            got.append(answers.get(timeout=max(0.0, min(due.values()) - time.monotonic())))
        with handing_over, contextlib.suppress(queue.Empty):  # all handed over, none behind the deadlines
            now = time.monotonic()
            while True:
                got.append(answers.get_nowait())
        for osd_id, fetched, came in got:
            at = due.pop(osd_id, None)
            if at is None:  # an answer to a request already counted as a timeout
                continue
            daemon = "osd.{}".format(osd_id)
            readings[osd_id] = parse_osd(daemon, fetched) if came <= at else OsdReading(daemon, None, late)
        for osd_id in [o for o, at in due.items() if at < now]:  # any answer still to come is later
            del due[osd_id]
            readings[osd_id] = OsdReading("osd.{}".format(osd_id), None, late)
    return [readings[osd_id] for osd_id in sorted(up)]
