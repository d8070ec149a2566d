"""Reading and writing one versioned record of the mgr's key-value store under "bench/".

Every record is written as {"version": records.VERSION, "data": ...}. Reading one never raises: an older
record is migrated; a newer, unreadable or wrongly shaped one is copied to "bench/aside/<key>/<time>" (at
most ASIDE_MAX of them, none longer than one entry; never read again) and replaced by what could be
kept of it, with one log line. Run ids named by broken scratch material are collected in `found`.

A record longer than one entry of the store (entry_max, records.ENTRY_MAX_CHARS: the mons refuse larger
ones) is written in parts, "bench/<name>.parts/<generation>/<i>", and "bench/<name>" then holds only
{"version", "parts", "generation", "chars"}. The parts of the new generation are written before that head,
and the old generation's are deleted after it: a mgr that dies in between leaves the old record whole, and
the next reader deletes what is left of the other generation.
"""

import json
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import records

PREFIX = "bench/"
ASIDE_PREFIX = PREFIX + "aside/"
ASIDE_INDEX = "aside_index"
ASIDE_MAX = 20  # records kept aside; the oldest is deleted when one more comes
PROBLEMS_KEPT = 20
PARTS = ".parts/"
# Seconds between two throttled writes of a record in parts (the baselines of a large cluster: about 55
# entries, 3.3 MB, at 10,000 OSDs): every light probe round changes them, and each write goes through the
# mons' consensus. A failover loses the values of the rounds since: a few of each rolling median's window.
LARGE_SAVE_INTERVAL = 300.0
HEAD_MAX_CHARS = 200  # a head of parts is shorter; a record this short is parsed twice when read
# A record in at most this many parts (the baselines of 10,000 OSDs take about 15 of 60,000 characters); a
# head that claims more is broken, not read part by part. Leftover parts of an unknown count are deleted up
# to the first one missing, at most this many.
PARTS_MAX = 1000


class TornRecord(Exception):
    """A record in parts that cannot be put together: its head is broken or a part is missing."""


