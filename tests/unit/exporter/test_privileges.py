"""The host exporter's least privilege, measured with the kernel's own checks: the systemd unit's settings
and rating, and the exporter run as the unit runs it (a user of its own, the unit's capabilities as its
only ones, no new privileges) beside two stand-in daemons, a ceph-osd of the ceph user and a ceph-mon of
root with all of root's capabilities. With the unit's two capabilities it reports exactly what it reports
as root; without either, the OSD's devices go missing; under hidepid=invisible it still sees both."""

from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests import paths
from tests.unit.exporter.test_http import ENV, free_port

REPO = paths.REPO
UNIT = REPO / "exporters" / "perfwatch-host-exporter.service"
FAKE = paths.EXPORTER_FIXTURES / "fake_daemon.py"
FSID = "5b0d3c9e-1f2a-4b3c-8d4e-5f6a7b8c9d0e"
DYNAMIC_UID = 61999  # what DynamicUser= hands out: 61184-65519, named by no /etc/passwd entry
RATING = 2.0  # systemd-analyze security's exposure for the unit, as its header states

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="starts processes as other users")


def unit_settings() -> dict[str, list[str]]:
    settings: dict[str, list[str]] = {}
    for line in UNIT.read_text().splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            key, value = line.split("=", 1)
            settings.setdefault(key, []).append(value)
    return settings


def unit_caps() -> list[str]:
    return unit_settings()["CapabilityBoundingSet"][0].split()


