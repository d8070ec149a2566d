"""Whose load, each pass of the active mgr's serve loop: ask the registered queries for what they counted
since the last pass, then register or remove queries as the options now want; keep the window and its
samples for the collector and the `top` command."""

import threading
from typing import Any, Callable, Dict, List, Tuple

from ..common.metrics_model import Sample
from . import load_samples, queries
from .owner import QueryOwner
from .tally import EMPTY, Window, parse, window

MIN_WINDOW_SECONDS = 15.0  # three of the OSDs' 5 s reports at least


class LoadAttribution:
    def __init__(self, owner: QueryOwner, pool_names: Callable[[], Dict[int, str]], log: Any) -> None:
        """pool_names: pool id -> name, from the OSD map now."""
        self.owner = owner
        self._pool_names = pool_names
        self._log = log
        self._lock = threading.Lock()
        self._last: Window = EMPTY
        self._names: Dict[int, str] = {}
        self._load_samples: List[Sample] = []  # of the last window
        self._samples: List[Sample] = []  # those and the queries' state
        self.left_out = 0  # OSDs with load but no per-OSD series (load_osd_series_max) in the last window

    @property
    def last(self) -> Window:
        with self._lock:
            return self._last

    def snapshot(self) -> Tuple[Window, Dict[int, str]]:
        """The last window and the pool names taken with it, together."""
        with self._lock:
            return self._last, dict(self._names)

    @property
    def pool_names(self) -> Dict[int, str]:
        with self._lock:
            return dict(self._names)

    def tick(self, opts: Dict[str, Any]) -> None:
        """Ask the queries what they counted since they were last asked (at least MIN_WINDOW_SECONDS ago:
        the OSDs report every 5 s, so a shorter window, as after a `config set` wakes the loop, would
        swing with how many reports it caught), then register or remove queries as the options now want."""
        client_limit = self.owner.limit_of(queries.CLIENTS)  # of the query the counts come from
        polled = self.owner.poll(MIN_WINDOW_SECONDS)
        limit = int(opts["load_client_sample"])
        wanted = queries.wanted(bool(opts["load_attribution"]), limit)
        self.owner.sync(wanted)
        pools, clients = polled.get(queries.POOLS), polled.get(queries.CLIENTS)
        try:
            with self._lock:
                kept = pools is None and queries.POOLS in self.owner.registered and self._last is not EMPTY
                win, names, out, left_out = self._last, self._names, self._load_samples, self.left_out
            if not kept:
                win, names, out, left_out = EMPTY, {}, [], 0
            if pools is not None:
                win = window(
                    pools[0],
                    parse(pools[1]),
                    clients[0] if clients is not None else 1.0,
                    parse(clients[1]) if clients is not None else {},
                    client_limit if clients is not None else 0,
                )
                names = self._pool_names()
                limits = load_samples.Limits(
                    int(opts["load_top_clients"]), int(opts["load_top_per_osd"]), int(opts["load_osd_series_max"])
                )
                out, left_out = load_samples.samples(win, names, limits)
            state = load_samples.state_samples(self.owner.registered, sorted(wanted), dict(self.owner.errors))
        except Exception:
            with self._lock:  # nothing stale exported as if current
                self._last, self._names, self._load_samples, self._samples, self.left_out = EMPTY, {}, [], [], 0
            raise
        with self._lock:
            self._last, self._names, self._load_samples, self.left_out = win, names, out, left_out
            self._samples = out + state

    def samples(self) -> List[Sample]:
        with self._lock:
            return list(self._samples)

    def close(self) -> None:
        """Shutdown: every query removed, none registered again by this process."""
        self.owner.close()
        with self._lock:
            self._samples = []
