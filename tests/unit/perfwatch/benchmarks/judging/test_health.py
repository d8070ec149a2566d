"""mgr_module/perfwatch/benchmarks/judging/health.py: the PERFWATCH_BENCH_REGRESSION check raised from the stored
regressions."""

from perfwatch.benchmarks.judging import health


def test_no_regression_raises_nothing() -> None:
    assert health.regression_checks({}, 0.5) == {}


def test_the_check_names_the_osds_and_details_each_result() -> None:
    regressions = {
        "osd/write_iops_4k/osd.3": {"value": 123.456789, "unit": "iops", "reason": "below baseline", "run_id": "osd-1"},
        "rbd/read_iops_4k/-": {"value": 10.0, "unit": "iops", "reason": "below peers"},
        "osd/write_iops_4k/osd.1": {"value": 5.0, "unit": "iops", "reason": "below baseline", "run_id": "osd-1"},
    }
    check = health.regression_checks(regressions, 0.5)[health.BENCH_REGRESSION]
    assert health.BENCH_REGRESSION == "PERFWATCH_BENCH_REGRESSION"
    assert check["severity"] == "warning" and check["count"] == 3
    assert check["summary"] == "3 benchmark result(s) far below baseline: osd.1, osd.3"
    assert check["detail"] == [
        "osd/write_iops_4k/osd.1: 5 iops is below baseline (threshold 0.5; run osd-1)",
        "osd/write_iops_4k/osd.3: 123.457 iops is below baseline (threshold 0.5; run osd-1)",
        "rbd/read_iops_4k/-: 10 iops is below peers (threshold 0.5; run None)",
    ]


def test_a_cluster_wide_regression_names_no_osd() -> None:
    check = health.regression_checks({"rgw/put_latency/-": {"value": 0.2, "unit": "seconds", "reason": "x"}}, 0.5)
    assert check[health.BENCH_REGRESSION]["summary"] == "1 benchmark result(s) far below baseline"


def test_a_regression_of_every_osd_is_named_within_bounds() -> None:
    """A network event can regress the net probe of every OSD: 20,000 results at 10,000 OSDs. The check
    (sent to the mons with every report, shown by `ceph health detail`) names the first ones and counts
    the rest."""
    regression = {"value": 0.2, "unit": "seconds", "reason": "3.00x its own baseline", "run_id": "net-1"}
    regressions = {f"net/ping_{s}/osd.{osd}": regression for s in ("back", "front") for osd in range(10_000)}
    check = health.regression_checks(regressions, 0.5)[health.BENCH_REGRESSION]
    assert check["count"] == 20_000
    assert len(check["detail"]) == health.DETAIL_MAX + 1
    assert check["detail"][-1] == f"... and {20_000 - health.DETAIL_MAX} more (ceph perfwatch bench status)"
    names = ", ".join(f"osd.{i}" for i in range(health.SUMMARY_OSDS_MAX))
    assert check["summary"] == f"20000 benchmark result(s) far below baseline: {names} and 9980 more OSDs"
    assert len(check["summary"]) + sum(len(line) for line in check["detail"]) < 10_000
