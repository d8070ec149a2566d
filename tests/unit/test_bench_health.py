"""benchmarks/health.py: the PERFWATCH_BENCH_REGRESSION check raised from the stored regressions."""

from perfwatch.benchmarks import health


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
