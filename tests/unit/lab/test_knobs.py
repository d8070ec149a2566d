"""Pure parts of the lab's bottleneck knobs and load: argument checks, cgroup mount lookup, parsing."""

from pathlib import Path

import pytest

from lab import cgroups, knobs, load
from lab.config import LabConfig, LabError
from lab.state import LabState

MOUNTINFO = """\
25 30 0:22 / /sys/fs/cgroup rw,nosuid - tmpfs tmpfs ro,mode=755
26 25 0:23 / /sys/fs/cgroup/cpu rw,nosuid,nodev,noexec,relatime shared:9 - cgroup cgroup rw,cpu
27 25 0:24 / /sys/fs/cgroup/cpuacct rw,nosuid - cgroup cgroup rw,cpuacct
28 25 0:25 / /sys/fs/cgroup/blkio rw,nosuid - cgroup cgroup rw,blkio
29 25 0:26 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw
"""


def test_cgroup_mounts_are_found_by_controller_not_by_prefix() -> None:
    assert str(cgroups.find_mount("cpu", MOUNTINFO)) == "/sys/fs/cgroup/cpu"
    assert str(cgroups.find_mount("cpuacct", MOUNTINFO)) == "/sys/fs/cgroup/cpuacct"
    assert str(cgroups.find_mount("blkio", MOUNTINFO)) == "/sys/fs/cgroup/blkio"
    assert cgroups.find_mount("memory", MOUNTINFO) is None  # the cgroup2 line is not a v1 hierarchy


def test_combined_v1_hierarchy() -> None:
    line = "26 25 0:23 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
    assert str(cgroups.find_mount("cpu", line)) == "/sys/fs/cgroup/cpu,cpuacct"


@pytest.mark.parametrize(
    ("text", "bits"),
    [("80mbit", 80_000_000), ("1gbit", 1_000_000_000), ("2.5Mbit", 2_500_000), ("500kbit", 500_000)],
)
def test_rates_in_tc_units(text: str, bits: int) -> None:
    assert knobs.parse_rate(text) == bits


@pytest.mark.parametrize(("text", "message"), [("80", "unit"), ("10MB/s", "unit"), ("1kbit", "between")])
def test_bad_rates_are_refused_with_the_rule(text: str, message: str) -> None:
    with pytest.raises(LabError, match=message):
        knobs.parse_rate(text)


def test_cores_become_a_cfs_quota_and_are_bounded() -> None:
    assert knobs.check_cores(0.2) == 20_000
    assert knobs.check_cores(1.5) == 150_000
    for bad in (0, 0.001, 100):
        with pytest.raises(LabError, match="--cores"):
            knobs.check_cores(bad)


def test_iops_bounds() -> None:
    knobs.check_iops(300)
    with pytest.raises(LabError, match="--iops 5"):
        knobs.check_iops(5)


def test_knob_descriptions_name_the_setting() -> None:
    cpu = {"kind": "cpu", "cores": 0.2, "quota_us": 20000}
    assert knobs.describe(cpu).startswith("0.2 cores")
    media = {"kind": "media", "iops": 300, "mbps": None, "disk": "vda", "numbers": "254:0", "device": "loop1"}
    assert knobs.describe(media) == "300 read + 300 write IOPS on vda (254:0), under loop1 (block)"
    db = {**media, "role": "db", "disk": "loop9", "numbers": "7:9", "device": "loop8"}
    assert knobs.describe(db) == "300 read + 300 write IOPS on loop9 (7:9), under loop8 (db)"
    net = {"kind": "network", "rate": "80mbit", "rate_bps": 80_000_000, "links": ["x-h2", "x-h2:eth0"]}
    assert knobs.describe(net) == "80mbit (10 MB/s) each way on x-h2, x-h2:eth0 (public network)"
    back = {**net, "network": "cluster", "links": ["x-h2:eth1"]}
    assert knobs.describe(back) == "80mbit (10 MB/s) sent on x-h2:eth1 (cluster network)"
    other = {**net, "network": "other", "links": ["x-o2", "x-h2:eth2"]}
    assert "carries no Ceph traffic" in knobs.describe(other)


def test_rbd_bench_progress_lines_are_parsed_and_headers_skipped() -> None:
    text = (
        "bench  type write io_size 4096 io_threads 16 bytes 10737418240 pattern random\n"
        "  SEC       OPS   OPS/SEC   BYTES/SEC\n"
        "    1      3120   3123.51    12 MiB/s\n"
        "    2      5296    2629.7    10 MiB/s\n"
        "    3      7808   2597.61    10 MiB/s\n"
    )
    assert load.parse_progress(text) == [(1, 3120), (2, 5296), (3, 7808)]
    result = load.LoadResult("small-random-write", 3.0, 7808, "x-cl")
    assert round(result.iops) == 2603
    assert round(result.bytes_per_second(4096)) == round(7808 / 3 * 4096)


