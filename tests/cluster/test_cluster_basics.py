"""The session lab: healthy, RGW answering, perfwatch enabled and answering from the active mgr."""

from __future__ import annotations

import subprocess
import urllib.request
import xml.etree.ElementTree as ET

import pytest

from lab import cephcli, releases
from lab.cephcli import CephCommandError
from perfwatch.common.version import __version__

from .conftest import RELEASE
from .labutil import LabHandle, wait_until

pytestmark = pytest.mark.every_release  # what differs between Ceph releases

S3_NS = "{http://s3.amazonaws.com/doc/2006-03-01/}"


def test_health_ok_with_all_osds_up_and_in(lab: LabHandle) -> None:
    health = lab.ceph("health", "detail")
    assert health["status"] == "HEALTH_OK", {name: check["summary"] for name, check in health["checks"].items()}
    stat = lab.ceph("osd", "stat")
    assert (stat["num_osds"], stat["num_up_osds"], stat["num_in_osds"]) == (3, 3, 3)
    summary = lab.ceph("pg", "stat")["pg_summary"]
    assert [s["name"] for s in summary["num_pg_by_state"]] == ["active+clean"]


def test_every_daemon_and_the_cli_run_the_release_asked_for(lab: LabHandle) -> None:
    release = releases.resolve(RELEASE)
    prefix = f"ceph version {release.series}."
    versions = lab.ceph("versions")
    for kind in ("mon", "mgr", "osd", "rgw"):
        assert versions[kind] and all(v.startswith(prefix) and release.name in v for v in versions[kind]), versions
    cli = subprocess.run(
        [cephcli.tool(lab.conf, "ceph"), "--version"], capture_output=True, text=True, check=True, timeout=30
    )
    assert cli.stdout.startswith(prefix)  # the CLI the lab's wrappers (or the machine) give is that release's
    status = lab.lab.status()
    assert status["release"] == release.name and status["ceph_version"].startswith(release.series + ".")
    assert bool(status["rootfs"]) == release.from_rootfs
    if release.from_rootfs:
        assert status["mount_namespace"]["running"] is True


def test_two_mgrs_one_active_one_standby(lab: LabHandle) -> None:
    stat = lab.ceph("mgr", "stat")
    assert stat["available"] is True
    assert stat["active_name"] in lab.lab.config.mgrs
    assert stat["num_standby"] == 1


def test_rgw_answers_an_anonymous_s3_list_buckets(lab: LabHandle) -> None:
    with urllib.request.urlopen(lab.lab.rgw_url(), timeout=10) as resp:
        assert resp.status == 200
        root = ET.fromstring(resp.read())
    assert root.tag == f"{S3_NS}ListAllMyBucketsResult"
    assert root.findtext(f"{S3_NS}Owner/{S3_NS}ID") == "anonymous"


def test_perfwatch_is_enabled(lab: LabHandle) -> None:
    assert "perfwatch" in lab.ceph("mgr", "module", "ls")["enabled_modules"]


def test_status_answers_from_the_active_mgr(lab: LabHandle) -> None:
    active = lab.ceph("mgr", "stat")["active_name"]
    status = lab.ceph("perfwatch", "status")
    assert status["module"] == "perfwatch"
    assert status["version"] == __version__
    assert status["mgr"] == active
    assert status["active"] is True
    assert status["ceph_version"].startswith("ceph version ")
    # the lab's module folder links this checkout's module (the mgr sees the link's path)
    assert status["loaded_from"] == str(lab.dir / "mgr-modules" / "perfwatch")
    configured = lab.ceph("config", "get", "mgr", "mgr/perfwatch/collect_interval", as_json=False).strip()
    assert status["options"]["collect_interval"] == int(configured)  # the lab sets 10 for its rules
    assert status["serve_loop"]["passes"] >= 1


def test_status_plain_text_is_readable(lab: LabHandle) -> None:
    text = lab.ceph("perfwatch", "status", as_json=False)
    assert "version" in text and __version__ in text
    assert "collect_interval" in text


def test_option_changes_show_in_status_and_bad_values_are_refused(lab: LabHandle) -> None:
    key = "mgr/perfwatch/collect_interval"
    saved = lab.ceph("config", "get", "mgr", key, as_json=False).strip()  # the lab's own setting
    try:
        lab.ceph("config", "set", "mgr", key, "15", as_json=False)
        wait_until(
            lambda: lab.ceph("perfwatch", "status")["options"]["collect_interval"] == 15,
            30,
            "collect_interval 15 in status",
        )
        for bad, why in (("1", "below minimum 5"), ("abc", "error parsing value")):
            with pytest.raises(CephCommandError) as refused:
                lab.ceph("config", "set", "mgr", key, bad, as_json=False)
            assert "EINVAL" in refused.value.stderr and why in refused.value.stderr
        assert lab.ceph("perfwatch", "status")["options"]["collect_interval"] == 15
    finally:
        lab.ceph("config", "set", "mgr", key, saved, as_json=False)
    wait_until(
        lambda: lab.ceph("perfwatch", "status")["options"]["collect_interval"] == int(saved),
        30,
        "collect_interval back to the lab's setting",
    )
