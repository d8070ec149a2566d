"""The one benchmark interface: validate parameters, plan, run under a deadline, clean up scratch data.

A kind never talks to Ceph except through the context's adapter and I/O helper, so the runner and the
safety rules are the same for every kind.
"""

import threading
import time
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

from .planning import OsdInfo
from .results import Measurement


class BenchError(Exception):
    """A benchmark could not run or finish; the message says why, for `bench status` and the log."""


class Cancelled(BenchError):
    pass


class ParamSpec(NamedTuple):
    name: str
    default: int
    low: int
    high: int
    help: str


class Context:
    """What a running benchmark gets: who it is, where it may write, and the means to stop."""

    def __init__(
        self,
        run_id: str,
        adapter: Any,
        io_factory: Callable[[str, str], Any],
        params: Dict[str, int],
        osds: List[OsdInfo],
        per_host: int,
        deadline: float,
        cancel: threading.Event,
        progress: Callable[[float, str], None],
        options: Dict[str, Any],
        log: Any,
        register_scratch: Callable[[Dict[str, Any]], None],
        osd_latency_guard: Callable[[List[int]], Optional[str]],
    ) -> None:
        self.run_id = run_id
        self.adapter = adapter
        self.io_factory = io_factory  # (pool, namespace) -> RadosIO
        self.params = params
        self.osds = osds
        self.per_host = per_host
        self.deadline = deadline
        self.cancel = cancel
        self.progress = progress
        self.options = options
        self.log = log
        self.register_scratch = register_scratch
        self.osd_latency_guard = osd_latency_guard
        self.unsettled = False  # set when an op may still land after the run: keep its scratch entry

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def check(self) -> None:
        """Raise if the run must stop now: cancelled, or past its hard deadline."""
        if self.cancel.is_set():
            raise Cancelled("cancelled")
        if self.remaining() <= 0:
            raise BenchError("hard deadline reached")

    def step_timeout(self, wanted: float) -> float:
        return max(0.1, min(wanted, self.remaining()))


class Benchmark:
    name = ""
    heavy = False  # heavy rounds run on command or schedule, pass the guard, one OSD per host at a time
    description = ""
    params: Tuple[ParamSpec, ...] = ()

    def validate(self, params: Dict[str, Optional[int]]) -> Dict[str, int]:
        """Defaults filled in; ValueError naming the limit for anything out of range."""
        known = {p.name: p for p in self.params}
        for name, value in params.items():
            if value is not None and name not in known:
                raise ValueError("{} takes no parameter {!r}".format(self.name, name))
        out = {}
        for spec in self.params:
            value = params.get(spec.name)
            value = spec.default if value is None else int(value)
            if not spec.low <= value <= spec.high:
                raise ValueError(
                    "{} {} is out of range: {} must be between {} and {}".format(
                        spec.name, value, spec.name, spec.low, spec.high
                    )
                )
            out[spec.name] = value
        return out

    def run(self, ctx: Context) -> List[Measurement]:
        raise NotImplementedError

    def cleanup(self, adapter: Any, io_factory: Callable[[str, str], Any], scratch: Dict[str, Any], log: Any) -> None:
        """Remove what a run registered as scratch. Called at the end, on cancel and after a failover."""
