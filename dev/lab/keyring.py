"""cephx keys and keyring files, made without ceph-authtool (one process fewer per entity at start-up).

A cephx secret as Ceph encodes it: u16 type, u32 seconds, u32 nanoseconds, u16 length, then the secret
bytes; base64 of that is the `key = ...` line of a keyring. Type 1 (`aes`) has 16 bytes; Tentacle's
default type 2 (`aes256k`) has 32. The lab asks the release's own ceph-authtool for one key and makes
the others of the same type and length (bootstrap.key_format).
"""

from __future__ import annotations

import base64
import dataclasses
import os
import struct
import time

CEPH_CRYPTO_AES = 1
SECRET_LEN = 16
HEADER_LEN = 12


@dataclasses.dataclass(frozen=True)
class KeyFormat:
    kind: int  # 1: aes, 2: aes256k
    length: int  # secret bytes


AES = KeyFormat(CEPH_CRYPTO_AES, SECRET_LEN)
KNOWN_TYPES = (1, 2)  # aes, aes256k: what the lab knows how to mint (random secret bytes of the length)


def make_key(fmt: KeyFormat = AES, secret: bytes | None = None, created: float | None = None) -> str:
    secret = os.urandom(fmt.length) if secret is None else secret
    if len(secret) != fmt.length:
        raise ValueError(f"a cephx type-{fmt.kind} secret is {fmt.length} bytes, got {len(secret)}")
    now = time.time() if created is None else created
    header = struct.pack("<HIIH", fmt.kind, int(now), int((now % 1) * 1e9), len(secret))
    return base64.b64encode(header + secret).decode("ascii")


def _unpack(key: str) -> tuple[KeyFormat, bytes]:
    try:
        raw = base64.b64decode(key, validate=True)
        kind, _sec, _nsec, length = struct.unpack("<HIIH", raw[:HEADER_LEN])
    except (ValueError, struct.error) as exc:
        raise ValueError(f"not a cephx key: {key!r}") from exc
    if kind not in KNOWN_TYPES or length < 16 or length != len(raw) - HEADER_LEN:
        raise ValueError(f"not a cephx key (type {kind}, {length} of {len(raw) - HEADER_LEN} secret bytes)")
    return KeyFormat(kind, length), raw[HEADER_LEN:]


def key_format(key: str) -> KeyFormat:
    """The type and secret length of a key (e.g. one ceph-authtool printed)."""
    return _unpack(key)[0]


def decode_key(key: str) -> bytes:
    return _unpack(key)[1]


@dataclasses.dataclass(frozen=True)
class Entity:
    name: str  # "client.admin", "mgr.x", "osd.0", "mon."
    key: str
    caps: tuple[tuple[str, str], ...] = ()


def render(entities: list[Entity]) -> str:
    lines: list[str] = []
    for entity in entities:
        lines.append(f"[{entity.name}]")
        lines.append(f"\tkey = {entity.key}")
        for service, cap in entity.caps:
            lines.append(f'\tcaps {service} = "{cap}"')
    return "\n".join(lines) + "\n"


ADMIN_CAPS = (("mon", "allow *"), ("osd", "allow *"), ("mgr", "allow *"), ("mds", "allow *"))
MGR_CAPS = (("mon", "allow profile mgr"), ("osd", "allow *"), ("mds", "allow *"))
OSD_CAPS = (("mon", "allow profile osd"), ("mgr", "allow profile osd"), ("osd", "allow *"))
RGW_CAPS = (("mon", "allow rw"), ("osd", "allow rwx"), ("mgr", "allow rw"))
MON_CAPS = (("mon", "allow *"),)


def caps_for(name: str) -> tuple[tuple[str, str], ...]:
    kind = name.split(".", 1)[0]
    if name == "mon.":
        return MON_CAPS
    if name == "client.admin":
        return ADMIN_CAPS
    if kind == "mgr":
        return MGR_CAPS
    if kind == "osd":
        return OSD_CAPS
    if name.startswith("client.rgw."):
        return RGW_CAPS
    raise ValueError(f"no caps defined for {name}")
