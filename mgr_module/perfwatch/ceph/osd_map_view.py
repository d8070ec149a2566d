"""What each collection cycle needs of the OSD map (every OSD and whether it is up, each up OSD's public
and cluster address and interface), read from the mgr once per OSD map epoch, not every cycle: at 10,000
OSDs each get() of the map or the metadata builds a dict of all of it (docs/decisions/collection-cost.md).
Pure: the mgr calls are passed in. The epoch is `get_osdmap().get_epoch()` (no Python objects built); when
it cannot be read, the map is read every time. An OSD sends its metadata (front_iface, back_iface) when it
starts, so it is read again for an up OSD that is new or restarted (up_from changed), for one that had none
yet (at most every METADATA_RETRY s, the map with it: the mgr may get it after the map says up), and every
METADATA_MAX_AGE s in any case.
"""

import threading
import time
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from .osd_networks import IFACE_KEYS, OsdNetwork, networks

METADATA_MAX_AGE = 300.0  # s: the interfaces are read again at least this often
METADATA_RETRY = 30.0  # s: an up OSD without metadata is looked for again this often


class OsdMapView:
    def __init__(
        self,
        get: Callable[[str], Any],
        epoch: Callable[[], Any],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """get: MgrModule.get; epoch: the mgr's current OSD map epoch (may raise)."""
        self._get = get
        self._epoch = epoch
        self._clock = clock
        self._lock = threading.Lock()
        self._seen_epoch: Optional[int] = None
        self._osds: List[Tuple[int, bool]] = []
        self._networks: List[OsdNetwork] = []
        self._started: Set[Tuple[int, Any]] = set()  # (osd, up_from) of each up OSD the metadata was read for
        self._metadata: Dict[str, Dict[str, str]] = {}  # osd id as text -> its IFACE_KEYS
        self._metadata_at: Optional[float] = None
        self._lacking = False  # an up OSD had no metadata at the last read: looked for again, the epoch the same
        self.map_reads = 0  # how often the map was read (tests and benches)
        self.metadata_reads = 0

    def osds(self) -> List[Tuple[int, bool]]:
        """Every OSD in the map and whether it is up."""
        with self._lock:
            self._refresh()
            return list(self._osds)

    def networks(self) -> List[OsdNetwork]:
        """osd_networks.networks() of the current map."""
        with self._lock:
            self._refresh()
            return list(self._networks)

    def _current_epoch(self) -> Optional[int]:
        try:
            return int(self._epoch())
        except Exception:  # no such call, or the map not there yet: read it every time
            return None

    def _refresh(self) -> None:
        epoch = self._current_epoch()
        now = self._clock()
        age = None if self._metadata_at is None else now - self._metadata_at
        stale = age is None or age >= METADATA_MAX_AGE
        due = age is None or age >= METADATA_RETRY  # an up OSD without metadata is looked for again
        if epoch is not None and epoch == self._seen_epoch and not stale and not (self._lacking and due):
            return
        osd_map = self._get("osd_map") or {}
        self.map_reads += 1
        entries = [e for e in osd_map.get("osds") or [] if isinstance(e, dict)]
        osds: List[Tuple[int, bool]] = []
        started: Set[Tuple[int, Any]] = set()
        for entry in entries:
            try:
                osd = int(entry["osd"])
            except (KeyError, TypeError, ValueError):
                continue
            osds.append((osd, bool(entry.get("up"))))
            if entry.get("up"):
                started.add((osd, entry.get("up_from")))
        lacking = any(str(osd) not in self._metadata for osd, _ in started)
        if stale or (lacking and due) or not started <= self._started:
            self._metadata = _interfaces(self._get("osd_metadata") or {})
            self._metadata_at = now
            self._started = started
            self.metadata_reads += 1
            lacking = any(str(osd) not in self._metadata for osd, _ in started)
        self._lacking = lacking
        self._osds = osds
        self._networks = networks(osd_map, self._metadata)
        self._seen_epoch = epoch


def _interfaces(metadata: Dict[str, Any]) -> Dict[str, Dict[str, str]]:
    """Of each OSD's metadata, only what networks() reads (a few MB less held at 10,000 OSDs)."""
    out: Dict[str, Dict[str, str]] = {}
    for osd, meta in metadata.items():
        if isinstance(meta, dict):
            out[str(osd)] = {key: meta[key] for key in IFACE_KEYS if isinstance(meta.get(key), str)}
    return out
