"""One benchmark run as the runner tracks it: its id, parameters, state and results."""

import binascii
import os
import threading
import time
from typing import Any, Dict, List, Optional

from .measurement import Measurement


def new_run_id(kind: str, now: float) -> str:
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now))
    return "{}-{}-{}".format(kind, stamp, binascii.hexlify(os.urandom(2)).decode())


class Run:
    def __init__(
        self, run_id: str, kind: str, heavy: bool, params: Dict[str, int], osds: List[int], trigger: str
    ) -> None:
        self.run_id = run_id
        self.kind = kind
        self.heavy = heavy
        self.params = params
        self.osds = osds
        self.trigger = trigger
        self.state = "running"
        self.message = ""
        self.progress = 0.0
        self.started_at = time.time()
        self.ended_at: Optional[float] = None
        self.measurements: List[Measurement] = []
        self.acting: Dict[int, List[int]] = {}  # OSD measured -> the acting set of its PG (Context.acting)
        self.commit_latency: Dict[int, float] = {}  # OSD -> its mean commit latency during the run (Context)
        self.scope = ""  # what it covers, in words: "3 OSDs", "the bucket index"
        self.requested: Dict[str, Optional[int]] = {}  # the parameters as asked (None: not given)
        self.targeted = False  # asked for on some OSDs only (osds: those), not on the whole cluster
        self.cancel = threading.Event()
        self.thread: Optional[threading.Thread] = None

    def to_dict(self, with_results: bool = True) -> Dict[str, Any]:
        out: Dict[str, Any] = {
            "run_id": self.run_id,
            "kind": self.kind,
            "heavy": self.heavy,
            "trigger": self.trigger,
            "params": self.params,
            "osds": self.osds,
            "scope": self.scope,
            "state": self.state,
            "message": self.message,
            "progress": round(self.progress, 3),
            "started_at": round(self.started_at, 3),
            "ended_at": None if self.ended_at is None else round(self.ended_at, 3),
        }
        if with_results:
            out["results"] = [m.to_dict() for m in self.measurements]
        return out
