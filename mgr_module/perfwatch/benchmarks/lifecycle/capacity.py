"""How much a benchmark may write, from the free space of the OSDs and pools it touches. Pure.

What a run writes to an OSD is at most OSD_SHARE of that OSD's free bytes, and never brings the OSD past
(nearfull_ratio - NEARFULL_MARGIN) of its size. A request that asks for more is refused with CapacityError
(a ValueError: EINVAL at `bench run`), naming the OSD, its free bytes and the limit; a size the user did not
ask for is cut to the budget. The figures (ceph/capacity_view.py) lag by one stats period (about 5 s),
which the share and the margin absorb. Why: docs/decisions/benchmark-capacity.md.
"""

from typing import Iterable, List, Optional, Tuple

from ...ceph.capacity_view import KIB, CapacityView, OsdSpace

MIB = 1 << 20
GIB = 1 << 30

# At most 5 % of an OSD's free bytes per run: scratch a failed cleanup leaves behind takes many runs to
# matter, the fill ratio moves by at most 5 points (less than nearfull 0.85 to full 0.95), and 95 % of the
# free space stays for BlueFS and RocksDB to grow into.
OSD_SHARE = 0.05
# Never bring an OSD within 5 points of nearfull: used + written <= (nearfull_ratio - 0.05) x size.
NEARFULL_MARGIN = 0.05
# How often timed rounds re-read free space (the mgr's stats period is 5 s by default).
RECHECK_SECONDS = 5.0
# What one 4 KiB rados object is charged: a 4 KiB allocation unit of data plus its onode and
# RocksDB metadata, rounded up generously.
RADOS_OBJECT_COST = 8 * KIB
# Below these the measurement says nothing: refuse rather than write. The osd kind's parameters
# (writes_4k, mib_4m) start here, so a size a run could never use is refused as out of range.
MIN_OSD_BENCH_4K_WRITES = 100
MIN_OSD_BENCH_4M_MIB = 16  # four 4 MiB blocks
MIN_OSD_BENCH_4K_BYTES = MIN_OSD_BENCH_4K_WRITES * 4 * KIB
MIN_OSD_BENCH_4M_BYTES = MIN_OSD_BENCH_4M_MIB * MIB
MIN_RADOS_ROUND_OBJECTS = 64


class CapacityError(ValueError):
    """A run would write more than the free space allows; the message names the OSD and the limit."""


class CapacityUnknown(CapacityError):
    """The free-space figures are not there yet (just after a mgr failover): not now, rather than never."""


# ----- the arithmetic ------------------------------------------------------------------------------


def headroom(space: OsdSpace, nearfull_ratio: float) -> int:
    """Bytes that may still land on the OSD before it reaches (nearfull - margin) of its size."""
    return int((nearfull_ratio - NEARFULL_MARGIN) * space.total) - space.used


def osd_budget(space: OsdSpace, nearfull_ratio: float) -> int:
    """What one run may write to this OSD: OSD_SHARE of its free bytes, within the nearfull margin."""
    return max(0, min(int(OSD_SHARE * space.avail), headroom(space, nearfull_ratio)))


def size_text(n: int) -> str:
    for unit, scale in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if abs(n) >= scale:
            return "{:.1f} {}".format(n / scale, unit)
    return "{} bytes".format(n)


def limit_text(space: OsdSpace, nearfull_ratio: float) -> str:
    """'osd.0 has N bytes (x GiB) free; a benchmark may write at most M bytes (y MiB) to it (...)'."""
    budget = osd_budget(space, nearfull_ratio)
    return (
        "osd.{} has {} bytes ({}) free of {}; a benchmark may write at most {} bytes ({}) to it "
        "({:.0f}% of its free space, and never past (nearfull_ratio {:g} - {:g}) of its size)".format(
            space.osd,
            space.avail,
            size_text(space.avail),
            size_text(space.total),
            budget,
            size_text(budget),
            OSD_SHARE * 100,
            nearfull_ratio,
            NEARFULL_MARGIN,
        )
    )


def space_of(view: CapacityView, osd: int) -> OsdSpace:
    space = view.osds.get(osd)
    if space is None:
        raise CapacityUnknown(
            "no free-space figures for osd.{} yet (not in the mgr's osd_stats): not writing".format(osd)
        )
    return space


def pool_osds(view: CapacityView, pool: str) -> List[int]:
    """The OSDs a pool's writes may land on; every OSD when the pool's PGs are not known yet."""
    found = view.pools.get(pool)
    if found is not None and found.osds:
        return list(found.osds)
    return sorted(view.osds)


def check_nearfull(view: CapacityView, osds: Iterable[int], planned: int, what: str) -> None:
    """Refuse when writing `planned` bytes would bring one of the OSDs past the nearfull margin."""
    for osd in sorted(set(osds)):
        space = space_of(view, osd)
        if planned > headroom(space, view.nearfull_ratio):
            raise CapacityError(
                "{} ({}) refused: {}".format(what, size_text(planned), limit_text(space, view.nearfull_ratio))
            )


