"""What a benchmark produces: measurements, keyed per kind, metric and OSD."""

from typing import Any, Dict, NamedTuple, Optional

UNITS = ("iops", "bytes_per_second", "seconds")
HIGHER_IS_BETTER = {"iops": True, "bytes_per_second": True, "seconds": False}


class Measurement(NamedTuple):
    kind: str  # "osd", "rados", "rbd", "rgw", "net"
    metric: str  # "write_iops_4k", "write_latency", "ping_front", ...
    osd: Optional[int]  # None for a cluster-wide result (rbd, rgw)
    value: float
    unit: str  # one of UNITS

    @property
    def key(self) -> str:
        """Stable text key, used in the mgr store and in health details."""
        return "{}/{}/{}".format(self.kind, self.metric, "-" if self.osd is None else "osd.{}".format(self.osd))

    def to_dict(self) -> Dict[str, Any]:
        return self._asdict()

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "Measurement":
        return cls(data["kind"], data["metric"], data.get("osd"), float(data["value"]), data["unit"])


def split_key(key: str) -> "tuple":
    kind, metric, who = key.split("/", 2)
    return kind, metric, None if who == "-" else int(who.split(".", 1)[1])
