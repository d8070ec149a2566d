"""The registry of the exporter's parts: a part's class registers itself under its name, and the
collector builds every registered part for each exporter (as node_exporter's collectors do)."""

from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Set, Tuple, Type, TypeVar

from perfwatch.common.metrics_model import Labels, Sample

if TYPE_CHECKING:  # pragma: no cover
    from ..discovery import Daemon
    from ..procfs import ProcStat

DAEMON = "daemon"  # runs for each daemon reported: daemon(run, daemon, st, base) -> samples
HOST = "host"  # runs once a collection, after every daemon: host(run, labels) -> samples


class Run:
    """One collection as the parts share it: the disks found beneath the OSDs (the device kinds part
    reads what the OSD devices part found), and the parts that failed in it."""

    def __init__(self, started: float, cgroups_readable: bool) -> None:
        self.started = started  # the collector's clock at the collection's start
        self.cgroups_readable = cgroups_readable
        self.disks: Set[str] = set()
        self.failed: Set[str] = set()  # parts that counted an error or raised
        self.seconds: Dict[str, float] = {}  # part -> seconds it took, over every daemon


class Part:
    """One thing the exporter reads. `name` is set by register(); `scope` is DAEMON or HOST."""

    name = ""
    scope = DAEMON

    def __init__(self, collector: Any) -> None:
        # The HostCollector (typed Any: collector.py imports the parts, so they import nothing of it): a part
        # reads its settings, root, sockets, cgroups, osd_map, device_kinds, tc, ip, clk_tck, page_size,
        # net_exclude and errors.
        self.c = collector

    def enabled(self) -> bool:
        """Whether this exporter runs the part (a part behind a flag says so here)."""
        return True

    def daemon(self, run: Run, daemon: "Daemon", st: "ProcStat", base: Labels) -> List[Sample]:
        raise NotImplementedError

    def host(self, run: Run, host: Labels) -> List[Sample]:
        raise NotImplementedError

    def keep_only(self, reported: Set[Tuple[str, str]]) -> None:
        """After a collection: forget what the part keeps of daemons no longer reported ((fsid, label))."""

    def error(self, run: Run, source: str, message: str) -> None:
        """Count an error of the exporter's `source` and mark this part failed in this collection."""
        run.failed.add(self.name)
        self.c.errors(source, message)


P = TypeVar("P", bound=Type[Part])


class PartRegistry:
    """Part classes by name, in the order they registered; a name registers once."""

    def __init__(self) -> None:
        self._parts: Dict[str, Type[Part]] = {}

    def register(self, name: str, scope: str = DAEMON) -> Callable[[P], P]:
        if scope not in (DAEMON, HOST):
            raise ValueError("scope {!r}: expected {!r} or {!r}".format(scope, DAEMON, HOST))

        def add(cls: P) -> P:
            if name in self._parts:
                raise ValueError("part {!r} registered twice".format(name))
            cls.name, cls.scope = name, scope
            self._parts[name] = cls
            return cls

        return add

    def names(self) -> List[str]:
        return list(self._parts)

    def build(self, collector: Any, only: Optional[List[str]] = None) -> List[Part]:
        """An instance of every registered part (or of those named), for one collector."""
        return [cls(collector) for name, cls in self._parts.items() if only is None or name in only]


PARTS = PartRegistry()
