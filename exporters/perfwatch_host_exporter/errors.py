"""Counting what the exporter failed to read (by source) or refused to trust (by reason): a count per
key, and a log line that is a warning the first time its kind is seen, debug after that (a daemon that
stays unreadable, or a thousand fake ones that stay around, do not flood the log). A message's kind is
the message itself, or what the caller names (`once_per`: "uid 1000" for every process of that user).
Messages carry what processes call themselves: control characters are escaped, one event one line."""

import logging
import threading
from typing import Dict, Iterable, Optional

from perfwatch.common.server.httpwire import printable

_MAX_REMEMBERED = 1000  # kinds remembered; the one seen longest ago is forgotten first


class ErrorCounter:
    def __init__(self, keys: Iterable[str], log: logging.Logger) -> None:
        self.log = log
        self.counts: Dict[str, int] = {key: 0 for key in keys}
        self._seen: Dict[str, None] = {}  # insertion-ordered: the first is the one seen longest ago
        self._lock = threading.Lock()  # a collection's admin-socket work runs side by side (side_by_side.py)

    def __call__(self, key: str, message: str, once_per: Optional[str] = None) -> None:
        if key not in self.counts:
            raise ValueError("unknown error key {!r}".format(key))
        with self._lock:
            self._count(key, message, once_per)

    def _count(self, key: str, message: str, once_per: Optional[str]) -> None:
        self.counts[key] += 1
        line = printable(key + ": " + message)
        kind = key + ": " + (once_per if once_per is not None else line)
        if kind in self._seen:
            del self._seen[kind]
            self._seen[kind] = None  # seen last now
            self.log.debug("%s", line)
            return
        self._seen[kind] = None
        if len(self._seen) > _MAX_REMEMBERED:
            del self._seen[next(iter(self._seen))]
        self.log.warning("%s", line)
