"""Link capacity of every network interface: the rate a root tbf/htb qdisc shapes it to, else its speed."""

import re
from typing import Callable, List, NamedTuple, Optional, Pattern

from . import tc, tools
from .fsroot import Root

TC_TIMEOUT = 2.0
MBIT = 125000  # bytes per second in one Mbit/s

TcRunner = tools.ToolRunner


class LinkCapacity(NamedTuple):
    device: str
    bytes_per_second: float
    source: str  # tc | speed


def default_tc() -> Optional[TcRunner]:
    """A tc runner when tc is installed; None (speed only) when it is not."""
    return tools.runner("tc", TC_TIMEOUT)


def _speed(root: Root, device: str) -> Optional[float]:
    """/sys/class/net/X/speed in bytes per second; None when absent, unreadable (EINVAL when the link is
    down or virtual) or -1 (unknown)."""
    try:
        mbit = int(root.read_text("/sys/class/net/{}/speed".format(device)).strip())
    except (OSError, ValueError):
        return None
    return mbit * MBIT if mbit > 0 else None


# Interfaces left out by default: loopback and the per-container/per-pod ends that come and go with
# workloads (Docker, Kubernetes CNIs, libvirt); a host's NICs and bonds are what the rules need.
DEFAULT_EXCLUDE = r"^(lo|veth.*|cali.*|cilium.*|lxc.*|flannel.*|cni.*|docker\d+|virbr\d+(-nic)?|vnet\d+)$"


def capacities(
    root: Root,
    run: Optional[TcRunner],
    on_error: Callable[[str], None],
    exclude: "Pattern[str]" = re.compile(DEFAULT_EXCLUDE),
) -> List[LinkCapacity]:
    """One row per interface not excluded that has a capacity; tc failures are reported and fall back
    to the speed."""
    devices = [d for d in root.listdir("/sys/class/net") if not exclude.match(d)]
    qdiscs = {}
    if run is not None:
        try:
            qdiscs = tc.parse_qdiscs(run(["-j", "qdisc", "show"]))
        except Exception as exc:
            on_error("tc qdisc show: {}".format(exc))
    rows: List[LinkCapacity] = []
    for device in devices:
        shaped: Optional[float] = None
        qdisc = qdiscs.get(device)
        if qdisc is not None and qdisc.kind in tc.SHAPERS and run is not None:
            if qdisc.kind == "tbf":
                shaped = qdisc.rate_bytes
            else:
                try:
                    shaped = tc.htb_capacity(run(["class", "show", "dev", device]))
                except Exception as exc:
                    on_error("tc class show dev {}: {}".format(device, exc))
        if shaped is not None:
            rows.append(LinkCapacity(device, shaped, "tc"))
            continue
        speed = _speed(root, device)
        if speed is not None:
            rows.append(LinkCapacity(device, speed, "speed"))
    return rows
