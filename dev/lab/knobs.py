"""Bottleneck knobs: a real CPU, media or network limit on part of the lab, recorded so it can be undone.

- cpu: a cgroup v1 CPU quota on each chosen OSD process (`cores` of CPU time each).
- media: a cgroup v1 block-I/O IOPS (and optionally bandwidth) limit for the OSD process on the disk *under*
  its loop device (layout.py), so the OSD's device shows a saturated disk: utilisation near 100 % and a
  growing queue (on the loop device itself the wait is above the device, outside its io_time: not busy).
- network: tc token-bucket shaping to `rate` each way, on both ends of one of a host's links (eth0: public;
  with --cluster-network eth1: cluster, eth2: no Ceph traffic, which the knob makes: traffic.py, by PID).
Each knob is a dict in the lab state, keyed "<kind>:<target>", holding what `clear` needs to undo it, and is
recorded (`save`) before it is made, so `clear` and `down` undo a half-made one too.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import cgroups, procs
from .config import LabError
from .state import LabState
from .topology import Host, Topology

KINDS = ("cpu", "media", "network")
NETWORKS = ("public", "cluster", "other")
# `--network other`: the host sends this much more than the shaping rate to the sink, so the link is full
OTHER_OVERFILL = 1.25
OTHER_SECONDS = 3600.0  # the traffic stops by itself after this, should the lab lose track of it
TRAFFIC = Path(__file__).with_name("traffic.py")
CFS_PERIOD_US = 100_000
_RATE_RE = re.compile(r"^(\d+(?:\.\d+)?)(bit|kbit|mbit|gbit)$", re.IGNORECASE)
_RATE_UNITS = {"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9}


def parse_rate(text: str) -> int:
    """tc-style rate ('80mbit', '1gbit', '500kbit') -> bits per second."""
    match = _RATE_RE.match(text.strip())
    if not match:
        raise LabError(f"--rate {text!r}: give a number and a unit of bit, kbit, mbit or gbit (e.g. 80mbit)")
    bits = int(float(match.group(1)) * _RATE_UNITS[match.group(2).lower()])
    if not 100_000 <= bits <= 100_000_000_000:
        raise LabError(f"--rate {text}: must be between 100kbit and 100gbit")
    return bits


def check_cores(cores: float) -> int:
    """Cores (0.2 = a fifth of one CPU) -> the CFS quota in microseconds per period."""
    if not 0.01 <= cores <= 64:
        raise LabError(f"--cores {cores}: must be between 0.01 and 64")
    return round(cores * CFS_PERIOD_US)


def check_iops(iops: int) -> None:
    if not 10 <= iops <= 1_000_000:
        raise LabError(f"--iops {iops}: must be between 10 and 1000000")


def group_name(lab_name: str, osd_id: int) -> str:
    return f"{lab_name}-osd.{osd_id}"


def describe(knob: dict[str, Any]) -> str:
    kind = knob["kind"]
    if kind == "cpu":
        return f"{knob['cores']:g} cores (cfs quota {knob['quota_us']} us per {CFS_PERIOD_US} us)"
    if kind == "media":
        bw = f", {knob['mbps']:g} MB/s" if knob.get("mbps") else ""
        disk = f"{knob['disk']} ({knob['numbers']})"
        role = knob.get("role", "block")
        return f"{knob['iops']} read + {knob['iops']} write IOPS{bw} on {disk}, under {knob['device']} ({role})"
    way = "sent" if knob.get("network") == "cluster" else "each way"
    shaped = f"{knob['rate']} ({knob['rate_bps'] / 8e6:g} MB/s) {way} on {', '.join(knob['links'])}"
    network = knob.get("network", "public")
    if network == "other":
        return f"{shaped} (a link that carries no Ceph traffic), filled from the host at {OTHER_OVERFILL:g}x that"
    return f"{shaped} ({network} network)"


# ----- devices ---------------------------------------------------------------------------------------


def _disk_of_numbers(major: int, minor: int) -> tuple[str, str]:
    """The whole disk holding device major:minor, as ("M:m", name); a partition is folded to its disk
    (block-I/O throttling takes whole disks)."""
    sys_dev = Path(f"/sys/dev/block/{major}:{minor}")
    if not sys_dev.exists():
        raise LabError(f"device {major}:{minor} is not a block device the kernel lists (an overlay or tmpfs?)")
    real = sys_dev.resolve()
    if (real / "partition").exists():
        real = real.parent
    return (real / "dev").read_text().strip(), real.name


def media_target(path: Path) -> tuple[str, str, str]:
    """For an OSD's `block` (or `block.db`): (device the OSD uses, numbers "M:m" of the device to throttle,
    its name). For a loop device (or a partition of one), what lies beneath it: the loop device it is
    stacked on (layout.py), else the disk holding its backing file. For a file (--backing file), its disk."""
    real = path.resolve()
    st = os.stat(real)
    if not stat.S_ISBLK(st.st_mode):
        numbers, disk = _disk_of_numbers(os.major(st.st_dev), os.minor(st.st_dev))
        return str(real), numbers, disk
    sysdir = Path(f"/sys/dev/block/{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}").resolve()
    if (sysdir / "partition").exists():
        sysdir = sysdir.parent
    backing = sysdir / "loop" / "backing_file"
    if not backing.exists():
        raise LabError(f"{path} is {real}, not a loop device over a file: nothing under it to throttle")
    under = os.stat(backing.read_text().strip())
    if stat.S_ISBLK(under.st_mode):  # stacked: the loop device beneath is the lab's own disk for this device
        numbers, disk = _disk_of_numbers(os.major(under.st_rdev), os.minor(under.st_rdev))
    else:
        numbers, disk = _disk_of_numbers(os.major(under.st_dev), os.minor(under.st_dev))
    return sysdir.name, numbers, disk


# ----- apply and undo --------------------------------------------------------------------------------


def _osd_pid(state: LabState, osd_id: int) -> int:
    ref = state.daemons.get(f"osd.{osd_id}")
    if ref is None or not procs.is_alive(ref):
        raise LabError(f"osd.{osd_id} is not running: start it first (`python3 -m lab start osd.{osd_id}`)")
    return ref.pid


def saturate_cpu(
    state: LabState, save: Callable[[], None], lab_name: str, osd_ids: list[int], cores: float
) -> list[dict[str, Any]]:
    """Each OSD of `osd_ids` (all running) gets `cores` of CPU time; the knobs made."""
    quota = check_cores(cores)
    if not osd_ids:
        raise LabError("no OSD to limit (that host has none)")
    pids = {osd_id: _osd_pid(state, osd_id) for osd_id in osd_ids}  # all running, before changing anything
    made = []
    for osd_id, pid in pids.items():
        group = group_name(lab_name, osd_id)
        knob = {"kind": "cpu", "target": f"osd.{osd_id}", "cores": cores, "quota_us": quota, "group": group}
        state.knobs[f"cpu:osd.{osd_id}"] = knob
        save()  # recorded before it exists: `clear` and `down` undo a half-made knob too
        cgroups.create("cpu", group, {"cpu.cfs_period_us": str(CFS_PERIOD_US), "cpu.cfs_quota_us": str(quota)})
        knob["origin"] = cgroups.add_process("cpu", group, pid)
        save()
        made.append(knob)
    return made


def saturate_media(
    state: LabState,
    save: Callable[[], None],
    lab_name: str,
    targets: dict[int, Path],
    iops: int,
    mbps: float | None,
    role: str = "block",
) -> list[dict[str, Any]]:
    """Each OSD of `targets` (all running; osd id -> its `block` or `block.db` path, as `role` says) gets
    `iops` read and `iops` write IOPS, and `mbps` MB/s each way unless 0 or None, on the device under the one
    it uses there. OSDs sharing that device each get the limit."""
    check_iops(iops)
    if mbps is not None and mbps != 0 and not 0.1 <= mbps <= 100_000:
        raise LabError(f"--mbps {mbps}: must be 0 (no cap) or between 0.1 and 100000")
    if not targets:
        raise LabError("no OSD to limit (that host has none)")
    for osd_id, path in targets.items():
        if f"media:osd.{osd_id}" in state.knobs:
            raise LabError(f"osd.{osd_id} already has a media knob: `python3 -m lab clear media` first")
        if not path.exists():
            raise LabError(f"osd.{osd_id} has no {path.name} (the lab's layout: see `status`)")
    pids = {osd_id: _osd_pid(state, osd_id) for osd_id in targets}  # all running, before changing anything
    made = []
    for osd_id, path in targets.items():
        device, numbers, disk = media_target(path)
        group = group_name(lab_name, osd_id)
        knob = {
            "kind": "media",
            "target": f"osd.{osd_id}",
            "role": role,
            "iops": iops,
            "mbps": mbps,
            "device": device,
            "disk": disk,
            "numbers": numbers,
            "group": group,
        }
        state.knobs[f"media:osd.{osd_id}"] = knob
        save()
        bps = int(mbps * 1e6) if mbps else 0
        settings = {
            "blkio.throttle.read_iops_device": f"{numbers} {iops}",
            "blkio.throttle.write_iops_device": f"{numbers} {iops}",
            "blkio.throttle.read_bps_device": f"{numbers} {bps}",
            "blkio.throttle.write_bps_device": f"{numbers} {bps}",
        }
        cgroups.create("blkio", group, settings)
        knob["origin"] = cgroups.add_process("blkio", group, pids[osd_id])
        save()
        made.append(knob)
    return made


def _tc(netns: str | None, *args: str) -> subprocess.CompletedProcess:
    argv = ["tc", *args] if netns is None else ["ip", "netns", "exec", netns, "tc", *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=30)


def _link_of(topo: Topology, host_name: str, network: str) -> tuple[Host, str, str]:
    """(host, root-namespace end, device in the host) of a host's link for `network`."""
    if network not in NETWORKS:
        raise LabError(f"--network {network!r}: must be one of {', '.join(NETWORKS)}")
    try:
        # the load client's link too: a client whose uplink is full, as in the campaigns' large reads
        host = topo.client if host_name == "client" else topo.host_named(host_name)
    except KeyError as exc:
        raise LabError(str(exc.args[0])) from exc
    if host.netns is None or host.veth is None:
        raise LabError("the network knob needs hosts in namespaces of their own: start the lab with --hosts 2 or more")
    if host is topo.client and network != "public":
        raise LabError(f"--network {network}: the load client has one link, to the public network")
    veth, device = {
        "public": (host.veth, "eth0"),
        "cluster": (host.cluster_veth, "eth1"),
        "other": (host.other_veth, "eth2"),
    }[network]
    if veth is None:
        raise LabError(f"--network {network}: this lab has one link per host; start it with --cluster-network")
    return host, veth, device


