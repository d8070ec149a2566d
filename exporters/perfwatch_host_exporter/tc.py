"""Parsers for `tc` output: the shaped rate of an interface. Pure.

`tc -j qdisc show` (iproute2 6.1) gives a JSON list, one object per qdisc, with "dev" when no device
was named; tbf's options carry "rate" in bytes per second:
  [{"kind":"tbf","handle":"8001:","dev":"pwx0","root":true,"refcnt":3,
    "options":{"rate":10000000,"burst":65530,"lat":50000}}]         (rate 80mbit)
htb keeps its rates on classes, and iproute2 6.1 prints classes as text even with -j:
  class htb 1:1 root rate 1Gbit ceil 2Gbit burst 1375b cburst 1250b
"""

import json
import re
from typing import Dict, NamedTuple, Optional

SHAPERS = ("tbf", "htb")

_RATE = re.compile(r"^(\d+(?:\.\d+)?)([KMGT]?)(i?)bit$")
_SCALE = {"": 0, "K": 1, "M": 2, "G": 3, "T": 4}


class RootQdisc(NamedTuple):
    kind: str
    rate_bytes: Optional[float]  # tbf: its rate; htb: None (see its classes)


def parse_qdiscs(text: str) -> Dict[str, RootQdisc]:
    """`tc -j qdisc show` -> {device: its root qdisc}."""
    found: Dict[str, RootQdisc] = {}
    for qdisc in json.loads(text) if text.strip() else []:
        if not isinstance(qdisc, dict) or not qdisc.get("root") or "dev" not in qdisc:
            continue
        options = qdisc.get("options") or {}
        rate = options.get("rate") if isinstance(options, dict) else None
        rate_bytes = float(rate) if isinstance(rate, (int, float)) and rate > 0 else None
        found[str(qdisc["dev"])] = RootQdisc(str(qdisc.get("kind", "")), rate_bytes)
    return found


def parse_rate(text: str) -> float:
    """A rate as tc prints it ("80Mbit", "1Gbit", "1500Kbit", "2Gibit") in bytes per second."""
    match = _RATE.match(text)
    if match is None:
        raise ValueError("not a tc rate: {!r}".format(text))
    number, prefix, iec = match.groups()
    return float(number) * (1024 if iec else 1000) ** _SCALE[prefix] / 8


def htb_capacity(text: str) -> Optional[float]:
    """`tc class show dev X` -> the sum of the ceilings (else rates) of the htb root classes, in bytes
    per second; None when there is no root class (traffic then bypasses the shaping)."""
    total = 0.0
    roots = 0
    for line in text.splitlines():
        words = line.split()
        if words[:2] != ["class", "htb"] or "root" not in words:
            continue
        values = dict(zip(words, words[1:]))
        rate = values.get("ceil") or values.get("rate")
        if rate is None:
            continue
        total += parse_rate(rate)
        roots += 1
    return total if roots else None
