"""The per-host exporters and node_exporters the lab runs, against the real daemons of the session lab."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from lab.cluster import Lab

from .labutil import LabHandle, s3_client, side_lab, wait_until
from .scrape import Scrape, scrape


def expected_daemons(handle: Lab) -> dict[str, str]:
    """Each Ceph daemon of a lab -> the hostname label of the exporter that must report it."""
    core = "core" if handle.topo.namespaced else handle.topo.hosts[0].crush_name
    expected = {f"osd.{o.id}": o.host.crush_name for o in handle.topo.osds}
    expected |= {"mon.a": core, **{f"mgr.{m}": core for m in handle.config.mgrs}}
    expected[f"rgw.{handle.config.name}"] = core
    return expected


def reported(handle: Lab) -> dict[tuple[str, str], str]:
    """(cluster, ceph_daemon) -> hostname, over every perfwatch exporter of a lab; each pair once."""
    seen: dict[tuple[str, str], str] = {}
    for name, url in handle.exporter_urls().items():
        if not name.startswith("exporter."):
            continue
        result = scrape(url)
        for labels, value in result.find("ceph_perfwatch_daemon_resident_memory_bytes"):
            key = (labels["cluster"], labels["ceph_daemon"])
            assert key not in seen, f"{key} reported by two exporters ({seen[key]} and {labels['hostname']})"
            seen[key] = labels["hostname"]
            assert value > 10 * 1024 * 1024
        for labels, _ in result.find("ceph_perfwatch_daemon_threads"):
            assert labels["hostname"] == seen[(labels["cluster"], labels["ceph_daemon"])]
        assert result.total("ceph_perfwatch_exporter_daemons_unknown_cluster") == 0, name
    return seen


@pytest.mark.every_release
def test_each_daemon_is_reported_once_by_the_exporter_of_its_host(lab: LabHandle) -> None:
    """Other labs may run on this machine too: the lab's exporters report only its own cluster."""
    handle = lab.lab
    fsid = handle.state.fsid
    assert reported(handle) == {(fsid, daemon): host for daemon, host in expected_daemons(handle).items()}


def test_a_second_lab_beside_the_session_lab_each_reports_only_its_own(lab: LabHandle) -> None:
    """Two clusters on one machine (as a demo lab beside the test lab): their daemons share names (osd.0,
    mon.a, mgr.x), run in the same network namespace and have admin sockets of the same names; each
    lab's exporters report each of their own daemons once, with cluster=<that lab's fsid>, and none of
    the other's."""
    with side_lab("pwside") as (directory, _):
        labs = [lab.lab, Lab.open(directory)]
        assert labs[0].state.fsid != labs[1].state.fsid
        seen: dict[tuple[str, str], str] = {}
        for handle in labs:
            for key, host in reported(handle).items():
                assert key[0] == handle.state.fsid, f"{handle.config.name}'s exporters report {key}"
                assert key not in seen
                seen[key] = host
        expected = {(h.state.fsid, daemon): host for h in labs for daemon, host in expected_daemons(h).items()}
        assert seen == expected


@pytest.mark.every_release
def test_osd_device_map_matches_the_loop_devices_the_lab_made(lab: LabHandle) -> None:
    handle = lab.lab
    for osd in handle.topo.osds:
        url = handle.exporter_urls()[f"exporter.{osd.host.crush_name}"]
        rows = scrape(url).find("ceph_perfwatch_osd_device_info", ceph_daemon=f"osd.{osd.id}", role="block")
        by_via = {labels["via"]: labels["device"] for labels, _ in rows}
        assert by_via["direct"] == handle.state.loops[str(osd.id)].removeprefix("/dev/")
        assert "loop" in by_via  # the disk under the loop device's backing file


@pytest.mark.every_release
def test_node_exporter_sees_the_osd_loop_devices_and_the_host_nic(lab: LabHandle) -> None:
    handle = lab.lab
    osd = handle.topo.osds[0]
    result = scrape(handle.exporter_urls()[f"node-exporter.{osd.host.crush_name}"])
    device = handle.state.loops[str(osd.id)].removeprefix("/dev/")
    assert result.find("node_disk_io_time_seconds_total", device=device), "loop devices must not be excluded"
    assert result.find("node_network_transmit_bytes_total", device="eth0"), "the host's own NIC"
    assert not result.find("node_network_transmit_bytes_total", device=handle.topo.bridge or "")


@pytest.mark.every_release
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

    def ten_more() -> float | None:  # the exporter serves its last background collection: wait for the next
        now = calls()
        return now if now - before >= 10 else None

    after = wait_until(ten_more, 30, "10 more cls calls", 1.0)
    print(f"\nrgw cls calls: {before:.0f} -> {after:.0f} over 5 PUTs and a LIST")