def saturate_network(
    state: LabState,
    save: Callable[[], None],
    topo: Topology,
    host_name: str,
    rate: str,
    network: str = "public",
    log_dir: Path | None = None,
) -> dict[str, Any]:
    """Shape both ends of the host's link for `network` to `rate` (a tc rate, e.g. 80mbit); for `other`, also
    fill it with traffic that is not Ceph's (dev/lab/traffic.py, from the host to the lab's sink)."""
    bits = parse_rate(rate)
    host, veth, device = _link_of(topo, host_name, network)
    assert host.netns is not None
    # burst: at least 64 KiB, and 10 ms worth at the rate (tbf needs more than one timer tick's worth)
    burst = max(64 * 1024, bits // 8 // 100)
    # Both ends: the host sends and receives at most the rate. The cluster network only what the host sends
    # (a NIC's own tc qdisc shapes its egress): with 3 hosts and 3 replicas a host receives as many replica
    # bytes as it sends, so with both ends shaped neither direction ever fills (81 % each, measured).
    ends: list[tuple[str | None, str]] = (
        [(host.netns, device)] if network == "cluster" else [(None, veth), (host.netns, device)]
    )
    knob: dict[str, Any] = {
        "kind": "network",
        "target": host.crush_name,
        "network": network,
        "rate": rate,
        "rate_bps": bits,
        "links": [f"{ns}:{dev}" if ns else dev for ns, dev in ends],
        "ends": [[ns, dev] for ns, dev in ends],
    }
    key = f"network:{host.crush_name}" + ("" if network == "public" else f":{network}")
    state.knobs[key] = knob
    save()
    for netns, dev in ends:
        proc = _tc(netns, "qdisc", "replace", "dev", dev, "root", "tbf", "rate", f"{bits}bit", "burst",
                   str(burst), "latency", "50ms")  # fmt: skip
        if proc.returncode != 0:
            raise LabError(f"tc on {dev} failed: {proc.stderr.strip()}")
    if network == "other":
        assert topo.other_sink is not None
        argv = [sys.executable, str(TRAFFIC), "--to", topo.other_sink, "--seconds", str(OTHER_SECONDS),
                "--bytes-per-second", str(bits / 8 * OTHER_OVERFILL)]  # fmt: skip
        log = (log_dir or Path("/tmp")) / f"traffic-{host.crush_name}.log"
        knob["traffic"] = procs.spawn(argv, log, netns=host.netns).to_dict()
        save()
    return knob


def undo(state: LabState, save: Callable[[], None], key: str) -> list[str]:
    """Undo one recorded knob; the problems met (never raises). Forgets it once fully undone."""
    knob = state.knobs.get(key)
    if knob is None:
        return []
    try:
        problems = _undo(knob)
    except (OSError, subprocess.SubprocessError) as exc:
        problems = [f"{key}: {exc}"]
    if not problems:
        del state.knobs[key]
        save()
    return problems


def _undo(knob: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    if knob["kind"] in ("cpu", "media"):
        controller = "cpu" if knob["kind"] == "cpu" else "blkio"
        problems += cgroups.remove(controller, knob["group"], knob.get("origin"))
    else:
        if knob.get("traffic"):
            procs.stop(procs.ProcRef.from_dict(knob["traffic"]), grace=5.0)
            if procs.is_alive(procs.ProcRef.from_dict(knob["traffic"])):
                problems.append(f"the traffic of {knob['target']} (pid {knob['traffic']['pid']}) did not stop")
        for netns, dev in knob["ends"]:
            if netns is not None and not Path(f"/run/netns/{netns}").exists():
                continue
            if netns is None and not Path(f"/sys/class/net/{dev}").exists():
                continue
            proc = _tc(netns, "qdisc", "del", "dev", dev, "root")
            # "handle of zero": no root qdisc of ours is left there, which is what we want
            if proc.returncode != 0 and "handle of zero" not in proc.stderr and "Cannot find" not in proc.stderr:
                problems.append(f"tc qdisc del on {dev}: {proc.stderr.strip()}")
    return problems


def clear(state: LabState, save: Callable[[], None], kind: str | None = None) -> tuple[list[str], list[str]]:
    """Undo every knob, or every knob of one kind: (keys cleared, problems)."""
    if kind is not None and kind not in KINDS:
        raise LabError(f"no knob {kind!r}: knobs are {', '.join(KINDS)}")
    keys = [k for k, v in state.knobs.items() if kind is None or v["kind"] == kind]
    problems: list[str] = []
    cleared = []
    for key in keys:
        met = undo(state, save, key)
        problems += met
        if not met:
            cleared.append(key)
    return cleared, problems


def reapply_to(state: LabState, daemon: str, pid: int) -> None:
    """A restarted OSD goes back into the groups of the knobs that name it."""
    for key, knob in state.knobs.items():
        if knob["target"] == daemon and knob["kind"] in ("cpu", "media"):
            try:
                cgroups.add_process("cpu" if knob["kind"] == "cpu" else "blkio", knob["group"], pid)
            except LabError as exc:
                raise LabError(f"{daemon} started, but the knob {key} could not be applied to it again: {exc}") from exc
