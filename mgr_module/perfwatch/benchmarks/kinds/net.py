"""`net`: OSD heartbeat ping times, front and back networks, as the mgr holds them. No load at all."""

import statistics
from typing import Any, Dict, List

from ..base import BenchError, Benchmark, Context
from ..measurement import Measurement


def ping_measurements(ping_times: Dict[str, Any]) -> List[Measurement]:
    """Per OSD and interface, the mean over its peers of the 1-minute average ping (ms -> seconds)."""
    out = []
    for entry in ping_times.get("osd_ping_times", []):
        per_iface: Dict[str, List[float]] = {}
        # Pacific names the per-peer list network_ping_times (as in the OSD stats); accept the short name too.
        for peer in entry.get("network_ping_times", entry.get("ping_times", [])):
            for iface in peer.get("interfaces", []):
                avg = iface.get("average", {}).get("1min")
                if isinstance(avg, (int, float)):
                    per_iface.setdefault(iface.get("interface", "?"), []).append(float(avg))
        for iface, values in sorted(per_iface.items()):
            if iface in ("front", "back") and values:
                mean_ms = statistics.mean(values)
                out.append(Measurement("net", "ping_" + iface, int(entry["osd"]), mean_ms / 1000.0, "seconds"))
    return out


class NetPing(Benchmark):
    name = "net"
    heavy = False
    description = "OSD heartbeat ping times (front and back) from the mgr; sends nothing"
    interval_option = "net_probe_interval"

    def scope(self, params: Dict[str, int], osds: List[int]) -> str:
        return "the heartbeat ping times of {} OSDs".format(len(osds))

    def run(self, ctx: Context) -> List[Measurement]:
        found = ping_measurements(ctx.adapter.ping_times())
        if not found:
            raise BenchError("the mgr holds no heartbeat ping times yet (OSDs report them every few seconds)")
        return found