def test_the_unit_runs_unprivileged_with_two_capabilities_and_states_its_rating() -> None:
    s = unit_settings()
    assert "User" not in s and s["DynamicUser"] == ["yes"]
    assert set(unit_caps()) == {"CAP_SYS_PTRACE", "CAP_DAC_OVERRIDE"}
    assert s["AmbientCapabilities"] == s["CapabilityBoundingSet"]
    for key, value in (("NoNewPrivileges", "yes"), ("ProtectSystem", "strict"), ("ProtectProc", "invisible")):
        assert s[key] == [value], key
    assert s["MemoryMax"] == ["256M"]
    header = UNIT.read_text().split("[Unit]")[0]
    assert f"rates it\n# {RATING:.1f} OK" in header
    if shutil.which("systemd-analyze") is None:
        pytest.skip("no systemd-analyze here")
    proc = subprocess.run(
        ["systemd-analyze", "security", "--offline=true", "--no-pager", str(UNIT)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    found = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", proc.stdout + proc.stderr)
    assert found is not None, proc.stdout + proc.stderr
    print(f"\nsystemd-analyze security: {found.group(1)} (as root without a bounding set it was 6.4)")
    assert float(found.group(1)) == RATING


@pytest.fixture(scope="module")
def daemons() -> Iterator[int]:
    """A ceph-osd of the ceph user (data dir ceph:ceph 0750 with a block link, its socket srwxr-xr-x)
    and a ceph-mon of root, both with their admin socket given in their command line."""
    ceph = pwd.getpwnam("ceph")
    folder = Path(tempfile.mkdtemp(prefix="pwcaps-"))
    folder.chmod(0o755)
    for name in ("ceph-osd", "ceph-mon"):
        shutil.copy2(Path(sys.executable).resolve(), folder / name)
    data = folder / "osd-7"
    data.mkdir(mode=0o750)
    (data / "block").symlink_to("/dev/" + next(d for d in sorted(os.listdir("/sys/block")) if not d.startswith("loop")))
    os.lchown(data / "block", ceph.pw_uid, ceph.pw_gid)
    os.chown(data, ceph.pw_uid, ceph.pw_gid)
    run_ceph = folder / "run-ceph"
    run_ceph.mkdir(mode=0o755)
    os.chown(run_ceph, ceph.pw_uid, ceph.pw_gid)
    osd_sock, mon_sock = run_ceph / "ceph-osd.7.asok", folder / "ceph-mon.a.asok"
    procs = [
        subprocess.Popen(
            [str(folder / "ceph-osd"), str(FAKE), "-i", "7", "--fsid", FSID, "--osd-data", str(data),
             "--admin-socket", str(osd_sock)],
            user=ceph.pw_uid, group=ceph.pw_gid, extra_groups=[],
        ),
        subprocess.Popen(
            [str(folder / "ceph-mon"), str(FAKE), "-i", "a", "--fsid", FSID, "--admin-socket", str(mon_sock)]
        ),
    ]  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while not (osd_sock.exists() and mon_sock.exists()):
            assert time.monotonic() < deadline, "the stand-in daemons did not make their sockets"
            time.sleep(0.05)
        yield procs[0].pid  # the OSD's
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
        shutil.rmtree(folder)


def setpriv(caps: list[str]) -> list[str]:
    """As the unit runs it: its own user, these capabilities and no others (bounding, inheritable,
    ambient), no new privileges."""
    names = ",".join(["-all", *("+" + c.removeprefix("CAP_").lower() for c in caps)])
    return [
        "setpriv", f"--reuid={DYNAMIC_UID}", f"--regid={DYNAMIC_UID}", "--clear-groups",
        f"--bounding-set={names}", f"--inh-caps={names}", f"--ambient-caps={names}", "--no-new-privs", "--",
    ]  # fmt: skip


def collect(prefix: list[str]) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """The exporter's series after two collections, run behind `prefix` (setpriv, unshare, or nothing)."""
    port = free_port()
    argv = [*prefix, sys.executable, "-m", "perfwatch_host_exporter", "--listen-address", "127.0.0.1",
            "--port", str(port), "--collect-interval", "1", "--cluster-fsid", FSID]  # fmt: skip
    proc = subprocess.Popen(argv, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "no two collections in 30 s"
            try:
                text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
            except OSError:
                text = ""
            if re.search(r"^ceph_perfwatch_exporter_collections_total\{[^}]*\} [2-9]", text, re.MULTILINE):
                break
            time.sleep(0.2)
    finally:
        proc.terminate()
        proc.wait(10)
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def daemon_series(found: dict[tuple[str, frozenset[tuple[str, str]]], float]) -> set[tuple[str, Any]]:
    """What the exporter says about the daemons: each series naming one (values left out)."""
    return {key for key in found if any(k == "ceph_daemon" for k, _ in key[1])}


def devices(found: dict[tuple[str, frozenset[tuple[str, str]]], float]) -> list[dict[str, str]]:
    return [dict(labels) for name, labels in found if name == "ceph_perfwatch_osd_device_info"]


def errors(found: dict[tuple[str, frozenset[tuple[str, str]]], float]) -> dict[str, float]:
    return {
        dict(labels)["source"]: value
        for (name, labels), value in found.items()
        if name == "ceph_perfwatch_exporter_collection_errors_total" and value
    }


def test_the_units_capabilities_are_all_it_needs_and_each_is_needed(daemons: int) -> None:
    as_root = collect([])
    reported = {dict(labels)["ceph_daemon"] for _, labels in daemon_series(as_root)}
    assert reported == {"osd.7", "mon.a"}
    assert devices(as_root) and errors(as_root) == {}
    least = collect(setpriv(unit_caps()))
    assert daemon_series(least) == daemon_series(as_root), "with the unit's two capabilities: what root sees"
    assert errors(least) == {}
    for cap in unit_caps():
        fewer = collect(setpriv([c for c in unit_caps() if c != cap]))
        print(f"\nwithout {cap}: devices {devices(fewer)}, errors {errors(fewer)}")
        assert devices(fewer) == [], f"{cap} is needed to map the OSD's devices"
        assert errors(fewer), f"without {cap} the exporter counts what it cannot read"


def test_hidepid_invisible_hides_no_daemon_from_it(daemons: int) -> None:
    """ProtectProc=invisible and ProcSubset=pid: a /proc of its own with hidepid=invisible,subset=pid,
    which hides every process the caller may not ptrace-read: none, with CAP_SYS_PTRACE."""
    mount = 'mount -t proc -o hidepid=invisible,subset=pid proc /proc && exec "$@"'
    hidden = collect(["unshare", "--mount", "--propagation", "private", "sh", "-c", mount, "sh", *setpriv(unit_caps())])
    assert daemon_series(hidden) == daemon_series(collect(setpriv(unit_caps())))


def cpu_hierarchy() -> Path | None:
    """The cgroup v1 hierarchy with the cpu controller, where a quota can be set (None without one)."""
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        sep = fields.index("-")
        if fields[sep + 1] == "cgroup" and "cpu" in fields[sep + 3].split(","):
            return Path(fields[4])
    return None


def test_in_a_private_cgroup_namespace_it_still_reads_the_daemons_cgroups(daemons: int) -> None:
    """As an unprivileged Kubernetes pod runs it (its own cgroup namespace: other processes' cgroups
    read "/../x"): with the unit's capabilities only, the OSD's CPU quota is found all the same."""
    cpu = cpu_hierarchy()
    if cpu is None:
        pytest.skip("no cgroup v1 cpu hierarchy here to set a quota in")
    osd_group, own_group = cpu / "pwcaps-osd", cpu / "pwcaps-exporter"
    osd_pid = daemons
    for group in (osd_group, own_group):
        group.mkdir(exist_ok=True)
    try:
        (osd_group / "cpu.cfs_period_us").write_text("100000")
        (osd_group / "cpu.cfs_quota_us").write_text("50000")
        (osd_group / "cgroup.procs").write_text(str(osd_pid))
        enter = f'echo $$ > {own_group}/cgroup.procs && exec "$@"'  # then a namespace rooted there
        private = collect(["sh", "-c", enter, "sh", "unshare", "--cgroup", *setpriv(unit_caps())])
        limit = {
            dict(labels)["ceph_daemon"]: value
            for (name, labels), value in private.items()
            if name == "ceph_perfwatch_daemon_cgroup_cpu_limit_cores"
        }
        info = [dict(labels) for name, labels in private if name == "ceph_perfwatch_daemon_cgroup_info"]
        print(f"\nin a private cgroup namespace: limits {limit}, cgroups {[i['cgroup'] for i in info]}")
        assert limit == {"osd.7": 0.5}
        assert {i["ceph_daemon"]: i["cgroup"] for i in info}["osd.7"] == "/../pwcaps-osd", "as its namespace names it"
        assert errors(private) == {}
    finally:
        (cpu / "cgroup.procs").write_text(str(osd_pid))
        for group in (osd_group, own_group):
            for pid in (group / "cgroup.procs").read_text().split():
                (cpu / "cgroup.procs").write_text(pid)
            group.rmdir()
