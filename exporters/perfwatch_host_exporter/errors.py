"""Counting what the exporter failed to read (by source) or refused to trust (by reason): a count per
key, and a log line that is a warning the first time a message is seen, debug after that (a daemon that
stays unreadable, or a fake one that stays around, does not flood the log)."""

import logging
from typing import Dict, Iterable, Set

_MAX_REMEMBERED = 1000


class ErrorCounter:
    def __init__(self, keys: Iterable[str], log: logging.Logger) -> None:
        self.log = log
        self.counts: Dict[str, int] = {key: 0 for key in keys}
        self._seen: Set[str] = set()

    def __call__(self, key: str, message: str) -> None:
        if key not in self.counts:
            raise ValueError("unknown error key {!r}".format(key))
        self.counts[key] += 1
        line = key + ": " + message
        if line in self._seen:
            self.log.debug("%s", line)
            return
        if len(self._seen) >= _MAX_REMEMBERED:
            self._seen.clear()
        self._seen.add(line)
        self.log.warning("%s", line)
