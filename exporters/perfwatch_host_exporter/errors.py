"""Counting what the exporter failed to read: a count per source, and a log line that is a warning the
first time a message is seen, debug after that (a daemon that stays unreadable does not flood the log)."""

import logging
from typing import Dict, Set

from .families import ERROR_SOURCES

_MAX_REMEMBERED = 1000


class ErrorCounter:
    def __init__(self, log: logging.Logger) -> None:
        self.log = log
        self.counts: Dict[str, int] = {source: 0 for source in ERROR_SOURCES}
        self._seen: Set[str] = set()

    def __call__(self, source: str, message: str) -> None:
        if source not in self.counts:
            raise ValueError("unknown error source {!r}".format(source))
        self.counts[source] += 1
        key = source + ": " + message
        if key in self._seen:
            self.log.debug("%s", key)
            return
        if len(self._seen) >= _MAX_REMEMBERED:
            self._seen.clear()
        self._seen.add(key)
        self.log.warning("%s", key)
