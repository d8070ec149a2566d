"""A stand-in ceph-mgr for the module's real MgrAdapter at n OSDs, for dev/bench/metrics_endpoint.py: get() of
"osd_map" and "osd_metadata" shaped as Ceph's dumps (each OSD's entry, its osd_xinfo, its metadata with
the fields a BlueStore OSD reports), built afresh on every call by decoding JSON (as the mgr's PyFormatter
builds new Python objects on every get()); get_osdmap().get_epoch(); and a librados handle whose
osd_command answers at once with the recorded Pacific payloads as bytes. The figures then include what
the module pays in the mgr: reading the maps and the CallPool hand-overs."""

from __future__ import annotations

import json
import logging
import sys
import types
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures"


def _addrvec(ip: str, port: int) -> dict[str, Any]:
    return {
        "addrvec": [
            {"type": "v2", "addr": f"{ip}:{port}", "nonce": 1234},
            {"type": "v1", "addr": f"{ip}:{port + 1}", "nonce": 1234},
        ]
    }


def osd_map(n: int, epoch: int) -> dict[str, Any]:
    """`ceph osd dump`'s shape: every OSD up and in, with its addresses (public 10.0.x.y, cluster 10.1.x.y)."""
    osds, xinfo = [], []
    for osd in range(n):
        public, cluster = f"10.0.{osd // 250}.{osd % 250}", f"10.1.{osd // 250}.{osd % 250}"
        osds.append({
            "osd": osd, "uuid": f"00000000-0000-4000-8000-{osd:012d}", "up": 1, "in": 1, "weight": 1.0,
            "primary_affinity": 1.0, "last_clean_begin": 0, "last_clean_end": 0, "up_from": 7, "up_thru": epoch - 1,
            "down_at": 0, "lost_at": 0, "public_addrs": _addrvec(public, 6800),
            "cluster_addrs": _addrvec(cluster, 6802),
            "heartbeat_back_addrs": _addrvec(cluster, 6804), "heartbeat_front_addrs": _addrvec(public, 6806),
            "public_addr": f"{public}:6801/1234", "cluster_addr": f"{cluster}:6803/1234",
            "heartbeat_back_addr": f"{cluster}:6805/1234", "heartbeat_front_addr": f"{public}:6807/1234",
            "state": ["exists", "up"],
        })  # fmt: skip
        xinfo.append({
            "osd": osd, "down_stamp": "0.000000", "laggy_probability": 0, "laggy_interval": 0,
            "features": 4540138303579357183, "old_weight": 0,
            "last_purged_snaps_scrub": "2024-05-01T12:00:00.000000+0000",
            "dead_epoch": 0,
        })  # fmt: skip
    return {"epoch": epoch, "fsid": "00000000-0000-4000-8000-000000000000", "max_osd": n, "pool_max": 1,
            "pools": [], "osds": osds, "osd_xinfo": xinfo, "pg_upmap": [], "pg_upmap_items": [], "pg_temp": [],
            "primary_temp": [], "blocklist": {}, "erasure_code_profiles": {}}  # fmt: skip


def osd_metadata(n: int) -> dict[str, Any]:
    """`ceph osd metadata`'s shape: about sixty fields per OSD, as a BlueStore OSD on Pacific sends."""
    out = {}
    for osd in range(n):
        public, cluster = f"10.0.{osd // 250}.{osd % 250}", f"10.1.{osd // 250}.{osd % 250}"
        meta = {
            "id": str(osd), "arch": "x86_64", "back_addr": f"[v2:{cluster}:6802/1234,v1:{cluster}:6803/1234]",
            "back_iface": "eth1", "front_addr": f"[v2:{public}:6800/1234,v1:{public}:6801/1234]", "front_iface": "eth0",
            "hb_back_addr": f"[v2:{cluster}:6804/1234]", "hb_front_addr": f"[v2:{public}:6806/1234]",
            "hostname": f"host{osd // 20}", "ceph_release": "pacific", "ceph_version": "ceph version 16.2.15",
            "ceph_version_short": "16.2.15", "container_hostname": "", "container_image": "", "cpu": "Intel(R) Xeon(R)",
            "default_device_class": "ssd", "device_ids": f"nvme0n{osd % 8}=NVME_{osd:08d}",
            "devices": f"nvme0n{osd % 8}",
            "distro": "debian", "distro_description": "Debian GNU/Linux 12 (bookworm)", "distro_version": "12",
            "journal_rotational": "0", "kernel_description": "#1 SMP Debian 6.1.0", "kernel_version": "6.1.0-18-amd64",
            "mem_swap_kb": "0", "mem_total_kb": "263784448", "network_numa_unknown_ifaces": "back_iface,front_iface",
            "objectstore_numa_unknown_devices": f"nvme0n{osd % 8}", "os": "Linux",
            "osd_data": f"/var/lib/ceph/osd/ceph-{osd}",
            "osd_objectstore": "bluestore", "osdspec_affinity": "", "rotational": "0",
        }  # fmt: skip
        for prefix in ("bluefs_db", "bluestore_bdev"):
            meta.update({f"{prefix}_{key}": f"{key}-{osd}" for key in (
                "access_mode", "block_size", "dev_node", "devices", "driver", "partition_path", "rotational",
                "size", "support_discard", "type", "dev", "model", "optimal_io_size")})  # fmt: skip
        out[str(osd)] = meta
    return out


class _OsdMap:
    def __init__(self, epoch: int) -> None:
        self.epoch = epoch

    def get_epoch(self) -> int:
        return self.epoch


class _Rados:
    def __init__(self) -> None:
        compact = (",", ":")
        dump = json.loads((FIXTURES / "pacific_osd_perf_dump.json").read_text())
        self.dump = json.dumps(dump, separators=compact).encode()

    def osd_command(self, osdid: int, cmd: str, inbuf: bytes, timeout: int = 0) -> tuple[int, bytes, str]:
        if '"perf dump"' not in cmd:
            return -22, b"", f"the stand-in answers only perf dump, not {cmd}"
        return 0, self.dump, ""


class StandInMgr:
    """What MgrAdapter reads of a MgrModule at n OSDs. new_epoch(): a new OSD map (same OSDs, as after a
    PG change), which the module reads again."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.log = logging.getLogger("synthetic-mgr")
        self.epoch = 100
        self.rados = _Rados()
        self._metadata = json.dumps(osd_metadata(n))
        self._map = json.dumps(osd_map(n, self.epoch))

    def new_epoch(self) -> None:
        self.epoch += 1
        self._map = self._map.replace(f'"epoch": {self.epoch - 1},', f'"epoch": {self.epoch},', 1)

    def get(self, what: str) -> Any:
        if what == "osd_map":
            return json.loads(self._map)
        if what == "osd_metadata":
            return json.loads(self._metadata)
        return {}

    def get_osdmap(self) -> _OsdMap:
        return _OsdMap(self.epoch)

    def get_all_perf_counters(self, services: Any = ()) -> dict[str, Any]:
        return {}


def mgr_adapter(mgr: StandInMgr, request_timeout: float = 10.0) -> Any:
    """The module's MgrAdapter on the stand-in (mgr_module, which only ceph-mgr can import, stubbed)."""
    if "mgr_module" not in sys.modules:
        stub = types.ModuleType("mgr_module")
        stub.MgrModule = object  # type: ignore[attr-defined]
        sys.modules["mgr_module"] = stub
    from perfwatch.ceph.mgr_adapter import MgrAdapter

    return MgrAdapter(mgr, lambda: request_timeout)  # type: ignore[arg-type]
