"""Reading and writing one versioned record of the mgr's key-value store under "bench/".

Every record is written as {"version": common.VERSION, "data": ...}. Reading one never raises: an older
record is migrated; a newer, unreadable or wrongly shaped one is copied to "bench/aside/<key>/<time>" (at
most ASIDE_MAX of them, none longer than one entry; never read again) and replaced by what could be
kept of it, with one log line. Run ids named by broken scratch material are collected in `found`.

A record longer than one entry of the store is written in parts (parts.py); one that takes
several is written at most every LARGE_SAVE_INTERVAL seconds when the caller says it may wait.
"""

import json
import threading
import time
from typing import Any, Callable, Dict, List, Optional

from . import common
from .parts import PARTS_MAX, Parts, TornRecord

PREFIX = "bench/"
ASIDE_PREFIX = PREFIX + "aside/"
ASIDE_INDEX = "aside_index"
ASIDE_MAX = 20  # records kept aside; the oldest is deleted when one more comes
PROBLEMS_KEPT = 20
# Seconds between two throttled writes of a record in parts (the baselines of a large cluster: about 14
# entries of 60,000 characters at 10,000 OSDs): every light probe round changes them, and each write goes through the
# mons' consensus. A failover loses the values of the rounds since: a few of each rolling median's window.
LARGE_SAVE_INTERVAL = 300.0


