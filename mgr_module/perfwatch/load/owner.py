"""The perf queries this module registered on the active mgr: added as the options want, asked for their
counts, removed when no longer wanted and at shutdown. Query ids live in memory only: they mean nothing
to another mgr process, and a failover or a module disable (which respawns the mgr) starts with none.

The mgr answers a bad query with None (it logs why), and get_osd_perf_counters with None for an id it
does not know: such an id is dropped and its query registered again at the next sync.
"""

import threading
import time
from typing import Any, Callable, Dict, Optional, Tuple

from .queries import TOMBSTONE, problems, tombstone_query

REASON_INVALID = "invalid"  # refused before it was sent (queries.problems)
REASON_REFUSED = "refused"  # the mgr answered None or raised
REASON_LOST = "lost"  # the mgr no longer knew the id
REASON_UNANSWERED = "unanswered"  # get_osd_perf_counters raised: the id is kept and asked again
# In the mgr store: "1" while the OSDs may run queries of ours, so that a later active mgr (after a failover
# or a disable and enable) that wants none puts the tombstone in their place.
ON_OSDS_KEY = "load/queries_on_osds"


class QueryOwner:
    def __init__(self, mgr: Any, log: Any, clock: Callable[[], float] = time.monotonic) -> None:
        """mgr: add_osd_perf_query, remove_osd_perf_query and get_osd_perf_counters (the MgrModule)."""
        self._mgr = mgr
        self._log = log
        self._clock = clock
        self._lock = threading.Lock()  # sync and poll (serve loop) against remove_all (shutdown)
        self._ids: Dict[str, int] = {}
        self._queries: Dict[str, Dict[str, Any]] = {}
        self._since: Dict[str, float] = {}  # when each query was added or last asked
        self._closed = False
        self._on_osds = self._stored_on_osds()  # what an earlier mgr process may have left on the OSDs
        self.errors: Dict[Tuple[str, str], int] = {}  # (query name, reason) -> count

    @property
    def registered(self) -> Dict[str, int]:
        with self._lock:
            return dict(self._ids)

    def _error(self, name: str, reason: str) -> Any:
        """Count it; the log method to say it with: error the first time, debug while it repeats."""
        self.errors[(name, reason)] = self.errors.get((name, reason), 0) + 1
        return self._log.error if self.errors[(name, reason)] == 1 else self._log.debug

    def limit_of(self, name: str) -> int:
        """The max_count of a registered query's limit (0: not registered, or no limit)."""
        with self._lock:
            return int(((self._queries.get(name) or {}).get("limit") or {}).get("max_count", 0))

    def sync(self, wanted: Dict[str, Dict[str, Any]]) -> None:
        """Remove the queries no longer wanted (or wanted otherwise), then add those missing; when none of
        ours is left after we had some, the tombstone takes their place on the OSDs (tombstone_query)."""
        with self._lock:
            if self._closed:
                return
            removed = False
            for name in sorted(set(self._ids) - {TOMBSTONE}):
                if wanted.get(name) != self._queries.get(name):
                    self._remove(name)
                    removed = True
            for name in sorted(wanted):
                if name not in self._ids:
                    self._add(name, wanted[name])
            self._settle(removed)

    def _settle(self, removed: bool, remember: bool = True) -> None:
        """The tombstone while none of our queries is registered and the OSDs may still run one we (or an
        earlier mgr process) registered; gone again once one of ours is back (the OSDs then get that set)."""
        ours = set(self._ids) - {TOMBSTONE}
        if not ours and (removed or self._on_osds) and TOMBSTONE not in self._ids:
            self._add(TOMBSTONE, tombstone_query())
        elif ours and TOMBSTONE in self._ids:
            self._remove(TOMBSTONE)
        if remember:
            self._remember(bool(ours) or (self._on_osds and TOMBSTONE not in self._ids))

    def _stored_on_osds(self) -> bool:
        try:
            return self._mgr.get_store(ON_OSDS_KEY) == "1"
        except Exception:
            return False

    def _remember(self, on_osds: bool) -> None:
        if on_osds != self._on_osds:
            try:
                self._mgr.set_store(ON_OSDS_KEY, "1" if on_osds else "0")
            except Exception as exc:
                self._log.warning("could not record whether perf queries of ours may be on the OSDs: %s", exc)
            self._on_osds = on_osds

    def _add(self, name: str, query: Dict[str, Any]) -> None:
        bad = problems(query)
        if bad:
            self._error(name, REASON_INVALID)("perf query %s not registered: %s", name, "; ".join(bad))
            return
        try:
            query_id = self._mgr.add_osd_perf_query(query)
        except Exception as exc:  # SystemError from the C++ side on a malformed dict
            query_id = None
            self._log.debug("perf query %s: add_osd_perf_query raised %s", name, exc)
        if not isinstance(query_id, int) or isinstance(query_id, bool):
            self._error(name, REASON_REFUSED)("perf query %s refused by the mgr (its log says why): %s", name, query)
            return
        self._ids[name] = query_id
        self._queries[name] = query
        self._since[name] = self._clock()
        self._log.info("perf query %s registered as id %d", name, query_id)

    def _remove(self, name: str) -> None:
        query_id = self._ids.pop(name)
        self._queries.pop(name, None)
        self._since.pop(name, None)
        try:
            self._mgr.remove_osd_perf_query(query_id)
            self._log.info("perf query %s (id %d) removed", name, query_id)
        except Exception as exc:
            self._log.warning("perf query %s (id %d): remove_osd_perf_query raised %s", name, query_id, exc)

    def poll(self, min_seconds: float = 0.0) -> Dict[str, Tuple[float, Dict[str, Any]]]:
        """Query name -> (seconds the counts cover, the mgr's answer) for every registered query, once the
        longest-counting of them was last asked at least min_seconds ago (else {}: they count on). All are
        asked on the same pass, so a query added later (a changed limit, one lost and added again) keeps in
        step with the others, its first window the shorter. An id the mgr no longer knows (None) is dropped
        and registered again at the next sync; one whose call raised is kept and asked again next time."""
        out: Dict[str, Tuple[float, Dict[str, Any]]] = {}
        with self._lock:
            counting = {name: query_id for name, query_id in self._ids.items() if name != TOMBSTONE}
            if not counting or max(self._clock() - self._since[name] for name in counting) < min_seconds:
                return out
            for name, query_id in sorted(counting.items()):
                try:
                    answer: Optional[Dict[str, Any]] = self._mgr.get_osd_perf_counters(query_id)
                except Exception as exc:  # the id stays ours: forgetting it would leave it on the mgr for good
                    self._error(name, REASON_UNANSWERED)(
                        "perf query %s (id %d): get_osd_perf_counters raised %s", name, query_id, exc
                    )
                    continue
                now = self._clock()
                if answer is None:
                    self._error(name, REASON_LOST)(
                        "perf query %s (id %d) unknown to the mgr: registered again", name, query_id
                    )
                    self._ids.pop(name)
                    self._queries.pop(name, None)
                    self._since.pop(name, None)
                    continue
                out[name] = (now - self._since[name], answer)
                self._since[name] = now
        return out

    def close(self) -> None:
        """At shutdown: every query of ours removed (the tombstone left in their place on the OSDs), and
        none added again by this process. A module disable or a failover respawns the mgr without calling
        this: the OSDs keep what they had until a new active mgr sends them a set (perfwatch's again, when
        it is enabled there) or they restart."""
        with self._lock:
            ours = sorted(set(self._ids) - {TOMBSTONE})
            for name in ours:
                self._remove(name)
            # The marker stays as it was: at the mgr's shutdown its messenger may be down already, so the
            # OSDs may never hear of these changes; the next active mgr puts the tombstone in place if needed.
            self._settle(bool(ours), remember=False)
            self._closed = True
