"""Which PG an object lands in, computed locally as the OSD map does it (rjenkins string hash, then
stable_mod by pg_num). With the PG's acting primary from the mgr's PG stats, a probe can name objects
so that every OSD is the primary of one, without a mon round trip per candidate name. Pure."""

from typing import Dict, Iterable, Optional, Tuple

_M = 0xFFFFFFFF


def _mix(a: int, b: int, c: int) -> Tuple[int, int, int]:
    a = (a - b - c) & _M
    a ^= c >> 13
    b = (b - c - a) & _M
    b ^= (a << 8) & _M
    c = (c - a - b) & _M
    c ^= b >> 13
    a = (a - b - c) & _M
    a ^= c >> 12
    b = (b - c - a) & _M
    b ^= (a << 16) & _M
    c = (c - a - b) & _M
    c ^= b >> 5
    a = (a - b - c) & _M
    a ^= c >> 3
    b = (b - c - a) & _M
    b ^= (a << 10) & _M
    c = (c - a - b) & _M
    c ^= b >> 15
    return a, b, c


def rjenkins(data: bytes) -> int:
    """Bob Jenkins' 1996 hash as Ceph uses it for object names (CEPH_STR_HASH_RJENKINS)."""
    a = b = 0x9E3779B9
    c = 0
    k = data
    while len(k) >= 12:
        a = (a + int.from_bytes(k[0:4], "little")) & _M
        b = (b + int.from_bytes(k[4:8], "little")) & _M
        c = (c + int.from_bytes(k[8:12], "little")) & _M
        a, b, c = _mix(a, b, c)
        k = k[12:]
    c = (c + len(data)) & _M
    rest = k + bytes(12 - len(k))
    # The tail: bytes 0-3 to a, 4-7 to b, 8-10 to c shifted past its low byte (which holds the length).
    a = (a + int.from_bytes(rest[0:4], "little")) & _M
    b = (b + int.from_bytes(rest[4:8], "little")) & _M
    c = (c + (int.from_bytes(rest[8:11], "little") << 8)) & _M
    return _mix(a, b, c)[2]


def object_hash(name: str, namespace: str = "") -> int:
    key = name if not namespace else namespace + "\037" + name
    return rjenkins(key.encode("utf-8"))


def stable_mod(x: int, b: int, bmask: int) -> int:
    return x & bmask if (x & bmask) < b else x & (bmask >> 1)


def pg_of(name: str, namespace: str, pg_num: int) -> int:
    """The placement seed (the PG number within its pool) of an object."""
    mask = (1 << (pg_num - 1).bit_length()) - 1
    return stable_mod(object_hash(name, namespace), pg_num, mask)


def names_per_primary(
    osd_ids: Iterable[int],
    primaries: Dict[int, int],
    pg_num: int,
    namespace: str,
    prefix: str,
    max_tries: Optional[int] = None,
) -> Dict[int, Optional[str]]:
    """For each OSD, a name `<prefix>.<k>` whose PG it is acting primary of (None if no PG, or none found).

    primaries maps PG number -> acting primary OSD. One pass over the candidate names serves every OSD
    at once: an OSD that is the primary of one PG in P is hit every P names or so, so a round of 1,000
    OSDs over 16,384 PGs costs about 16,384 x ln(1,000) hashes (under a second), not 4,096 per OSD that
    mostly miss. max_tries bounds the pass (default 8 x pg_num + 4,096: an OSD with one PG goes without
    a name with a chance of e^-8).
    """
    wanted = set(osd_ids)
    out: Dict[int, Optional[str]] = dict.fromkeys(wanted)
    left = wanted & set(primaries.values())
    tries = max_tries if max_tries is not None else 8 * max(1, pg_num) + 4096
    for k in range(tries):
        if not left:
            break
        name = "{}.{}".format(prefix, k)
        osd = primaries.get(pg_of(name, namespace, pg_num))
        if osd in left:
            out[osd] = name
            left.discard(osd)
    return out