def crossed_margin(view: CapacityView, osds: Iterable[int]) -> Optional[str]:
    """During a run: why it must stop, when one of the OSDs is now past the nearfull margin."""
    for osd in sorted(set(osds)):
        space = view.osds.get(osd)
        if space is not None and headroom(space, view.nearfull_ratio) < 0:
            return "osd.{} is past the nearfull margin: {} bytes ({}) used of {}, limit ({:g} - {:g}) of it".format(
                osd, space.used, size_text(space.used), size_text(space.total), view.nearfull_ratio, NEARFULL_MARGIN
            )
    return None


def plan_osd_bench(
    space: OsdSpace,
    nearfull_ratio: float,
    wanted_4k: int,
    explicit_4k: bool,
    wanted_4m: int,
    explicit_4m: bool,
    block_4m: int = 4 * MIB,
) -> Tuple[int, int]:
    """(bytes of the 4 KiB round, bytes of the 4 MiB round) for one OSD, both within its budget together
    (the OSD removes a round's objects after it, but the freed space shows in osd_stats only later).
    Sizes the user asked for are kept or refused; defaults are cut, the 4 KiB round first."""
    budget = osd_budget(space, nearfull_ratio)
    explicit = (wanted_4k if explicit_4k else 0) + (wanted_4m if explicit_4m else 0)
    if explicit > budget:
        asked = [
            "{} {} bytes ({})".format(name, n, size_text(n))
            for name, n, flag in (("writes_4k asks", wanted_4k, explicit_4k), ("mib_4m asks", wanted_4m, explicit_4m))
            if flag
        ]
        raise CapacityError("osd bench refused: {}; {}".format(limit_text(space, nearfull_ratio), " and ".join(asked)))
    left = budget - explicit
    bytes_4k = wanted_4k
    if not explicit_4k:
        bytes_4k = min(wanted_4k, left)
        bytes_4k -= bytes_4k % 4096
        left -= bytes_4k
    bytes_4m = wanted_4m
    if not explicit_4m:
        bytes_4m = min(wanted_4m, left)
        bytes_4m -= bytes_4m % block_4m
    for n, low, name in ((bytes_4k, MIN_OSD_BENCH_4K_BYTES, "4 KiB"), (bytes_4m, MIN_OSD_BENCH_4M_BYTES, "4 MiB")):
        if n < low:
            raise CapacityError(
                "osd bench refused: {}; the {} round needs at least {} bytes ({}) to mean anything".format(
                    limit_text(space, nearfull_ratio), name, low, size_text(low)
                )
            )
    return bytes_4k, bytes_4m


def pool_write_budget(view: CapacityView, pool: str) -> Tuple[int, str]:
    """(client bytes a run may write into the pool, why that much). Each object's replicas land on
    distinct OSDs, so one OSD holds at most one copy of every byte written: the client bytes must fit the
    smallest budget among the pool's OSDs; and at most OSD_SHARE of the pool's max_avail (which already
    divides by the pool's size)."""
    osds = pool_osds(view, pool)
    if not osds:
        raise CapacityUnknown("no free-space figures for any OSD yet: not writing into pool {}".format(pool))
    spaces = [space_of(view, osd) for osd in osds]
    tightest = min(spaces, key=lambda s: (osd_budget(s, view.nearfull_ratio), s.osd))
    budget = osd_budget(tightest, view.nearfull_ratio)
    why = limit_text(tightest, view.nearfull_ratio)
    found = view.pools.get(pool)
    if found is not None and found.max_avail is not None and int(OSD_SHARE * found.max_avail) < budget:
        budget = int(OSD_SHARE * found.max_avail)
        why = "pool {} can take {} bytes ({}) more (max_avail, {} replicas); a run may write {} bytes ({})".format(
            pool, found.max_avail, size_text(found.max_avail), found.size, budget, size_text(budget)
        )
    return budget, why


def replicas(view: CapacityView, pool: str) -> int:
    found = view.pools.get(pool)
    return found.size if found is not None else 1


def rados_max_objects(view: CapacityView, pool: str) -> int:
    """How many new 4 KiB objects a rados round may write into the pool; CapacityError below the minimum."""
    budget, why = pool_write_budget(view, pool)
    count = budget // RADOS_OBJECT_COST
    if count < MIN_RADOS_ROUND_OBJECTS:
        raise CapacityError(
            "rados round refused: {} objects ({} each, x {} replicas) is below the {} a round needs: {}".format(
                count, size_text(RADOS_OBJECT_COST), replicas(view, pool), MIN_RADOS_ROUND_OBJECTS, why
            )
        )
    return count


def rbd_image_mib(view: CapacityView, pool: str, image_mib: int, explicit: bool, low_mib: int) -> int:
    """The scratch image size: as asked when it fits the pool's budget (every block may be written, and
    each OSD may hold a copy of all of it), else refused when asked explicitly, else cut (not below low_mib)."""
    budget, why = pool_write_budget(view, pool)
    if image_mib * MIB <= budget:
        return image_mib
    copies = replicas(view, pool)
    if explicit or budget // MIB < low_mib:
        raise CapacityError(
            "rbd round refused: image_mib {} ({} x {} replicas = {} written at most) does not fit: {}".format(
                image_mib, size_text(image_mib * MIB), copies, size_text(image_mib * MIB * copies), why
            )
        )
    return int(budget // MIB)
