"""Which cluster a daemon belongs to, from what the host shows of it: parsers. Pure.

A cluster is named by its fsid, a UUID. The places it shows, most reliable first (clusters.py asks
them in this order): --fsid in the daemon's argv (Rook passes it); cephadm's layout, seen in the
daemon's bind mounts (/var/lib/ceph/<fsid>/<daemon>, /var/run/ceph/<fsid>) and in its systemd unit's
cgroup (ceph-<fsid>@osd.0.service); the daemon's admin socket (`config get fsid`); the daemon's
config file (`fsid` in [global]).
"""

import re
import uuid
from typing import Dict, List, Optional

from .cgroups import Mount, parse_proc_cgroup
from .identity import Identity, expand

_UUID = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
# cephadm: /var/lib/ceph/<fsid>/osd.0 and /var/run/ceph/<fsid> bind-mounted into the container; a
# mount's root is its path in the source filesystem (/lib/ceph/<fsid>/... when /var is a filesystem).
_CEPHADM_DIR = re.compile(r"(?:^|/)ceph/(" + _UUID + r")(?:/|$)")
# cephadm's systemd units: ceph-<fsid>@<daemon>.service (podman puts the container beneath it)
_CEPHADM_UNIT = re.compile(r"(?:^|/)ceph-(" + _UUID + r")@[^/]+\.service(?:/|$)")


def normalise(text: str) -> Optional[str]:
    """The canonical (lower-case, hyphenated) form of an fsid, or None when `text` is not a UUID."""
    text = text.strip()
    if not re.match("^" + _UUID + "$", text):
        return None
    return str(uuid.UUID(text))


def _one(found: List[str]) -> Optional[str]:
    """The fsid when every hit names the same one; None when none or several (ambiguous)."""
    distinct = {str(uuid.UUID(f)) for f in found}
    return distinct.pop() if len(distinct) == 1 else None


def from_mounts(mounts: List[Mount]) -> Optional[str]:
    """cephadm's bind mounts of /var/lib/ceph/<fsid>/... and /var/run/ceph/<fsid> in the daemon's
    /proc/PID/mountinfo."""
    found = []
    for mount in mounts:
        match = _CEPHADM_DIR.search(mount.root)
        if match:
            found.append(match.group(1))
    return _one(found)


def from_cgroup(text: str) -> Optional[str]:
    """The cephadm unit (ceph-<fsid>@<daemon>.service) in the daemon's /proc/PID/cgroup."""
    found = []
    for membership in parse_proc_cgroup(text):
        match = _CEPHADM_UNIT.search(membership.path)
        if match:
            found.append(match.group(1))
    return _one(found)


def from_conf(text: str) -> Optional[str]:
    """`fsid` in the [global] section of a ceph.conf (keys before any section count as global; the
    last one wins, as in Ceph). None when there is none or it is not a UUID."""
    section = "global"
    value: Optional[str] = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            end = line.find("]")
            section = line[1:end].strip() if end > 0 else ""
            continue
        key, sep, rest = line.partition("=")
        if not sep or section != "global":
            continue
        if "".join(key.split()).replace("_", "").replace("-", "").lower() != "fsid":
            continue
        rest = re.split(r"\s[#;]", " " + rest.strip(), maxsplit=1)[0].strip()  # a trailing comment
        value = rest.strip("\"'")
    return normalise(value) if value is not None else None


def parse_environ(raw: bytes) -> Dict[str, str]:
    """/proc/PID/environ: NUL-separated NAME=value."""
    env: Dict[str, str] = {}
    for item in raw.split(b"\0"):
        name, sep, value = item.decode("utf-8", "replace").partition("=")
        if sep and name:
            env[name] = value
    return env


def conf_paths(ident: Identity, environ: Dict[str, str]) -> List[str]:
    """The config files the daemon read, in the order Ceph tries them: -c/--conf (a list, comma or
    space separated), else $CEPH_CONF, else /etc/ceph/$cluster.conf. Only absolute paths: a relative
    one would be relative to the daemon's working directory at start-up, which is not known."""
    if ident.conf:
        listed = ident.conf
    elif environ.get("CEPH_CONF"):
        listed = environ["CEPH_CONF"]
    else:
        listed = "/etc/ceph/$cluster.conf"
    entity_type, _, entity_id = ident.entity.partition(".")
    variables = {"cluster": ident.cluster, "name": ident.entity, "type": entity_type, "id": entity_id}
    paths = [expand(p, variables) for p in re.split(r"[,\s]+", listed) if p]
    return [p for p in paths if p.startswith("/")]
