"""cephx keys and keyring files, made without ceph-authtool (one process fewer per entity at start-up).

A cephx secret as Ceph encodes it: u16 type (1 = AES), u32 seconds, u32 nanoseconds, u16 length,
then the 16 secret bytes; base64 of that is the `key = ...` line of a keyring.
"""

from __future__ import annotations

import base64
import dataclasses
import os
import struct
import time

CEPH_CRYPTO_AES = 1
SECRET_LEN = 16


def make_key(secret: bytes | None = None, created: float | None = None) -> str:
    secret = os.urandom(SECRET_LEN) if secret is None else secret
    if len(secret) != SECRET_LEN:
        raise ValueError(f"a cephx AES secret is {SECRET_LEN} bytes, got {len(secret)}")
    now = time.time() if created is None else created
    header = struct.pack("<HIIH", CEPH_CRYPTO_AES, int(now), int((now % 1) * 1e9), len(secret))
    return base64.b64encode(header + secret).decode("ascii")


def decode_key(key: str) -> bytes:
    raw = base64.b64decode(key)
    kind, _sec, _nsec, length = struct.unpack("<HIIH", raw[:12])
    if kind != CEPH_CRYPTO_AES or length != len(raw) - 12:
        raise ValueError("not a cephx AES key")
    return raw[12:]


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
