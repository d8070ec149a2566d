"""The last rendered /metrics body, for the module's endpoint and the host exporter: a background
collection puts, scrapes read, and a scrape never waits for a collection. Pure (no Ceph)."""

import gzip
import threading
from typing import Callable, NamedTuple, Optional


class CachedMetrics(NamedTuple):
    text: bytes
    gz: bytes
    generated_at: Optional[float]


# The cache's age in seconds -> exposition text appended to the body (the age family of its owner)
AgeTail = Callable[[float], str]


class MetricsCache:
    """Swapped whole under a lock; readers never wait on a collection."""

    def __init__(self, age_tail: AgeTail, initial: str = "") -> None:
        self._lock = threading.Lock()
        self._age_tail = age_tail
        raw = initial.encode("utf-8")
        self._current = CachedMetrics(raw, gzip.compress(raw, compresslevel=1), None)

    def put(self, text: str, generated_at: float) -> None:
        raw = text.encode("utf-8")
        entry = CachedMetrics(raw, gzip.compress(raw, compresslevel=1), generated_at)
        with self._lock:
            self._current = entry

    def get(self) -> CachedMetrics:
        with self._lock:
            return self._current

    def body(self, now: float, compressed: bool) -> bytes:
        """The cached body plus the cache age, computed now (a second gzip member when compressed).
        No age before the first put: there is nothing it could be the age of."""
        entry = self.get()
        tail = ""
        if entry.generated_at is not None:
            tail = self._age_tail(max(0.0, now - entry.generated_at))
        if compressed:
            return entry.gz + gzip.compress(tail.encode("utf-8"), compresslevel=1)
        return entry.text + tail.encode("utf-8")
