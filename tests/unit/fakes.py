"""A fake CephAdapter for unit tests of pure logic: OSDs answer from a recorded Pacific payload."""

from __future__ import annotations

import copy
import json
import threading
import time
from typing import Any

from perfwatch.ceph.seam import CephAdapter, FetchError
from perfwatch.common.daemon_counters.fetch_reasons import REASON_ERROR, REASON_TIMEOUT
from tests import paths

FIXTURES = paths.FIXTURES
PERF_DUMP = json.loads((FIXTURES / "pacific_osd_perf_dump.json").read_text())
MEMPOOLS = json.loads((FIXTURES / "pacific_osd_dump_mempools.json").read_text())


class FakeAdapter(CephAdapter):
    def __init__(self, n_osds: int = 3, delay: float = 0.0) -> None:
        self.up = {i: True for i in range(n_osds)}
        self.delay = delay  # seconds each tell takes
        self.hang: set[int] = set()  # these OSDs never answer: the call fails as timed out after half the timeout
        self.fail: set[int] = set()  # these OSDs answer with an error
        self.rgw: dict[str, dict[str, dict[str, Any]]] = {}
        self.in_flight = 0
        self.max_in_flight_seen = 0
        self.calls = 0
        self._lock = threading.Lock()
        self.release = threading.Event()  # set to let a hanging OSD answer

    def osds(self) -> list[tuple[int, bool]]:
        return sorted(self.up.items())

    def tell_osd(self, osd_id: int, command: dict[str, Any], timeout: float) -> Any:
        with self._lock:
            self.calls += 1
            self.in_flight += 1
            self.max_in_flight_seen = max(self.max_in_flight_seen, self.in_flight)
        try:
            # half: the call's own timeout (librados') ends it before the collector's deadline (the timeout) comes
            if osd_id in self.hang and not self.release.wait(timeout / 2):
                raise FetchError(REASON_TIMEOUT, f"osd.{osd_id}: no answer in {timeout} s")
            if self.delay:
                time.sleep(self.delay)
            if osd_id in self.fail:
                raise FetchError(REASON_ERROR, f"osd.{osd_id}: -5 EIO")
            if command["prefix"] != "perf dump":
                raise FetchError(REASON_ERROR, f"osd.{osd_id}: -22 unknown command {command['prefix']}")
            dump = copy.deepcopy(PERF_DUMP)
            dump["bluestore"]["onode_hits"] += osd_id  # distinct values per OSD
            return dump
        finally:
            with self._lock:
                self.in_flight -= 1

    def rgw_counters(self) -> dict[str, dict[str, dict[str, Any]]]:
        return self.rgw
