"""Which OSDs run when, and with what parameters. Pure."""

from typing import Dict, List, NamedTuple, Optional, Tuple

from ...ceph.seam import OsdInfo

MIB = 1 << 20


class BenchLimits(NamedTuple):
    """The OSD's own osd_bench_* safety limits, as read from it."""

    small_size_max_iops: int  # osd_bench_small_size_max_iops
    large_size_max_throughput: int  # osd_bench_large_size_max_throughput, bytes/s
    duration: int  # osd_bench_duration, seconds
    max_block_size: int  # osd_bench_max_block_size, bytes


def batches(osds: List[OsdInfo], wanted: Optional[List[int]], per_host: int) -> List[List[int]]:
    """Rounds of OSDs to run together, with at most `per_host` OSDs of one host in each."""
    if per_host < 1:
        raise ValueError("per_host must be at least 1")
    chosen = [o for o in osds if wanted is None or o.id in wanted]
    queues: Dict[str, List[int]] = {}
    for osd in sorted(chosen, key=lambda o: o.id):
        queues.setdefault(osd.host, []).append(osd.id)
    out: List[List[int]] = []
    while any(queues.values()):
        batch: List[int] = []
        for host in sorted(queues):
            take, queues[host] = queues[host][:per_host], queues[host][per_host:]
            batch.extend(take)
        out.append(sorted(batch))
    return out


def max_bench_bytes(block_size: int, limits: BenchLimits) -> int:
    """What the OSD itself accepts for `ceph tell osd.N bench TOTAL BLOCK` (it refuses more with EINVAL)."""
    if block_size < MIB:
        return block_size * limits.duration * limits.small_size_max_iops
    return limits.large_size_max_throughput * limits.duration


def clamp_osd_bench(total_bytes: int, block_size: int, limits: BenchLimits) -> Tuple[int, int]:
    """(total, block) within the OSD's limits: block must not exceed max_block_size (an error, not a
    clamp: the caller asked for something the OSD forbids); total is cut to what the OSD allows."""
    if block_size <= 0 or block_size > limits.max_block_size:
        raise ValueError(
            "block size {} is outside 1..{} (osd_bench_max_block_size)".format(block_size, limits.max_block_size)
        )
    total = max(block_size, min(total_bytes, max_bench_bytes(block_size, limits)))
    return total - total % block_size, block_size
