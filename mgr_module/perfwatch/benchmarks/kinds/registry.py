"""The benchmark kinds this perfwatch knows, by name: the registry the runner is handed."""

from typing import Dict

from ..base import Benchmark
from .net import NetPing
from .osd import OsdBench
from .rados import RadosLatency
from .rbd import RbdIO
from .rgw import RgwIndex


def registry(*kinds: Benchmark) -> Dict[str, Benchmark]:
    """Name -> kind; ValueError when two kinds share a name."""
    out: Dict[str, Benchmark] = {}
    for kind in kinds:
        if not kind.name or kind.name in out:
            raise ValueError("benchmark kind name {!r} is empty or taken".format(kind.name))
        out[kind.name] = kind
    return out


KINDS = registry(OsdBench(), RadosLatency(), RbdIO(), RgwIndex(), NetPing())
