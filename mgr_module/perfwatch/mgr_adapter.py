"""CephAdapter inside ceph-mgr: tell commands through send_command, maps and counters through get().

At most one request per OSD is outstanding: a request that timed out stays registered until the OSD
answers it, and until then that OSD is reported busy instead of being sent another.
"""

import json
import threading
from typing import Any, Dict, List, Tuple

from mgr_module import CommandResult, MgrModule

from .adapter import REASON_BUSY, REASON_DECODE, REASON_ERROR, REASON_TIMEOUT, CephAdapter, FetchError


class MgrAdapter(CephAdapter):
    def __init__(self, module: MgrModule) -> None:
        self.module = module
        self._lock = threading.Lock()
        self._outstanding: Dict[int, CommandResult] = {}

    def osds(self) -> List[Tuple[int, bool]]:
        osd_map = self.module.get("osd_map") or {}
        return [(int(o["osd"]), bool(o.get("up"))) for o in osd_map.get("osds", [])]

    def outstanding(self) -> int:
        with self._lock:
            return sum(1 for r in self._outstanding.values() if not r.ev.is_set())

    def tell_osd(self, osd_id: int, command: Dict[str, Any], timeout: float) -> Any:
        with self._lock:
            previous = self._outstanding.get(osd_id)
            if previous is not None and not previous.ev.is_set():
                raise FetchError(REASON_BUSY, "osd.{} has not answered an earlier request".format(osd_id))
            result = CommandResult("")
            self._outstanding[osd_id] = result
        self.module.send_command(result, "osd", str(osd_id), json.dumps(command), "")
        if not result.ev.wait(timeout):
            raise FetchError(REASON_TIMEOUT, "osd.{}: no answer in {:.0f} s".format(osd_id, timeout))
        with self._lock:
            if self._outstanding.get(osd_id) is result:
                del self._outstanding[osd_id]
        if result.r != 0:
            raise FetchError(REASON_ERROR, "osd.{}: {} {}".format(osd_id, result.r, result.outs.strip()))
        try:
            return json.loads(result.outb)
        except ValueError as exc:
            raise FetchError(REASON_DECODE, "osd.{}: {}".format(osd_id, exc)) from exc

    def rgw_counters(self) -> Dict[str, Dict[str, Dict[str, Any]]]:
        # Squid renamed get_all_perf_counters; feature-detect rather than parse versions.
        getter = getattr(self.module, "get_unlabeled_perf_counters", None) or self.module.get_all_perf_counters
        try:
            everything = getter(services=("rgw",))
        except Exception as exc:
            raise FetchError(REASON_ERROR, "mgr perf counters: {!r}".format(exc)) from exc
        return {daemon: dict(values) for daemon, values in everything.items() if daemon.startswith("rgw.")}
