"""Each OSD's public and cluster address: what joins an OSD to the NIC that carries each of its
networks, with the host exporter's ceph_perfwatch_network_address_info (address -> device -> carrier).

The addresses come from the OSD map (what clients and peers connect to: authoritative, and current after
a restart); the interface names Ceph picked at boot (`ceph osd metadata` front_iface/back_iface) ride
along for the operator and as a fallback, but are not the join: they are sent once at boot, are "" for
an address on lo or one that is not local (containers), and may be an address label (eth0:1). Where the
OSD has no cluster network of its own, its cluster address is its public one (one NIC for both). Pure.
"""

import ipaddress
from typing import Any, Dict, List, NamedTuple, Optional

PUBLIC, CLUSTER = "public", "cluster"
_FIELDS = (
    (PUBLIC, "public_addrs", "public_addr", "front_iface"),
    (CLUSTER, "cluster_addrs", "cluster_addr", "back_iface"),
)
IFACE_KEYS = tuple(iface for _, _, _, iface in _FIELDS)  # what networks() reads of an OSD's metadata


class OsdNetwork(NamedTuple):
    osd: int
    network: str  # public | cluster
    address: str  # normalised as the host exporter's (nic_map.normalise)
    iface: str  # what Ceph picked at boot ("" when it did not say)


def host_of(addr: str) -> Optional[str]:
    """The IP of "ip:port/nonce", "[v6]:port/nonce", "v2:ip:port/nonce"; None for Ceph's "-" or junk."""
    text = addr.strip().split("/", 1)[0]
    for prefix in ("v2:", "v1:", "any:"):
        if text.startswith(prefix):
            text = text[len(prefix) :]
    if text.startswith("["):
        text = text[1:].split("]", 1)[0]
    elif text.count(":") == 1:
        text = text.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    return None if address.is_unspecified else str(address)


def _address(entry: Dict[str, Any], vector: str, legacy: str) -> Optional[str]:
    addrvec = (entry.get(vector) or {}).get("addrvec") if isinstance(entry.get(vector), dict) else None
    for addr in addrvec or []:
        if isinstance(addr, dict) and addr.get("type") == "v2":
            found = host_of(str(addr.get("addr", "")))
            if found:
                return found
    for addr in addrvec or []:
        if isinstance(addr, dict):
            found = host_of(str(addr.get("addr", "")))
            if found:
                return found
    return host_of(str(entry.get(legacy, "")))


def networks(osd_map: Dict[str, Any], metadata: Dict[str, Any]) -> List[OsdNetwork]:
    """One row per up OSD and network whose address the map knows."""
    rows: List[OsdNetwork] = []
    for entry in osd_map.get("osds") or []:
        if not isinstance(entry, dict) or not entry.get("up"):
            continue
        try:
            osd = int(entry["osd"])
        except (KeyError, TypeError, ValueError):
            continue
        meta = metadata.get(str(osd)) or {}
        for network, vector, legacy, iface_key in _FIELDS:
            address = _address(entry, vector, legacy)
            if address is not None:
                iface = meta.get(iface_key) if isinstance(meta, dict) else ""
                rows.append(OsdNetwork(osd, network, address, iface if isinstance(iface, str) else ""))
    return rows