def test_a_run_stopped_before_its_first_progress_line_counts_the_ops_of_its_summary() -> None:
    """Seen on a loaded machine: a 2 s warm-up stopped by SIGTERM before rbd bench printed a progress line."""
    text = (
        "bench  type read io_size 4194304 io_threads 16 bytes 1125899906842624 pattern random\n"
        "  SEC       OPS   OPS/SEC   BYTES/SEC\n"
        "2026-11-29T05:59:45.747+0000 7fbf537fe6c0 -1 received  signal: Terminated from python -m lab load\n"
        "elapsed: 2   ops: 157   ops/sec: 65.8557   bytes/sec: 263 MiB/s\n"
    )
    assert load.parse_progress(text) == [(2, 157)]
    full = (
        "    1      3120   3123.51    12 MiB/s\n"
        "    2      5296    2629.7    10 MiB/s\n"
        "elapsed: 2.4   ops: 5301   ops/sec: 2650.1   bytes/sec: 10 MiB/s\n"
    )
    assert load.parse_progress(full)[-1] == (2, 5301)
    assert load.parse_progress("  SEC       OPS   OPS/SEC   BYTES/SEC\n") == []


def test_load_arguments_are_checked() -> None:
    with pytest.raises(LabError, match="--seconds 0"):
        load.check_seconds(0)
    for pg_num in (0, -8, 129):
        with pytest.raises(LabError, match=f"--pg-num {pg_num}: must be between 1 and 128"):
            load.check_pg_num(pg_num)
    load.check_pg_num(32)
    argv = load.PATTERNS["large-read"].bench_argv(__import__("pathlib").Path("/c"), 1024)
    assert argv[argv.index("--io-type") + 1] == "read" and argv[argv.index("--io-size") + 1] == str(4 << 20)
    # every pattern without librbd's cache: its threads are its I/Os in flight at the OSDs
    assert all(load.NO_CACHE in p.bench_argv(Path("/c"), 1024) for p in load.PATTERNS.values())


def test_the_remount_script_mounts_every_hierarchy_again_with_its_options() -> None:
    script = cgroups.remount_script(MOUNTINFO)
    assert script.startswith("mount -t tmpfs -o mode=755 cgroup-views /sys/fs/cgroup && ")
    assert "mkdir -p /sys/fs/cgroup/cpu && mount -t cgroup -o rw,cpu cgroup /sys/fs/cgroup/cpu" in script
    assert "-o rw,blkio cgroup /sys/fs/cgroup/blkio" in script
    assert script.endswith("mkdir -p /sys/fs/cgroup/unified && mount -t cgroup2 cgroup2 /sys/fs/cgroup/unified")


def test_on_a_v2_only_machine_the_remount_is_the_one_hierarchy() -> None:
    line = "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
    assert cgroups.remount_script(line) == "mount -t cgroup2 cgroup2 /sys/fs/cgroup"
    assert cgroups.find_mount("cpu", line) is None


def test_escaped_mount_points_are_decoded() -> None:
    line = "26 25 0:23 / /sys/fs/cgroup/my\\040cpu rw - cgroup cgroup rw,cpu\n"
    assert str(cgroups.find_mount("cpu", line)) == "/sys/fs/cgroup/my cpu"


def test_a_process_group_is_read_for_the_hierarchy_of_the_controller() -> None:
    text = "12:memory:/m\n4:cpu,cpuacct:/system.slice/ceph-osd@1.service\n7:blkio:/b\n0::/u\n"
    assert cgroups.group_of(1, "cpu", text) == "/system.slice/ceph-osd@1.service"
    assert cgroups.group_of(1, "blkio", text) == "/b"
    assert cgroups.group_of(1, "pids", text) is None


def test_a_media_knob_on_a_device_the_osd_lacks_or_already_has_is_refused(tmp_path: Path) -> None:
    state = LabState()
    missing = {0: tmp_path / "ceph-0" / "block.db"}  # the classic layout has no DB device
    with pytest.raises(LabError, match=r"osd.0 has no block.db"):
        knobs.saturate_media(state, lambda: None, "t", missing, 100, None, role="db")
    state.knobs["media:osd.0"] = {"kind": "media", "target": "osd.0"}
    with pytest.raises(LabError, match=r"osd.0 already has a media knob"):
        knobs.saturate_media(state, lambda: None, "t", {0: tmp_path}, 100, None)
    with pytest.raises(LabError, match="no OSD to limit"):
        knobs.saturate_media(state, lambda: None, "t", {}, 100, None)


def test_network_knobs_pick_the_link_of_the_network_and_refuse_what_the_lab_lacks() -> None:
    from lab.topology import plan

    split = plan(LabConfig(hosts=3, cluster_network=True, name="x"))
    assert knobs._link_of(split, "h2", "public")[1:] == ("x-h2", "eth0")
    assert knobs._link_of(split, "h2", "cluster")[1:] == ("x-c2", "eth1")
    assert knobs._link_of(split, "2", "other")[1:] == ("x-o2", "eth2")
    one_link = plan(LabConfig(hosts=3, name="x"))
    with pytest.raises(LabError, match="--cluster-network"):
        knobs._link_of(one_link, "h2", "cluster")
    with pytest.raises(LabError, match="must be one of public, cluster, other"):
        knobs._link_of(split, "h2", "backup")
    with pytest.raises(LabError, match="no host 'h9'"):
        knobs._link_of(split, "h9", "public")
    with pytest.raises(LabError, match="--hosts 2 or more"):
        knobs._link_of(plan(LabConfig()), "1", "public")
    client, veth, device = knobs._link_of(split, "client", "public")
    assert (client.crush_name, veth, device) == ("client", "x-cl", "eth0")
    with pytest.raises(LabError, match="the load client has one link"):
        knobs._link_of(split, "client", "cluster")
