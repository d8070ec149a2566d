"""The per-host exporters and node_exporters the lab runs, against the real daemons of the session lab."""

from __future__ import annotations

import contextlib
import subprocess
import urllib.request

from .labutil import LabHandle, s3_client
from .scrape import scrape


def test_each_daemon_is_reported_once_by_the_exporter_of_its_host(lab: LabHandle) -> None:
    handle = lab.lab
    seen: dict[str, str] = {}
    for name, url in handle.exporter_urls().items():
        if not name.startswith("exporter."):
            continue
        result = scrape(url)
        for labels, value in result.find("ceph_perfwatch_daemon_resident_memory_bytes"):
            assert labels["ceph_daemon"] not in seen, f"{labels['ceph_daemon']} reported by two exporters"
            seen[labels["ceph_daemon"]] = labels["hostname"]
            assert value > 10 * 1024 * 1024
        for labels, _ in result.find("ceph_perfwatch_daemon_threads"):
            assert labels["hostname"] == seen[labels["ceph_daemon"]]
    expected = {f"osd.{o.id}": o.host.crush_name for o in handle.topo.osds}
    expected |= {"mon.a": "core", **{f"mgr.{m}": "core" for m in handle.config.mgrs}}
    expected[f"rgw.{handle.config.name}"] = "core"
    assert seen == expected


def test_osd_device_map_matches_the_loop_devices_the_lab_made(lab: LabHandle) -> None:
    handle = lab.lab
    for osd in handle.topo.osds:
        url = handle.exporter_urls()[f"exporter.{osd.host.crush_name}"]
        rows = scrape(url).find("ceph_perfwatch_osd_device_info", ceph_daemon=f"osd.{osd.id}", role="block")
        by_via = {labels["via"]: labels["device"] for labels, _ in rows}
        assert by_via["direct"] == handle.state.loops[str(osd.id)].removeprefix("/dev/")
        assert "loop" in by_via  # the disk under the loop device's backing file


def test_node_exporter_sees_the_osd_loop_devices_and_the_host_nic(lab: LabHandle) -> None:
    handle = lab.lab
    osd = handle.topo.osds[0]
    result = scrape(handle.exporter_urls()[f"node-exporter.{osd.host.crush_name}"])
    device = handle.state.loops[str(osd.id)].removeprefix("/dev/")
    assert result.find("node_disk_io_time_seconds_total", device=device), "loop devices must not be excluded"
    assert result.find("node_network_transmit_bytes_total", device="eth0"), "the host's own NIC"
    assert not result.find("node_network_transmit_bytes_total", device=handle.topo.bridge or "")


def test_rgw_bucket_index_ops_are_counted_from_its_admin_socket(lab: LabHandle) -> None:
    url = lab.lab.exporter_urls()["exporter.core"]
    rgw = f"rgw.{lab.lab.config.name}"

    def calls() -> float:
        return scrape(url).total("ceph_perfwatch_rgw_objecter_ops_total", ceph_daemon=rgw, op="call") or 0.0

    s3 = s3_client(lab)
    with contextlib.suppress(s3.exceptions.BucketAlreadyOwnedByYou):
        s3.create_bucket(Bucket="pwtest-exporter")
    before = calls()
    # Each PUT prepares and completes an entry in the bucket index: cls_rgw calls from the RGW.
    for i in range(5):
        s3.put_object(Bucket="pwtest-exporter", Key=f"object-{i}", Body=b"x")
    s3.list_objects_v2(Bucket="pwtest-exporter")
    after = calls()
    print(f"\nrgw cls calls: {before:.0f} -> {after:.0f} over 5 PUTs and a LIST")
    assert after - before >= 10


def test_exporter_text_passes_promtool(lab: LabHandle) -> None:
    for name, url in lab.lab.exporter_urls().items():
        if name.startswith("exporter."):
            with urllib.request.urlopen(url, timeout=10) as resp:
                text = resp.read().decode()
            proc = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
            assert proc.returncode == 0, f"{name}: {proc.stdout}{proc.stderr}"
