"""The one seam between perfwatch's logic and Ceph. mgr_adapter.py implements it inside ceph-mgr;
unit tests and bench scripts pass fakes. Everything here is plain data."""

import json
import threading
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

from ..common.daemon_counters.fetch_reasons import REASON_BUSY
from .call_pool import Busy, CallPool

_POOL_LOCK = threading.Lock()  # makes the default submit_osd_texts' pool once per adapter


class OsdInfo(NamedTuple):
    """An OSD as the benchmarks plan with it: its CRUSH host, whether it is up, its device class."""

    id: int
    host: str
    up: bool
    device_class: str


class FetchError(Exception):
    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__("{}: {}".format(reason, detail) if detail else reason)
        self.reason = reason
        self.detail = detail


class CephAdapter:
    """What the collector needs from Ceph. Every call returns within its timeout or raises FetchError."""

    def osds(self) -> List[Tuple[int, bool]]:
        """(id, up) of every OSD in the OSD map."""
        raise NotImplementedError

    def osd_networks(self) -> List[Any]:
        """osd_networks.OsdNetwork rows: each up OSD's public and cluster address (none where unknown)."""
        return []

    def tell_osd(self, osd_id: int, command: Dict[str, Any], timeout: float) -> Any:
        """A tell command to one OSD, its JSON answer parsed."""
        raise NotImplementedError

    def tell_osd_text(self, osd_id: int, command: Dict[str, Any], timeout: float) -> str:
        """tell_osd's answer as the OSD wrote it, undecoded (the collector decodes only what it reads). This
        default encodes tell_osd's answer again, for adapters that only have that."""
        return json.dumps(self.tell_osd(osd_id, command, timeout))

    def submit_osd_texts(
        self, osd_id: int, commands: Sequence[Dict[str, Any]], timeout: float, done: Callable[[Any], None]
    ) -> None:
        """Ask one OSD each of `commands` in turn, and return at once: from another thread, done(the list of
        its answers as text) or done(a call_pool failure: call_pool.failure() gives the exception). The
        caller keeps the deadline (timeout each command). FetchError (busy) when the OSD still has a request
        unanswered. This default asks tell_osd_text in a thread of a pool of the adapter's own."""
        with _POOL_LOCK:
            pool = self.__dict__.get("_default_osd_pool")
            if pool is None:
                pool = self.__dict__["_default_osd_pool"] = CallPool("perfwatch-osd")
        try:
            pool.submit(osd_id, lambda: [self.tell_osd_text(osd_id, c, timeout) for c in commands], done)
        except Busy as exc:
            raise FetchError(REASON_BUSY, exc.refusal("osd.{}".format(osd_id))) from exc

    def command_cpu_seconds(self) -> float:
        """CPU seconds the adapter's own threads have spent sending commands and reading their answers, in
        all (what the collection costs outside the collecting thread)."""
        pool = self.__dict__.get("_default_osd_pool")
        return pool.cpu_seconds() if pool is not None else 0.0

    def rgw_counters(self) -> Dict[str, Dict[str, Dict[str, Any]]]:
        """Per RGW daemon ("rgw.<id>"), the counters the mgr holds for it: {"rgw.req": {"value": v}}."""
        raise NotImplementedError

    # --- what benchmarks need --------------------------------------------------------------------

    def osd_infos(self) -> List[OsdInfo]:
        """An OsdInfo for every OSD: id, CRUSH host, up, device class."""
        raise NotImplementedError

    def cluster_state(self) -> Tuple[str, Dict[str, int]]:
        """(health status, PG count per state) as the mgr sees them now."""
        raise NotImplementedError

    def ping_times(self) -> Dict[str, Any]:
        """The mgr's OSD heartbeat ping times (`get('osd_ping_times')`)."""
        raise NotImplementedError

    def pool(self, name: str) -> Optional[Tuple[int, int]]:
        """(pool id, pg_num) of a pool, None if there is no such pool."""
        raise NotImplementedError

    def pool_applications(self, name: str) -> Optional[Dict[str, Dict[str, str]]]:
        """The pool's applications and their metadata ({"perfwatch": {}}), None if there is no such pool."""
        raise NotImplementedError

    def pool_names_ending(self, suffix: str) -> List[str]:
        raise NotImplementedError

    def pool_max(self) -> int:
        """The highest pool id the OSD map has assigned (Ceph never reuses one)."""
        raise NotImplementedError

    def pool_objects(self, name: str) -> Optional[int]:
        """Objects in the pool as the mgr's last `df` counts them, None when it has no figure for it."""
        raise NotImplementedError

    def create_pool(self, name: str, pg_num: int) -> None:
        raise NotImplementedError

    def tag_pool(self, name: str, application: str) -> None:
        """Enable the application on the pool; returns when the mgr's OSD map shows it (or its timeout)."""
        raise NotImplementedError

    def pg_primaries(self, pool_id: int) -> Dict[int, int]:
        """PG number within the pool -> acting primary OSD."""
        raise NotImplementedError

    def open_ioctx(self, pool: str) -> Any:
        raise NotImplementedError

    def osd_op_latency(self, osd_id: int) -> Dict[str, float]:
        """The OSD's client op latency counter: {"sum": seconds, "avgcount": ops}."""
        raise NotImplementedError

    def osd_commit_latency(self, osd_id: int) -> Optional[Tuple[float, float]]:
        """The OSD's BlueStore commit latency counter: (sum in seconds, commits); None if it has none."""
        raise NotImplementedError

    def capacity_view(self) -> Any:
        """capacity_view.CapacityView: free space per OSD, nearfull_ratio, size, max_avail and
        OSDs per pool, as the mgr sees them now (no request to any daemon)."""
        raise NotImplementedError
