"""The RGW's objecter counters that count bucket-index work. Pure.

They are priority 0, so neither the mgr nor ceph-exporter ever sees them; only the RGW's admin socket
has them. A Pacific RGW runs more than one objecter (one per RADOS handle): its perf dump has an
"objecter" logger and others named "objecter-0x<address>", and the bucket-index calls are spread over
them, so we add them up.
"""

import math
from typing import Any, Dict, Tuple

# (our op label, the objecter counter)
OPS: Tuple[Tuple[str, str], ...] = (
    ("call", "osdop_call"),  # cls calls: cls_rgw bucket-index operations among them
    ("omap_rd", "omap_rd"),
    ("omap_wr", "omap_wr"),
    ("omap_del", "omap_del"),
)


def objecter_ops(dump: Dict[str, Any]) -> Dict[str, float]:
    """Sums over every objecter logger in a `perf dump`; ops no logger has are left out."""
    totals: Dict[str, float] = {}
    for logger_name, logger in dump.items():
        if not (logger_name == "objecter" or logger_name.startswith("objecter-")) or not isinstance(logger, dict):
            continue
        for op, counter in OPS:
            value = logger.get(counter)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                try:
                    number = float(value)
                except OverflowError:  # an integer no float holds (valid JSON): no count
                    continue
                if math.isfinite(number):
                    totals[op] = totals.get(op, 0.0) + number
    return totals
