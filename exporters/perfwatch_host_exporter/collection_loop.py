"""The background collection: a thread that runs one collection every --collect-interval seconds and
puts the rendered text in a cache that /metrics serves, so a scrape never waits for a daemon, a socket
or a file. health() tells /healthz and / whether collections still come: a collection stuck in a read
that never returns (which no timeout can end) shows there, and in the cache's age on /metrics."""

import logging
import threading
import time
from typing import Callable, List, NamedTuple, Optional, Tuple

from perfwatch.common.exposition import render
from perfwatch.common.metrics_cache import MetricsCache
from perfwatch.common.metrics_model import Labels, Sample

from . import families as f

MIN_STALE_AFTER = 60.0  # seconds: below this a collection is never called stuck (admin sockets take 2 s each)


class Health(NamedTuple):
    ok: bool
    message: str


class CollectionLoop:
    def __init__(
        self,
        collect: Callable[[], List[Sample]],
        hostname: str,
        interval: float,
        log: logging.Logger,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._collect = collect
        self._host: Labels = (("hostname", hostname),)
        self.interval = interval
        self.stale_after = max(MIN_STALE_AFTER, 4 * interval)
        self.log = log
        self.clock = clock
        self.collections = 0
        self.started_at = clock()
        self.running_since: Optional[float] = None
        self.last_ended: Optional[float] = None
        self.last_duration = 0.0
        # Before the first collection ends, /metrics has the exporter's own count (0) and nothing else.
        self.cache = MetricsCache(self._age_tail, render(f.EXPORTER_REGISTRY, self._own_samples()))
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def _age_tail(self, age: float) -> str:
        return render(f.EXPORTER_REGISTRY, [Sample(f.CACHE_AGE, "", self._host, round(age, 3))])

    def _own_samples(self, collections: int = 0) -> List[Sample]:
        return [Sample(f.COLLECTIONS, "", self._host, float(collections))]

    def start(self) -> None:
        self.started_at = self.clock()
        self._thread = threading.Thread(target=self._run, name="perfwatch-collect", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Ask the loop to end and wait a while; a collection stuck in a read is left behind (daemon thread)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            began = self.clock()
            self.run_once()
            self._stop.wait(max(0.0, self.interval - (self.clock() - began)))

    def alive(self) -> bool:
        """Whether the collection thread runs (or was never started: tests call run_once)."""
        return self._thread is None or self._thread.is_alive() or self._stop.is_set()

    def run_once(self) -> None:
        """One collection into the cache; a failure (in collecting or rendering) is logged and the
        previous answer kept: the cache then ages and /healthz says so."""
        began = self.clock()
        self.running_since = began
        try:
            samples = self._collect()
            ended = self.clock()
            text = render(f.EXPORTER_REGISTRY, samples + self._own_samples(self.collections + 1))
            self.cache.put(text, ended)
        except Exception:
            self.log.exception("collection failed; /metrics keeps the previous one")
            return
        finally:
            self.running_since = None
        self.collections += 1
        self.last_ended = ended
        self.last_duration = ended - began

    def parts(self, compressed: bool) -> Tuple[bytes, bytes]:
        """The cached answer and its age, as MetricsCache.parts gives them."""
        return self.cache.parts(self.clock(), compressed)

    def body(self, compressed: bool) -> bytes:
        return b"".join(self.parts(compressed))

    def health(self) -> Health:
        now = self.clock()
        if not self.alive():
            return Health(False, "the collection thread has stopped; /metrics serves {}".format(self._served(now)))
        running = self.running_since
        if running is not None and now - running > self.stale_after:
            return Health(
                False,
                "a collection has been running for {:.0f} s (something it reads does not answer); "
                "/metrics serves {}".format(now - running, self._served(now)),
            )
        if self.last_ended is None:
            if now - self.started_at > self.stale_after:
                return Health(
                    False, "no collection has ended in the {:.0f} s since start".format(now - self.started_at)
                )
            return Health(True, "starting: the first collection is running")
        if now - self.last_ended > self.stale_after + self.interval:
            return Health(False, "no collection has ended for {:.0f} s".format(now - self.last_ended))
        return Health(
            True,
            "the last collection ended {:.1f} s ago and took {:.3f} s; one every {:g} s".format(
                now - self.last_ended, self.last_duration, self.interval
            ),
        )

    def _served(self, now: float) -> str:
        if self.last_ended is None:
            return "no daemon's series yet"
        return "the collection that ended {:.0f} s ago".format(now - self.last_ended)
