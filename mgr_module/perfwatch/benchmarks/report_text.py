"""Plain-text renderings of `bench status` and `bench history` for people. Pure."""

import time
from typing import Any, Dict, List

from .measurement import Measurement


def _when(ts: Any) -> str:
    return "-" if not ts else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(ts)))


def _value(m: Measurement) -> str:
    if m.unit == "seconds":
        return "{:.3f} ms".format(m.value * 1000)
    if m.unit == "bytes_per_second":
        return "{:.1f} MiB/s".format(m.value / (1 << 20))
    return "{:.0f} IOPS".format(m.value)


def run_line(run: Dict[str, Any]) -> str:
    line = "{run_id}  {kind:<5} {state:<9} {progress:>4.0%}  started {started}".format(
        run_id=run["run_id"],
        kind=run["kind"],
        state=run["state"],
        progress=run["progress"],
        started=_when(run["started_at"]),
    )
    return line + ("  " + run["message"] if run.get("message") else "")


def status_plain(status: Dict[str, Any]) -> str:
    out = ["running:"] + ["  " + run_line(r) for r in status["running"]] or ["  -"]
    if not status["running"]:
        out.append("  (none)")
    out.append("recent:")
    out.extend("  " + run_line(r) for r in status["recent"])
    if not status["recent"]:
        out.append("  (none)")
    out.append("regressions: " + (", ".join(status["regressions"]) or "none"))
    if status["scratch_pending_cleanup"]:
        out.append("scratch awaiting cleanup: " + ", ".join(status["scratch_pending_cleanup"]))
    return "\n".join(out)


def history_plain(runs: List[Dict[str, Any]]) -> str:
    if not runs:
        return "no benchmark runs recorded"
    out = []
    for run in runs:
        out.append(run_line(run))
        for raw in run.get("results", []):
            m = Measurement.from_dict(raw)
            who = "cluster" if m.osd is None else "osd.{}".format(m.osd)
            out.append("    {:<8} {:<22} {}".format(who, m.metric, _value(m)))
        if run.get("results_omitted"):
            out.append(
                "    ... and {} more results not kept (a kind's history fits one entry of the mgr's store; every "
                "OSD's last result is in the metrics, ceph_perfwatch_bench_*)".format(run["results_omitted"])
            )
    return "\n".join(out)


def schedule_plain(rows: List[Dict[str, Any]]) -> str:
    out = ["{:<6} {:<6} {:>10}  {:<20} {}".format("KIND", "HEAVY", "EVERY", "LAST RUN", "WINDOW")]
    for r in rows:
        every = "on command" if not r["interval"] else "{:.0f} s".format(r["interval"])
        out.append(
            "{:<6} {:<6} {:>10}  {:<20} {}".format(
                r["kind"], "yes" if r["heavy"] else "no", every, _when(r["last_run"]), r["window"] or "-"
            )
        )
    return "\n".join(out)
