"""The last rendered /metrics body, for the module's endpoint and the host exporter: a background
collection puts, scrapes read, and a scrape never waits for a collection. Pure (no Ceph)."""

import gzip
import threading
from typing import Callable, NamedTuple, Optional, Tuple


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
        raw = initial.encode("utf-8", "backslashreplace")
        self._current = CachedMetrics(raw, gzip.compress(raw, compresslevel=1), None)

    def put(self, text: str, generated_at: float) -> None:
        # A name read from the host that is not UTF-8 (an interface named with a byte 0xff) comes as a
        # lone surrogate: kept visible and unique as \\udcff, never a failed collection.
        raw = text.encode("utf-8", "backslashreplace")
        entry = CachedMetrics(raw, gzip.compress(raw, compresslevel=1), generated_at)
        with self._lock:
            self._current = entry

    def get(self) -> CachedMetrics:
        with self._lock:
            return self._current

    def parts(self, now: float, compressed: bool) -> Tuple[bytes, bytes]:
        """(the cached body as it is, not copied; the cache age computed now) for an answer to send one
        after the other; gzip members when compressed. No age before the first put."""
        entry = self.get()
        tail = ""
        if entry.generated_at is not None:
            tail = self._age_tail(max(0.0, now - entry.generated_at))
        if compressed:
            return entry.gz, gzip.compress(tail.encode("utf-8"), compresslevel=1)
        return entry.text, tail.encode("utf-8")

    def body(self, now: float, compressed: bool) -> bytes:
        """parts(), joined."""
        return b"".join(self.parts(now, compressed))
