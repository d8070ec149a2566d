"""The one benchmark interface: validate parameters, plan, run under a deadline, clean up scratch data.

A kind never talks to Ceph except through the context's adapter and I/O helper, so the runner and the
safety rules are the same for every kind.
"""

import threading
import time
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

from ..ceph.capacity_view import CapacityView
from ..ceph.seam import OsdInfo
from .engine.probe_coverage import ProbeCoverage
from .lifecycle.capacity import RECHECK_SECONDS, crossed_margin
from .measurement import Measurement

STATS_WAIT_SECONDS = 15.0  # how long a run waits for the OSD figures of a mgr that just became active


class BenchError(Exception):
    """A benchmark could not run or finish; the message says why, for `bench status` and the log."""


class Cancelled(BenchError):
    pass


class OpTimeout(BenchError):
    """A Ceph operation that did not answer in time: it may still land after the run's cleanup."""


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
        pool_creations: Any,
        requested: Optional[Dict[str, Optional[int]]] = None,
        coverage: Optional[ProbeCoverage] = None,
        targeted: bool = False,
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
        self.pool_creations = pool_creations  # the BenchStore's record of scratch pools being created
        self.unsettled = False  # set when an op may still land after the run: keep its scratch entry
        # Set when the run removed every object it wrote itself, none of them unsettled: its scratch entry
        # is dropped without listing the pool (a listing waits while any PG of the pool is not active).
        self.scratch_removed = False
        # The parameters as the user gave them (None: not given). None when the runner does not pass
        # them: then a value other than the default counts as asked for (Benchmark.explicit).
        self.requested = requested
        # Per OSD measured, the acting set of the PG its result came from (the rados probe sets it): whose
        # a slow replicated write is (attribution.py).
        self.acting: Dict[int, List[int]] = {}
        # Per OSD of those acting sets, its own mean commit latency (seconds) while the probe ran
        # (commit_evidence.py): the local evidence of which member is slow.
        self.commit_latency: Dict[int, float] = {}
        # Results as they come in (a kind that measures OSD by OSD adds each): what the history keeps
        # of a run that is interrupted (its mgr died) before it could return them.
        self.measured: List[Measurement] = []
        # When each OSD last had a light probe result: which OSDs a round takes (probe_coverage.py).
        self.coverage = coverage if coverage is not None else ProbeCoverage()
        self.targeted = targeted  # asked for on some OSDs (`--osd`): `osds` holds only those, not the cluster
        # Whether another run writes into the scratch pool now (the lifecycle sets it): not the time to split it.
        self.scratch_busy: Callable[[], bool] = lambda: False

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

    def capacity_view(self) -> CapacityView:
        """Free space of every OSD and pool now; BenchError when the adapter cannot tell (never write blind)."""
        getter = getattr(self.adapter, "capacity_view", None)
        if getter is None:
            raise BenchError("no free-space figures (the adapter has no capacity_view): not writing")
        waited_until = time.monotonic() + min(STATS_WAIT_SECONDS, max(0.0, self.remaining()))
        while True:
            try:
                view = getter()
            except Exception as exc:
                raise BenchError("free space could not be read: {}".format(exc)) from exc
            # A mgr that just became active has no OSD figures until the OSDs report (one stats period).
            if not isinstance(view, CapacityView) or view.osds or time.monotonic() >= waited_until:
                break
            self.check()
            time.sleep(1.0)
        if not isinstance(view, CapacityView):
            raise BenchError("free space could not be read: got {!r}".format(type(view).__name__))
        return view

    def check_capacity(self, kind: "Benchmark") -> CapacityView:
        """The kind's start-time capacity check again, on fresh figures, before it writes anything."""
        view = self.capacity_view()
        try:
            kind.check_capacity(self.osds, self.requested, self.params, self.options, view)
        except ValueError as exc:
            raise BenchError(str(exc)) from exc
        return view

    def space_recheck(self, osds: Callable[[CapacityView], List[int]]) -> Callable[[], None]:
        """For timed rounds: a check that raises BenchError when one of the OSDs (chosen from a fresh
        view) has crossed the nearfull margin; it reads the figures at most every RECHECK_SECONDS."""
        last = [time.monotonic()]

        def recheck() -> None:
            if time.monotonic() - last[0] < RECHECK_SECONDS:
                return
            last[0] = time.monotonic()
            view = self.capacity_view()
            why = crossed_margin(view, osds(view))
            if why:
                raise BenchError("aborted: {}".format(why))

        return recheck


class Benchmark:
    name = ""
    heavy = False  # heavy rounds run on command or schedule, pass the guard, one OSD per host at a time
    description = ""
    params: Tuple[ParamSpec, ...] = ()
    interval_option: Optional[str] = None  # the option setting how often it runs on schedule (None: never)

    def is_heavy(self, params: Dict[str, int]) -> bool:
        """Whether a run with these (validated) parameters is heavy; a kind whose weight depends on its
        parameters overrides this."""
        return self.heavy

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

    def explicit(self, name: str, params: Dict[str, int], requested: Optional[Dict[str, Optional[int]]]) -> bool:
        """Whether the user asked for this parameter's value (so it is refused, not cut, when too big)."""
        if requested is not None:
            return requested.get(name) is not None
        default = {p.name: p.default for p in self.params}.get(name)
        return params.get(name) != default

    def check_capacity(
        self,
        plan: List[OsdInfo],
        requested: Optional[Dict[str, Optional[int]]],
        params: Dict[str, int],
        options: Dict[str, Any],
        view: CapacityView,
    ) -> None:
        """ValueError (capacity.CapacityError) when what this run would write does not fit the free space
        of the OSDs and pools it touches. The runner calls it at start (EINVAL); kinds call it again from
        run() through Context.check_capacity. Kinds that write nothing keep this default."""

    def scope(self, params: Dict[str, int], osds: List[int]) -> str:
        """What a run with these parameters covers, for the operator ("3 OSDs", "the bucket index")."""
        return "{} OSD{}".format(len(osds), "" if len(osds) == 1 else "s")

    def run(self, ctx: Context) -> List[Measurement]:
        raise NotImplementedError

    writes = False  # whether a run writes anything (scratch objects, images, S3 objects)
    scratch_pool = False  # whether it writes into the scratch pool (which must be perfwatch's own)

    def cleanup(
        self,
        adapter: Any,
        io_factory: Callable[[str, str], Any],
        scratch: Dict[str, Any],
        log: Any,
        options: Dict[str, Any],
    ) -> None:
        """Remove what a run registered as scratch. Called at the end, on cancel and after a failover,
        with the options in force then (the S3 probe's endpoint and keys: never stored with the entry)."""

    def recovered_entries(self, run_id: str, options: Dict[str, Any], adapter: Any) -> List[Dict[str, Any]]:
        """The scratch entries a run of this kind with this id may have left, rebuilt from the naming rules
        (everything it writes is named with its run id) when its registration was lost."""
        return []