@pytest.mark.every_release
def test_exporter_text_passes_promtool(lab: LabHandle) -> None:
    for name, url in lab.lab.exporter_urls().items():
        if name.startswith("exporter."):
            with urllib.request.urlopen(url, timeout=10) as resp:
                text = resp.read().decode()
            proc = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
            assert proc.returncode == 0, f"{name}: {proc.stdout}{proc.stderr}"


NOBODY = 65534


@contextlib.contextmanager
def fake_daemons_of_a_local_user(fsid: str) -> Iterator[list[subprocess.Popen]]:
    """What a local user can start beside the lab, as `nobody`, in the exporter.core's network namespace:
    `exec -a ceph-osd python3 script.py --conf FIFO --id 99`, and a copy of python3 named
    ceph-osd (so its comm and binary say ceph-osd too) that claims to be the lab's osd.0 (its --fsid) with
    a FIFO for its config. Both are stopped, and the FIFOs removed, when the block ends."""
    folder = Path(tempfile.mkdtemp(prefix="pwfake-"))
    folder.chmod(0o755)
    fifo = folder / "fifo"
    os.mkfifo(fifo)
    fifo.chmod(0o666)
    binary = folder / "ceph-osd"
    shutil.copy2(Path("/usr/bin/python3").resolve(), binary)
    sleeper = "import time; time.sleep(300)"
    argvs = [
        (["ceph-osd", "-c", sleeper, "--conf", str(fifo), "--id", "99"], "/usr/bin/python3"),
        (["ceph-osd", "-c", sleeper, "--fsid", fsid, "--conf", str(fifo), "--id", "0"], str(binary)),
    ]
    procs = [subprocess.Popen(argv, executable=exe, user=NOBODY, group=NOBODY) for argv, exe in argvs]
    try:
        yield procs
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
        shutil.rmtree(folder)


def timed_scrape(url: str) -> tuple[float, Scrape]:
    """One scrape and its latency; a scrape that takes a second or more fails (urlopen's timeout)."""
    started = time.monotonic()
    result = scrape(url, timeout=1.0)
    return time.monotonic() - started, result


def test_fake_daemons_of_a_local_user_neither_hang_nor_fool_the_exporter(lab: LabHandle) -> None:
    """A local user's fake daemons, live: with two fake daemons of `nobody` beside the lab (one claiming the lab's
    osd.0 by fsid), exporter.core answers every scrape within a second, reports the lab's own daemons
    only, and counts the impostor as refused; after they are gone it still answers (nothing outlives them)."""
    handle = lab.lab
    url = handle.exporter_urls()["exporter.core"]
    core_daemons = {d for d, host in expected_daemons(handle).items() if host == "core"}

    def refused(result: Scrape) -> float:
        return result.total("ceph_perfwatch_exporter_refused_total", reason="untrusted_process") or 0.0

    before = refused(scrape(url))
    with fake_daemons_of_a_local_user(handle.state.fsid):
        collections = scrape(url).total("ceph_perfwatch_exporter_collections_total") or 0.0
        wait_until(
            lambda: (scrape(url).total("ceph_perfwatch_exporter_collections_total") or 0) >= collections + 2,
            30,
            "two collections with the fakes running",
        )
        latencies = []
        for _ in range(20):
            latency, result = timed_scrape(url)
            latencies.append(latency)
            reported = {labels["ceph_daemon"] for labels, _ in result.find("ceph_perfwatch_daemon_threads")}
            assert reported == core_daemons, "only the lab's real daemons"
            assert {labels["cluster"] for labels, _ in result.find("ceph_perfwatch_daemon_threads")} == {
                handle.state.fsid
            }
        assert refused(result) > before, "the copy named ceph-osd is refused and counted"
        latencies.sort()
        print(
            f"\nexporter.core with 2 fake daemons of nobody: 20 scrapes, latency min {latencies[0] * 1000:.1f} ms, "
            f"median {latencies[10] * 1000:.1f} ms, max {latencies[-1] * 1000:.1f} ms; "
            f"untrusted_process refusals {before:.0f} -> {refused(result):.0f}"
        )
    latency, result = timed_scrape(url)
    assert {labels["ceph_daemon"] for labels, _ in result.find("ceph_perfwatch_daemon_threads")} == core_daemons
    with urllib.request.urlopen(url.replace("/metrics", "/healthz"), timeout=5) as resp:
        assert resp.status == 200
