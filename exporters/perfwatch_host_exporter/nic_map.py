"""Which network device carries each address of this host: the device that holds the address, and the
carrier below it, whose traffic and capacity say whether that network is full. A VLAN (or macvlan) is
carried by its lower device, followed down; a bond by itself; a bridge by its physical ports (else itself);
anything else by itself. Pure apart from reading sysfs through Root and the `ip` output given to
parse_addresses. Why: docs/decisions/network-carriers.md.
"""

import ipaddress
import json
import posixpath
from typing import Callable, List, NamedTuple, Optional, Set

from . import tools
from .fsroot import Root

IP_TIMEOUT = 2.0
MAX_DEPTH = 8  # stacked devices followed at most (a loop in sysfs links must not hang a collection)

IpRunner = tools.ToolRunner


class HeldAddress(NamedTuple):
    address: str  # normalised: IPv4 dotted, IPv6 compressed, no brackets, no prefix
    device: str  # the device that holds it (an address label's device, not the label)


class CarriedAddress(NamedTuple):
    address: str
    device: str
    carrier: str


def default_ip() -> Optional[IpRunner]:
    return tools.runner("ip", IP_TIMEOUT)


def normalise(address: str) -> Optional[str]:
    """An address as the rules compare it; None if it is none (Ceph's "-", a port, brackets stripped)."""
    text = address.strip()
    if text.startswith("["):
        text = text[1:].split("]", 1)[0]
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        return None


def parse_addresses(ip_json: str) -> List[HeldAddress]:
    """The global addresses in `ip -j addr show` and the devices holding them: loopback and IPv6
    link-local addresses are left out (Ceph never advertises them: pick_iface skips them)."""
    rows: List[HeldAddress] = []
    for link in json.loads(ip_json or "[]"):
        device = link.get("ifname")
        if not isinstance(device, str) or device == "lo":
            continue
        for info in link.get("addr_info") or []:
            address = normalise(str(info.get("local", "")))
            if address is None:
                continue
            parsed = ipaddress.ip_address(address)
            if parsed.is_loopback or parsed.is_link_local:
                continue
            rows.append(HeldAddress(address, device))
    return rows


def _uevent(root: Root, device: str) -> str:
    try:
        text = root.read_text("/sys/class/net/{}/uevent".format(device))
    except OSError:
        return ""
    for line in text.splitlines():
        if line.startswith("DEVTYPE="):
            return line[len("DEVTYPE=") :].strip()
    return ""


def _lowers(root: Root, device: str) -> List[str]:
    try:
        entries = root.listdir("/sys/class/net/{}".format(device))
    except OSError:
        return []
    return sorted(e[len("lower_") :] for e in entries if e.startswith("lower_"))


def _physical(root: Root, device: str) -> bool:
    base = "/sys/class/net/{}".format(device)
    return root.lexists(posixpath.join(base, "device")) or root.exists(posixpath.join(base, "bonding"))


def carriers(root: Root, device: str, depth: int = 0) -> List[str]:
    """The devices that carry `device`'s traffic (module docstring)."""
    base = "/sys/class/net/{}".format(device)
    if depth >= MAX_DEPTH or root.exists(posixpath.join(base, "bonding")):
        return [device]
    if root.exists(posixpath.join(base, "brif")):
        try:
            ports = root.listdir(posixpath.join(base, "brif"))
        except OSError:
            ports = []
        found: List[str] = []
        for port in sorted(ports):
            if _physical(root, port) or _lowers(root, port):
                found.extend(c for c in carriers(root, port, depth + 1) if c not in found)
        return found or [device]
    lowers = _lowers(root, device)
    if lowers and not root.lexists(posixpath.join(base, "device")):
        found = []
        for lower in lowers:  # a VLAN or macvlan has one; followed down
            found.extend(c for c in carriers(root, lower, depth + 1) if c not in found)
        return found
    return [device]


def carried_addresses(root: Root, run: IpRunner, on_error: Callable[[str], None]) -> List[CarriedAddress]:
    """One row per address of this host and carrier of the device that holds it."""
    try:
        held = parse_addresses(run(["-j", "addr", "show"]))
    except Exception as exc:  # no ip, a timeout, output we cannot read: said, never a crash
        on_error("ip addr show: {}".format(exc))
        return []
    rows: List[CarriedAddress] = []
    seen: Set[CarriedAddress] = set()
    for address, device in held:
        for carrier in carriers(root, device):
            row = CarriedAddress(address, device, carrier)
            if row not in seen:
                seen.add(row)
                rows.append(row)
    return rows
