"""A record longer than one entry of the mgr's store, written in parts (versioned.py decides what to write).

A record longer than an entry (common.entry_max_for) is written as "<key>.parts/<generation>/<i>", and
"<key>" then holds only a head: {"version", "parts", "generation", "chars", "crc"}. The new generation's
parts are written before the head and the old one's deleted after it, so a mgr that dies in between leaves
the old record whole; the CRC of the whole text tells a record put together from two writes. Writes are
serialised; the generation written is the one the store's head does not name. Parts no head names are
deleted when the record is next read; a head claiming over PARTS_MAX parts is broken, not read part by part.
Why: docs/decisions/store-entry-size.md.
"""

import json
import threading
import zlib
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import common

PARTS = ".parts/"
HEAD_MAX_CHARS = 200  # a head is shorter; a record this short is parsed twice when read
PARTS_MAX = 200  # 12 MB at 60,000 characters an entry: the baselines of 10,000 OSDs take about 14 parts

Live = Optional[Tuple[int, int]]  # (generation, parts) of the record in parts the head names; None: one entry


class TornRecord(Exception):
    """A record in parts that cannot be put together; `partial` is the text of the parts that could be read."""

    def __init__(self, why: str, partial: str = "") -> None:
        super().__init__(why)
        self.partial = partial


def crc(text: str) -> int:
    return zlib.crc32(text.encode("utf-8")) & 0xFFFFFFFF


def head_of(raw: Any) -> Optional[Dict[str, int]]:
    """The head `raw` is, checked ({"generation", "parts", "chars", "crc"}), or None when it is no head (an
    ordinary record). TornRecord when it is a head that cannot be right."""
    if not isinstance(raw, str) or len(raw) > HEAD_MAX_CHARS:
        return None
    try:
        head = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(head, dict) or "parts" not in head:
        return None
    fields: Dict[str, Any] = {name: head.get(name) for name in ("generation", "parts", "chars", "crc")}
    if (
        fields["generation"] not in (0, 1)
        or not all(common.is_int(fields[name]) and fields[name] >= 0 for name in ("parts", "chars", "crc"))
        or not 1 <= fields["parts"] <= PARTS_MAX
    ):
        raise TornRecord("a head of generation {!r}, {!r} parts".format(fields["generation"], fields["parts"]))
    return {name: int(value) for name, value in fields.items()}


class Parts:
    def __init__(
        self,
        get: Callable[[str], Optional[str]],
        put: Callable[[str, Optional[str]], None],
        keys: Optional[Callable[[str], Optional[List[str]]]],
        entry_max: int,
    ) -> None:
        """keys(prefix): the store's keys that start with prefix (None, or a keys that answers None, when the
        store cannot list them: leftovers are then found part after part of the generation no head names)."""
        self.entry_max = entry_max
        self._get = get
        self._put = put
        self._keys = keys
        self._live: Dict[str, Live] = {}  # record key -> what its head named when this process last read or wrote it
        self._lock = threading.Lock()  # one write at a time: two at once could mix one generation's parts

    def part_key(self, key: str, generation: int, i: int) -> str:
        return "{}{}{}/{}".format(key, PARTS, generation, i)

    def joined(self, key: str, raw: Any) -> Any:
        """The record's text: `raw` itself, or the parts its head names put together. Parts no head names
        are deleted. TornRecord when the parts do not make the record the head describes."""
        head = head_of(raw)
        live: Live = None if head is None else (head["generation"], head["parts"])
        with self._lock:
            self._live[key] = live
            self._clean(key, live)
        if head is None:
            return raw
        pieces = [self._get(self.part_key(key, head["generation"], i)) for i in range(head["parts"])]
        readable = "".join(p for p in pieces if isinstance(p, str))
        missing = [i for i, piece in enumerate(pieces) if not isinstance(piece, str)]
        if missing:
            raise TornRecord("part {} of {} is missing".format(missing[0], head["parts"]), readable)
        if len(readable) != head["chars"] or crc(readable) != head["crc"]:
            raise TornRecord("the parts do not make the record their head describes", readable)
        return readable

    def write(self, key: str, text: str) -> int:
        """Write the record's text as one entry or in parts; returns the entries written."""
        with self._lock:
            old = self._live[key] if key in self._live else self._stored_live(key)
            if len(text) <= self.entry_max:
                self._put(key, text)
                self._live[key] = None
                if old is not None:
                    self._delete_generation(key, old[0], old[1])
                return 1
            pieces = [text[i : i + self.entry_max] for i in range(0, len(text), self.entry_max)]
            if len(pieces) > PARTS_MAX:
                raise ValueError("{} characters: more than {} entries".format(len(text), PARTS_MAX))
            generation = 0 if old is None else 1 - old[0]
            for i, piece in enumerate(pieces):
                self._put(self.part_key(key, generation, i), piece)
            head = {"version": common.VERSION, "parts": len(pieces), "generation": generation}
            head.update(chars=len(text), crc=crc(text))
            self._put(key, json.dumps(head, sort_keys=True))
            self._live[key] = (generation, len(pieces))
            if old is not None:
                self._delete_generation(key, old[0], old[1])
            return len(pieces) + 1

    def forget(self, key: str) -> None:
        """Delete every part of the record (it is about to be replaced by one entry, or is broken)."""
        with self._lock:
            self._clean(key, None)
            self._live[key] = None

    def _stored_live(self, key: str) -> Live:
        try:
            head = head_of(self._get(key))
        except TornRecord:
            return None
        return None if head is None else (head["generation"], head["parts"])

    def _clean(self, key: str, live: Live) -> None:
        """Delete the parts of `key` that `live` does not name."""
        listed = self._keys(key + PARTS) if self._keys is not None else None
        if listed is not None:
            prefix = key + PARTS
            for found in listed:
                which, _, index = found[len(prefix) :].partition("/")
                named = live is not None and which == str(live[0]) and index.isdigit() and int(index) < live[1]
                if not named:
                    self._put(found, None)
            return
        for generation in (0, 1):  # without a listing: each generation's parts from the first one on
            if live is None or generation != live[0]:
                self._delete_generation(key, generation, PARTS_MAX)

    def _delete_generation(self, key: str, generation: int, count: int) -> None:
        for i in range(min(count, PARTS_MAX)):
            part = self.part_key(key, generation, i)
            if not self._get(part):
                if count == PARTS_MAX:  # an unknown count: up to the first one missing
                    return
                continue
            self._put(part, None)