class VersionedRecords:
    def __init__(
        self,
        get: Callable[[str], Optional[str]],
        put: Callable[[str, Optional[str]], None],
        log: Any,
        clock: Callable[[], float],
        lock: "threading.RLock",
        entry_max: int = records.ENTRY_MAX_CHARS,
    ) -> None:
        self.entry_max = entry_max  # a set-aside copy longer than this is dropped, not copied
        self._generations: Dict[str, Tuple[int, int]] = {}  # name -> (generation, parts) of a record in parts
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

    def load(self, name: str, clean: Callable[[Any], records.Cleaned], default: Callable[[], Any]) -> Any:
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
            raw = self._joined(name, raw)
        except TornRecord as exc:
            return self._unusable(name, str(raw), "is in parts that do not fit together ({})".format(exc), default)
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

    def _joined(self, name: str, raw: Any) -> Any:
        """The record's text: `raw` itself, or when it is the head of a record in parts, the parts put
        together (and what is left of the other generation deleted)."""
        if not isinstance(raw, str) or len(raw) > HEAD_MAX_CHARS:
            return raw
        try:
            head = json.loads(raw)
        except ValueError:
            return raw
        if not isinstance(head, dict) or "parts" not in head:
            return raw
        fields: List[Any] = [head.get("generation"), head.get("parts"), head.get("chars")]
        if (
            fields[0] not in (0, 1)
            or not all(records.is_int(f) and f >= 1 for f in fields[1:])
            or fields[1] > PARTS_MAX
        ):
            raise TornRecord("a head of generation {!r}, {!r} parts".format(fields[0], fields[1]))
        generation, parts, chars = (int(f) for f in fields)
        self._generations[name] = (generation, parts)
        self._delete_parts(name, 1 - generation, None)
        pieces = [self._get(self._part_key(name, generation, i)) for i in range(parts)]
        missing = [i for i, piece in enumerate(pieces) if not isinstance(piece, str)]
        if missing:
            raise TornRecord("part {} of {} is missing".format(missing[0], parts))
        text = "".join(pieces)  # type: ignore[arg-type]
        if len(text) != chars:
            raise TornRecord("{} characters where the head says {}".format(len(text), chars))
        return text

    def _part_key(self, name: str, generation: int, i: int) -> str:
        return "{}{}{}{}/{}".format(PREFIX, name, PARTS, generation, i)

    def _delete_parts(self, name: str, generation: int, count: Optional[int]) -> None:
        """Delete the parts of one generation: `count` of them, or (None) up to the first one missing."""
        for i in range(PARTS_MAX if count is None else min(count, PARTS_MAX)):
            key = self._part_key(name, generation, i)
            if count is None and not self._get(key):
                return
            self._put(key, None)

    def _decode(self, name: str, raw: Any, clean: Callable[[Any], records.Cleaned], default: Callable[[], Any]) -> Any:
        key = PREFIX + name
        text = raw if isinstance(raw, str) else repr(raw)
        try:
            doc = json.loads(text)
        except ValueError as exc:
            return self._unusable(name, text, "is not JSON ({})".format(exc), default)
        version, data = 1, doc
        if isinstance(doc, dict) and "version" in doc:
            version = doc["version"]
            if not records.is_int(version) or version < 1 or "data" not in doc:
                return self._unusable(name, text, "has a broken envelope (version {!r})".format(version), default)
            data = doc["data"]
        if version > records.VERSION:
            why = "was written by a newer perfwatch (version {}; this one reads up to {})".format(
                version, records.VERSION
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
        elif version < records.VERSION:
            self._log.info("perfwatch: %s migrated from version %d to %d", key, version, records.VERSION)
        if cleaned.dropped or version < records.VERSION:
            self.save(name, cleaned.value)  # so the next start reads it as it is now
        return cleaned.value

    def _unusable(self, name: str, text: str, why: str, default: Callable[[], Any]) -> Any:
        """Set the whole record aside, say so once, and start it from default()."""
        found = records.run_ids_in(text) if name in ("scratch", "recovered_scratch") else {}
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
        if len(text) > self.entry_max:
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
            self._aside = []
            if raw:
                try:
                    doc = json.loads(raw)
                except ValueError:
                    doc = None
                ok = isinstance(doc, dict) and doc.get("version") == records.VERSION
                keys = records.clean_key_list(doc.get("data") if ok else None).value
                if keys is None:  # the records it named stay where they are, uncounted
                    self._log.warning("perfwatch: %s%s is unreadable; starting it empty", PREFIX, ASIDE_INDEX)
                self._aside = keys or []
        return self._aside

    # ----- writing ------------------------------------------------------------------------------

    def save(self, name: str, value: Any, strict: bool = False, throttled: bool = False) -> int:
        """Write one record in its envelope, in parts when it is longer than entry_max; returns the entries
        it took (0 when it failed or was throttled: a record last written in parts is then not written again
        within LARGE_SAVE_INTERVAL). A failure is a log line: the next save tries again; with strict, it is
        raised too (for a record that must be stored before what it records is done)."""
        if throttled and 0 <= self._clock() - self._parts_written.get(name, -LARGE_SAVE_INTERVAL) < LARGE_SAVE_INTERVAL:
            return 0
        try:
            with self._lock:  # run threads change these while others save them
                text = json.dumps({"version": records.VERSION, "data": value}, sort_keys=True)
            return self._write(name, text)
        except Exception as exc:
            self._log.error("perfwatch: cannot save %s%s (%s: %s)", PREFIX, name, type(exc).__name__, exc)
            if strict:
                raise
            return 0

    def _write(self, name: str, text: str) -> int:
        if len(text) <= self.entry_max:
            self._put(PREFIX + name, text)
            self._parts_written.pop(name, None)
            old = self._generations.pop(name, None)
            if old is not None:
                self._delete_parts(name, *old)
            return 1
        old_generation, old_parts = self._generations.get(name, (1, 0))
        generation = 1 - old_generation
        pieces = [text[i : i + self.entry_max] for i in range(0, len(text), self.entry_max)]
        if len(pieces) > PARTS_MAX:
            raise ValueError("{} characters: more than {} entries".format(len(text), PARTS_MAX))
        for i, piece in enumerate(pieces):
            self._put(self._part_key(name, generation, i), piece)
        head = {"version": records.VERSION, "parts": len(pieces), "generation": generation, "chars": len(text)}
        self._put(PREFIX + name, json.dumps(head, sort_keys=True))
        self._generations[name] = (generation, len(pieces))
        self._parts_written[name] = self._clock()
        self._delete_parts(name, old_generation, old_parts)
        return len(pieces) + 1

    def bound(self, what: str, mapping: Dict[str, Any], limit: Optional[int] = None) -> None:
        """Trim a mapping to `limit` (records.MAX_KEYS) keys, with a log line naming what was dropped."""
        limit = records.MAX_KEYS if limit is None else limit
        with self._lock:
            extra = records.bound(mapping, limit)
        if extra:
            self._log.warning("perfwatch: %s beyond %d keys: dropped %d%s", what, limit, len(extra), sample(extra))


def sample(items: List[str], n: int = 3) -> str:
    more = " and {} more".format(len(items) - n) if len(items) > n else ""
    return " (" + "; ".join(items[:n]) + more + ")"
