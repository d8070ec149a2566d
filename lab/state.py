"""What the lab has created on this machine, written down as it goes so `down` undoes exactly that."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

from .procs import ProcRef

STATE_FILE = "state.json"


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

    def to_json(self) -> str:
        return json.dumps(
            {
                "fsid": self.fsid,
                "daemons": {k: v.to_dict() for k, v in self.daemons.items()},
                "loops": self.loops,
                "netns": self.netns,
                "links": self.links,
                "knobs": self.knobs,
            },
            indent=2,
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str) -> LabState:
        data = json.loads(text)
        return cls(
            fsid=data.get("fsid", ""),
            daemons={k: ProcRef.from_dict(v) for k, v in data.get("daemons", {}).items()},
            loops=dict(data.get("loops", {})),
            netns=list(data.get("netns", [])),
            links=list(data.get("links", [])),
            knobs=dict(data.get("knobs", {})),
        )

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        tmp = directory / (STATE_FILE + ".tmp")
        tmp.write_text(self.to_json())
        os.replace(tmp, directory / STATE_FILE)

    @classmethod
    def load(cls, directory: Path) -> LabState:
        path = directory / STATE_FILE
        if not path.exists():
            return cls()
        return cls.from_json(path.read_text())
