"""What each `ceph perfwatch bench ...` command does with the Runner and answers, as (return code, stdout,
stderr); bench.py declares them to the mgr and hands them the runner."""

import errno
from typing import Any, Dict, List, Optional, Tuple

from ..benchmarks import report_text
from ..benchmarks.lifecycle.run_control import Refused
from ..benchmarks.runner import Runner
from .output import OutputFormat, render

Result = Tuple[int, str, str]


def not_ready() -> Result:
    return -errno.EAGAIN, "", "perfwatch is starting; try again in a few seconds"


def run(
    runner: Runner, kind: str, osds: Optional[List[int]], params: Dict[str, Optional[int]], fmt: OutputFormat
) -> Result:
    try:
        started = runner.start(kind, osds, params)
    except ValueError as exc:
        return -errno.EINVAL, "", str(exc)
    except Refused as exc:
        return -errno.EBUSY, "", str(exc)
    data = started.to_dict(with_results=False)
    return (
        0,
        render(
            data,
            fmt,
            lambda d: "started {} ({} on {}); follow it with `ceph perfwatch bench status`".format(
                d["run_id"], d["kind"], d["scope"]
            ),
        ),
        "",
    )


def status(runner: Runner, fmt: OutputFormat) -> Result:
    return 0, render(runner.status(), fmt, report_text.status_plain), ""


def cancel(runner: Runner, run_id: Optional[str], fmt: OutputFormat) -> Result:
    try:
        cancelled = runner.cancel(run_id)
    except ValueError as exc:
        return -errno.ENOENT, "", str(exc)
    stopped = runner.wait(cancelled, timeout=5.0)
    data: Dict[str, Any] = {"cancelled": cancelled, "stopped": stopped}
    text = (
        "nothing running"
        if not cancelled
        else "cancelled {}{}".format(", ".join(cancelled), "" if stopped else " (still stopping)")
    )
    return 0, render(data, fmt, lambda _d: text), ""


def history(runner: Runner, kind: Optional[str], osd: Optional[int], limit: int, fmt: OutputFormat) -> Result:
    if kind is not None and kind not in runner.kinds:
        return -errno.EINVAL, "", "unknown kind {!r}; kinds: {}".format(kind, ", ".join(sorted(runner.kinds)))
    if not 1 <= limit <= 1000:
        return -errno.EINVAL, "", "limit {} is out of range: limit must be between 1 and 1000".format(limit)
    return 0, render(runner.history(kind, osd, limit), fmt, report_text.history_plain), ""


def reset_baseline(runner: Runner, kind: Optional[str], osd: Optional[int], fmt: OutputFormat) -> Result:
    if kind is not None and kind not in runner.kinds:
        return -errno.EINVAL, "", "unknown kind {!r}; kinds: {}".format(kind, ", ".join(sorted(runner.kinds)))
    forgotten = runner.reset_baselines(kind, osd)
    return 0, render(forgotten, fmt, lambda keys: "forgot {} baseline(s)".format(len(keys))), ""


def schedule(runner: Runner, fmt: OutputFormat) -> Result:
    return 0, render(runner.schedule(), fmt, report_text.schedule_plain), ""
