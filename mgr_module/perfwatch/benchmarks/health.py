"""The PERFWATCH_BENCH_REGRESSION health check: its name, its messages, and the check built from the
regressions judging.py raised and the store keeps. Pure."""

from typing import Any, Dict

BENCH_REGRESSION = "PERFWATCH_BENCH_REGRESSION"
BENCH_REGRESSION_SUMMARY = "{count} benchmark result(s) far below baseline{osds}"
BENCH_REGRESSION_DETAIL = "{key}: {value:.6g} {unit} is {reason} (threshold {threshold}; run {run_id})"


def regression_checks(regressions: Dict[str, Dict[str, Any]], threshold: float) -> Dict[str, Dict[str, Any]]:
    """The PERFWATCH_BENCH_REGRESSION check for set_health_checks, or nothing when no result regressed.
    regressions: result key ("kind/metric/osd.N") -> the regression; threshold: the regression_fraction."""
    if not regressions:
        return {}
    detail = [
        BENCH_REGRESSION_DETAIL.format(
            key=key, value=v["value"], unit=v["unit"], reason=v["reason"], threshold=threshold, run_id=v.get("run_id")
        )
        for key, v in sorted(regressions.items())
    ]
    osds = sorted({k.split("/")[2] for k in regressions if k.split("/")[2] != "-"})
    summary = BENCH_REGRESSION_SUMMARY.format(count=len(regressions), osds=": " + ", ".join(osds) if osds else "")
    return {
        BENCH_REGRESSION: {
            "severity": "warning",
            "summary": summary,
            "count": len(regressions),
            "detail": detail,
        }
    }
