"""What the lab has created on this machine, written down as it goes so `down` undoes exactly that.

state.json carries its version: {"version": 1, ...}. A file without one (written before versioning) is
read as version 1. A newer version, or a file this code cannot read, is an error that names the file
and says what to do: the lab never guesses which processes it started.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any, NoReturn

from .config import LabError
from .procs import ProcRef, read_stat

STATE_FILE = "state.json"
# 2: a lab may run its Ceph from a rootfs, in a mount namespace (mount_ns) an older `down` would not stop
STATE_VERSION = 2


class StateUnreadable(LabError):
    """state.json is of a newer version or broken; the message names the file and what to do."""


def _check(data: dict[str, Any]) -> None:
    """Raise ValueError naming the first field of the wrong shape."""

    def fail(field: str, wanted: str) -> NoReturn:
        raise ValueError(f"{field!r} is not {wanted}")

    def is_text_list(value: Any) -> bool:
        return isinstance(value, list) and all(isinstance(v, str) for v in value)

    if not isinstance(data.get("fsid", ""), str):
        fail("fsid", "a string")
    daemons = data.get("daemons", {})
    if not isinstance(daemons, dict):
        fail("daemons", "an object")
    for name, ref in daemons.items():
        if not (
            isinstance(ref, dict)
            and all(type(ref.get(f)) is int for f in ("pid", "start_ticks"))
            and ref["pid"] > 0
            and ref["start_ticks"] >= 0
        ):
            fail(f"daemons.{name}", 'a {"pid": <int>, "start_ticks": <int>} object')
    loops = data.get("loops", {})
    if not isinstance(loops, dict) or not all(isinstance(v, str) for v in loops.values()):
        fail("loops", "an object of device paths")
    for field in ("netns", "links"):
        if not is_text_list(data.get(field, [])):
            fail(field, "a list of names")
    knobs = data.get("knobs", {})
    if not isinstance(knobs, dict) or not all(isinstance(v, dict) for v in knobs.values()):
        fail("knobs", "an object of objects")
    for field in ("ceph_version", "rootfs"):
        if not isinstance(data.get(field, ""), str):
            fail(field, "a string")
    holder = data.get("mount_ns")
    if holder is not None and not (
        isinstance(holder, dict) and all(type(holder.get(f)) is int for f in ("pid", "start_ticks"))
    ):
        fail("mount_ns", 'null or a {"pid": <int>, "start_ticks": <int>} object')


@dataclasses.dataclass
class LabState:
    fsid: str = ""
    # "mon.a", "osd.0", ... -> the process we started
    daemons: dict[str, ProcRef] = dataclasses.field(default_factory=dict)
    loops: dict[str, str] = dataclasses.field(default_factory=dict)  # osd id -> /dev/loopN
    netns: list[str] = dataclasses.field(default_factory=list)
    links: list[str] = dataclasses.field(default_factory=list)  # root-namespace links we created
    # "cpu:osd.1", "network:pwlab-host2", ... -> what the knob set, and what undoing it needs
    knobs: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    ceph_version: str = ""  # the exact Ceph version the lab runs ("18.2.7+ds-1")
    rootfs: str = ""  # the rootfs its Ceph runs from; "": this machine's packages
    mount_ns: ProcRef | None = None  # the process holding the rootfs's mount namespace (mountns.py)

    def to_json(self) -> str:
        return json.dumps(
            {
                "version": STATE_VERSION,
                "fsid": self.fsid,
                "daemons": {k: v.to_dict() for k, v in self.daemons.items()},
                "loops": self.loops,
                "netns": self.netns,
                "links": self.links,
                "knobs": self.knobs,
                "ceph_version": self.ceph_version,
                "rootfs": self.rootfs,
                "mount_ns": None if self.mount_ns is None else self.mount_ns.to_dict(),
            },
            indent=2,
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str) -> LabState:
        """Raises ValueError for a file that is not a lab state, StateUnreadable for a newer version."""
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError(f"a JSON {type(data).__name__}, not an object")
        version = data.get("version", 1)  # no version: written before versioning, version 1
        if type(version) is not int or version < 1:
            raise ValueError(f"version {version!r} is not a version number")
        if version > STATE_VERSION:
            raise StateUnreadable(f"written by a newer lab (state version {version}; this one reads {STATE_VERSION})")
        _check(data)
        return cls(
            fsid=data.get("fsid", ""),
            daemons={k: ProcRef.from_dict(v) for k, v in data.get("daemons", {}).items()},
            loops=dict(data.get("loops", {})),
            netns=list(data.get("netns", [])),
            links=list(data.get("links", [])),
            knobs=dict(data.get("knobs", {})),
            ceph_version=data.get("ceph_version", ""),
            rootfs=data.get("rootfs", ""),
            mount_ns=None if data.get("mount_ns") is None else ProcRef.from_dict(data["mount_ns"]),
        )

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        tmp = directory / (STATE_FILE + ".tmp")
        tmp.write_text(self.to_json())
        os.replace(tmp, directory / STATE_FILE)

    @classmethod
    def load(cls, directory: Path) -> LabState:
        """The state in `directory` (empty when there is none); StateUnreadable when it cannot be read."""
        path = directory / STATE_FILE
        if not path.exists():
            return cls()
        try:
            return cls.from_json(path.read_text())
        except StateUnreadable as exc:
            raise StateUnreadable(
                f"{path} was {exc}: run `python3 -m lab --dir {directory} down` with the checkout that "
                "started this lab. This one does not guess which processes, devices and namespaces it holds"
            ) from exc
        except (OSError, ValueError) as exc:  # UnicodeDecodeError and json's errors are ValueErrors
            raise StateUnreadable(
                f"{path} is unreadable ({exc}), so the lab cannot tell which processes it started and does "
                f"not guess. Stop them by hand (their command lines name {directory}: `ps -ef | grep "
                f"{directory}`), detach loop devices over its images (`losetup -j {directory / 'devices'}"
                "/osd.N.img`) and delete its network namespaces and links (named after the lab's name in lab.json: "
                "`ip netns list`, `ip link`); then move the file away "
                f"(`mv {path} {path}.bad`) and run `python3 -m lab --dir {directory} down` to remove the rest"
            ) from exc


def record_process(directory: Path, name: str, pid: int) -> None:
    """A helper process (a load) recorded like a daemon in the state of the lab in `directory`, so `down`
    stops it if its owner cannot. The state is read afresh: another command may have changed it meanwhile."""
    stat = read_stat(pid)
    if stat is not None:
        state = LabState.load(directory)
        state.daemons[name] = ProcRef(pid, stat[1])
        state.save(directory)


def forget_process(directory: Path, name: str) -> None:
    """Remove a helper process's record (it has ended) from the state of the lab in `directory`."""
    state = LabState.load(directory)
    if state.daemons.pop(name, None) is not None:
        state.save(directory)