class VersionedRecords:
    def __init__(
        self,
        get: Callable[[str], Optional[str]],
        put: Callable[[str, Optional[str]], None],
        log: Any,
        clock: Callable[[], float],
        lock: "threading.RLock",
        entry_max: int = common.ENTRY_MAX_CHARS,
        keys: Optional[Callable[[str], Optional[List[str]]]] = None,
    ) -> None:
        """keys(prefix): the store's keys that start with prefix, when the store can list them."""
        self.entry_max = entry_max  # a set-aside copy longer than this is dropped, not copied
        self._parts = Parts(get, put, keys, entry_max)
        self.record_max = PARTS_MAX * entry_max  # the longest record it writes; callers fit theirs within
        self._parts_written: Dict[str, float] = {}  # name -> when a record was last written in parts
        self._get = get
        self._put = put
        self._log = log
        self._clock = clock
        self._lock = lock  # the owner's: held while a value it changes is encoded
        self.problems: List[str] = []  # the last few load problems, as logged
        self.found: Dict[str, str] = {}  # run id -> kind, named by broken scratch material while loading
        self._aside: Optional[List[str]] = None  # keys set aside, loaded when first needed

    # ----- reading ------------------------------------------------------------------------------

    def load(self, name: str, clean: Callable[[Any], common.Cleaned], default: Callable[[], Any]) -> Any:
        """The record `name`, migrated and checked; `default()` when absent or unusable. Never raises."""
        key = PREFIX + name
        try:
            raw = self._get(key)
        except Exception as exc:
            self._problem("cannot read {} ({}: {}); starting it empty".format(key, type(exc).__name__, exc))
            return default()
        if raw is None or raw == "":
            return default()
        try:
            raw = self._parts.joined(key, raw)
        except TornRecord as exc:  # what its parts that could be read say (run ids of scratch, for cleanup)
            why = "is in parts that do not fit together ({})".format(exc)
            self._parts.forget(key)
            return self._unusable(name, exc.partial or str(raw), why, default)
        except Exception as exc:  # a part that cannot be read: read again next start
            self._problem(
                "cannot read the parts of {} ({}: {}); starting it empty".format(key, type(exc).__name__, exc)
            )
            return default()
        try:
            return self._decode(name, raw, clean, default)
        except Exception as exc:  # a bug in a check must not stop serve() either
            self._problem("{} could not be read ({}: {}); starting it empty".format(key, type(exc).__name__, exc))
            return default()

    def _decode(self, name: str, raw: Any, clean: Callable[[Any], common.Cleaned], default: Callable[[], Any]) -> Any:
        key = PREFIX + name
        text = raw if isinstance(raw, str) else repr(raw)
        try:
            doc = json.loads(text)
        except ValueError as exc:
            return self._unusable(name, text, "is not JSON ({})".format(exc), default)
        version, data = 1, doc
        if isinstance(doc, dict) and "version" in doc:
            version = doc["version"]
            if not common.is_int(version) or version < 1 or "data" not in doc:
                return self._unusable(name, text, "has a broken envelope (version {!r})".format(version), default)
            data = doc["data"]
        if version > common.VERSION:
            why = "was written by a newer perfwatch (version {}; this one reads up to {})".format(
                version, common.VERSION
            )
            return self._unusable(name, text, why, default)
        cleaned = clean(data)
        self.found.update(cleaned.recovered)
        if cleaned.value is None:
            return self._unusable(name, text, "is not what it should be: " + "; ".join(cleaned.dropped), default)
        if cleaned.dropped:
            where = self._set_aside(name, text)
            self._problem(
                "{} (version {}): dropped {}{}, kept the rest; the original: {}".format(
                    key, version, len(cleaned.dropped), sample(cleaned.dropped), where
                )
            )
        elif version < common.VERSION:
            self._log.info("perfwatch: %s migrated from version %d to %d", key, version, common.VERSION)
        if cleaned.dropped or version < common.VERSION:
            self.save(name, cleaned.value)  # so the next start reads it as it is now
        return cleaned.value

    def _unusable(self, name: str, text: str, why: str, default: Callable[[], Any]) -> Any:
        """Set the whole record aside, say so once, and start it from default()."""
        found = common.run_ids_in(text) if name in ("scratch", "recovered_scratch") else {}
        self.found.update(found)
        where = self._set_aside(name, text)
        note = "; run ids it names kept for cleanup by prefix{}".format(sample(sorted(found))) if found else ""
        self._problem("{}{} {}; {}{}; starting it empty".format(PREFIX, name, why, where, note))
        value = default()
        self.save(name, value)
        return value

    def _problem(self, line: str) -> None:
        self._log.warning("perfwatch: %s", line)
        self.problems.append(line)
        del self.problems[:-PROBLEMS_KEPT]

    def _set_aside(self, name: str, text: str) -> str:
        """Copy a record to bench/aside/<name>/<time>; returns what happened, for the log line."""
        if len(text.encode("utf-8")) > self.entry_max:  # bytes: planted text need not be ASCII
            return "dropped it ({} characters: too large to set aside)".format(len(text))
        try:
            with self._lock:
                index = self._aside_index()
                stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(self._clock()))
                key = "{}{}/{}".format(ASIDE_PREFIX, name, stamp)
                n = 1
                while key in index:
                    n += 1
                    key = "{}{}/{}-{}".format(ASIDE_PREFIX, name, stamp, n)
                self._put(key, text)
                index.append(key)
                for old in index[:-ASIDE_MAX]:
                    self._put(old, None)
                del index[:-ASIDE_MAX]
            self.save(ASIDE_INDEX, index)
            return "set aside in " + key
        except Exception as exc:
            return "could not set it aside ({}: {})".format(type(exc).__name__, exc)

    def _aside_index(self) -> List[str]:
        if self._aside is None:
            raw = self._get(PREFIX + ASIDE_INDEX)  # may raise: then read again next time
            try:
                raw = self._parts.joined(PREFIX + ASIDE_INDEX, raw)
            except TornRecord:
                raw = None
            self._aside = []
            if raw:
                try:
                    doc = json.loads(raw)
                except ValueError:
                    doc = None
                ok = isinstance(doc, dict) and doc.get("version") == common.VERSION
                keys = common.clean_key_list(doc.get("data") if ok else None).value
                if keys is None:  # the records it named stay where they are, uncounted
                    self._log.warning("perfwatch: %s%s is unreadable; starting it empty", PREFIX, ASIDE_INDEX)
                self._aside = keys or []
        return self._aside

    # ----- writing ------------------------------------------------------------------------------

    def held_back(self, name: str) -> bool:
        """Whether a throttled save of the record would be skipped now (written in parts moments ago)."""
        return 0 <= self._clock() - self._parts_written.get(name, -LARGE_SAVE_INTERVAL) < LARGE_SAVE_INTERVAL

    def save(self, name: str, value: Any, strict: bool = False, throttled: bool = False) -> int:
        """Write one record in its envelope, in parts when it is longer than entry_max; returns the entries
        it took (0 when it failed or was throttled: a record last written in parts is then not written again
        within LARGE_SAVE_INTERVAL). A failure is a log line: the next save tries again; with strict, it is
        raised too (for a record that must be stored before what it records is done)."""
        if throttled and self.held_back(name):
            return 0
        try:
            with self._lock:  # run threads change these while others save them
                text = json.dumps({"version": common.VERSION, "data": value}, sort_keys=True)
            return self._write(name, text)
        except Exception as exc:
            self._log.error("perfwatch: cannot save %s%s (%s: %s)", PREFIX, name, type(exc).__name__, exc)
            if strict:
                raise
            return 0

    def _write(self, name: str, text: str) -> int:
        entries = self._parts.write(PREFIX + name, text)
        if entries > 1:
            self._parts_written[name] = self._clock()
        else:
            self._parts_written.pop(name, None)
        return entries

    def bound(self, what: str, mapping: Dict[str, Any], limit: Optional[int] = None) -> None:
        """Trim a mapping to `limit` (common.MAX_KEYS) keys, with a log line naming what was dropped."""
        limit = common.MAX_KEYS if limit is None else limit
        with self._lock:
            extra = common.bound(mapping, limit)
        if extra:
            self._log.warning("perfwatch: %s beyond %d keys: dropped %d%s", what, limit, len(extra), sample(extra))


def sample(items: List[str], n: int = 3) -> str:
    more = " and {} more".format(len(items) - n) if len(items) > n else ""
    return " (" + "; ".join(items[:n]) + more + ")"
