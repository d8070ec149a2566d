"""The PERFWATCH_BENCH_REGRESSION health check: its name, its messages, and the check built from the
regressions judging/regressions.py raised and the store keeps. Pure."""

from typing import Any, Dict

BENCH_REGRESSION = "PERFWATCH_BENCH_REGRESSION"
BENCH_REGRESSION_SUMMARY = "{count} benchmark result(s) far below baseline{osds}"
BENCH_REGRESSION_DETAIL = "{key}: {value:.6g} {unit} is {reason} (threshold {threshold}; run {run_id})"
# A check travels to the mons with every report and lands in `ceph health detail`: a network event can regress
# the net probe of every OSD (20,000 results at 10,000 OSDs), so it names at most these, and counts the rest.
DETAIL_MAX = 50
SUMMARY_OSDS_MAX = 20


def regression_checks(regressions: Dict[str, Dict[str, Any]], threshold: float) -> Dict[str, Dict[str, Any]]:
    """The PERFWATCH_BENCH_REGRESSION check for set_health_checks, or nothing when no result regressed.
    regressions: result key ("kind/metric/osd.N") -> the regression; threshold: the regression_fraction."""
    if not regressions:
        return {}
    detail = [
        BENCH_REGRESSION_DETAIL.format(
            key=key, value=v["value"], unit=v["unit"], reason=v["reason"], threshold=threshold, run_id=v.get("run_id")
        )
        for key, v in sorted(regressions.items())[:DETAIL_MAX]
    ]
    if len(regressions) > DETAIL_MAX:
        detail.append("... and {} more (ceph perfwatch bench status)".format(len(regressions) - DETAIL_MAX))
    osds = sorted({k.split("/")[2] for k in regressions if k.split("/")[2] != "-"}, key=_osd_order)
    named = ", ".join(osds[:SUMMARY_OSDS_MAX])
    if len(osds) > SUMMARY_OSDS_MAX:
        named += " and {} more OSDs".format(len(osds) - SUMMARY_OSDS_MAX)
    summary = BENCH_REGRESSION_SUMMARY.format(count=len(regressions), osds=": " + named if osds else "")
    return {
        BENCH_REGRESSION: {
            "severity": "warning",
            "summary": summary,
            "count": len(regressions),
            "detail": detail,
        }
    }


def _osd_order(name: str) -> Any:
    """osd.2 before osd.10."""
    number = name.split(".", 1)[-1]
    return (0, int(number)) if number.isdigit() else (1, name)
