"""A stretch of cluster tests that saturate the lab on purpose, with what they need around them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from lab.load import POOL as LOAD_POOL

from .labutil import LabHandle, run_lab

PROBES = ("rados_probe_interval", "rgw_probe_interval", "net_probe_interval")
WARM_PATTERNS = ("small-random-write", "large-read")


@contextmanager
def saturating(lab: LabHandle, what: str) -> Iterator[LabHandle]:
    """perfwatch's light probes paused (they would, rightly, record the knobs' slowness as regressions and
    raise PERFWATCH_BENCH_REGRESSION for later tests) and the load images made (the first load of a pattern
    creates the pool and image and fills the one for reads), so that measured windows are all load. After:
    every knob cleared, the load pool removed (its images hold about 640 MiB on every OSD), the baselines
    reset as an operator would after a deliberate change, the probes back, HEALTH_OK."""
    saved = {o: lab.ceph("config", "get", "mgr", f"mgr/perfwatch/{o}", as_json=False).strip() for o in PROBES}
    for option in PROBES:
        lab.ceph("config", "set", "mgr", f"mgr/perfwatch/{option}", "0", as_json=False)
    for pattern in WARM_PATTERNS:
        warm = run_lab(lab.dir, "load", "--pattern", pattern, "--seconds", "2")
        assert warm.returncode == 0, warm.stderr
    yield lab
    cleared = run_lab(lab.dir, "clear")
    assert cleared.returncode == 0, cleared.stderr
    lab.ceph("osd", "pool", "rm", LOAD_POOL, LOAD_POOL, "--yes-i-really-really-mean-it", as_json=False)
    lab.ceph("perfwatch", "bench", "reset-baseline", as_json=False)
    for option, value in saved.items():
        lab.ceph("config", "set", "mgr", f"mgr/perfwatch/{option}", value, as_json=False)
    lab.wait_healthy(90, f"HEALTH_OK after {what}")
