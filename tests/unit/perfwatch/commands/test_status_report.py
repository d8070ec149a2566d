import json

from perfwatch.commands import output
from perfwatch.commands import status_report as status


def sample(**overrides: object) -> dict:
    args: dict = {
        "version": "0.1.0",
        "mgr_id": "x",
        "active": True,
        "ceph_version": "ceph version 16.2.15",
        "options": {"collect_interval": 30},
        "started_at": 1000.0,
        "loop_passes": 3,
        "last_pass_at": 1050.0,
        "now": 1060.0,
    }
    args.update(overrides)
    return status.build(**args)


def test_status_reports_role_version_uptime_and_options() -> None:
    report = sample()
    assert report["mgr"] == "x"
    assert report["active"] is True
    assert report["version"] == "0.1.0"
    assert report["uptime_seconds"] == 60.0
    assert report["serve_loop"] == {"passes": 3, "last_pass_age_seconds": 10.0}
    assert report["options"] == {"collect_interval": 30}


def test_status_before_the_first_pass() -> None:
    assert sample(loop_passes=0, last_pass_at=None)["serve_loop"]["last_pass_age_seconds"] is None


def test_json_and_plain_renderings() -> None:
    report = sample(active=False)
    assert json.loads(output.render(report, output.OutputFormat.json, status.render_plain)) == report
    pretty = output.render(report, output.OutputFormat.json_pretty, status.render_plain)
    assert pretty.startswith("{\n")
    plain = output.render(report, output.OutputFormat.plain, status.render_plain).splitlines()
    assert "active          no" in plain
    assert "  collect_interval  30" in plain
    assert "  last_pass_age_seconds  10.000" in plain


def test_refused_options_are_shown_plain_and_json() -> None:
    assert sample()["config_errors"] == {}
    assert "config_errors   none" in status.render_plain(sample()).splitlines()
    errors = {"rgw_s3_endpoint": "'ftp://x' is not an http:// or https:// URL", "heavy_bench_window": "bad"}
    report = sample(config_errors=errors)
    assert list(report["config_errors"]) == ["heavy_bench_window", "rgw_s3_endpoint"]
    assert json.loads(output.render(report, output.OutputFormat.json, status.render_plain))["config_errors"] == errors
    plain = status.render_plain(report).splitlines()
    assert "config_errors" in plain
    assert "  rgw_s3_endpoint     'ftp://x' is not an http:// or https:// URL" in plain
