"""The media verdict on the layouts of the campaigns' hardware, live: a lab of flash devices (they say they
do not rotate), two OSDs per data device (partitions) and one DB device per host holding the RocksDB/WAL of
its OSDs. Its host 1 holds osd.0 and osd.3: one data device split in two, one DB device in two. Flash under a
deep fast load raises no media alert; a saturated shared DB device (4 KiB writes: each a WAL write on it) or
data device (4 MiB writes) raises one, naming that device and both its OSDs, none for the other device.
Figures are printed (run with -s), as in test_saturation_alerts.py.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from .alert_checks import (
    HEALTHY_SECONDS,
    POLL,
    ROWS,
    Load,
    am_alerts,
    key,
    knob_fires_then_resolves,
    query,
    saturation,
    wait_quiet,
)
from .labutil import LabHandle, side_lab
from .saturating import saturating

pytestmark = [pytest.mark.own_lab]
LAYOUT = ("--hosts", "3", "--osds", "4", "--osds-per-device", "2", "--db-device", "shared", "--media", "flash",
          "--osd-size", "3", "--db-size", "1")  # fmt: skip
HOST_OSDS = (0, 3)  # host 1's


@pytest.fixture(scope="module")
def flash_lab() -> Iterator[LabHandle]:
    with side_lab("pwmedia", *LAYOUT, timeout=420) as (directory, _):
        handle = LabHandle(directory)
        with saturating(handle, "the media layout tests") as lab:
            yield lab
    print("\n| layout, knob and load | alert | s to firing | labels | other saturation alerts | s to resolved |")
    print("| --- | --- | --- | --- | --- | --- |")
    print("\n".join(r for r in ROWS if "flash" in r))


def by_device(lab: LabHandle, expr: str) -> dict[str, float]:
    return {r["metric"]["device"]: float(r["value"][1]) for r in query(lab, expr)}


def devices_of(lab: LabHandle, osd: int) -> dict[str, str]:
    """The kernel device (the disk, as node_exporter names it) of each of the OSD's BlueStore links."""
    found = {}
    for role, link in (("block", "block"), ("db", "block.db")):
        target = (lab.dir / "osd" / f"ceph-{osd}" / link).resolve().name  # loopNpK
        found[role] = re.sub(r"p\d+$", "", target)
    return found


def test_ceph_and_the_exporter_see_flash_shared_devices(flash_lab: LabHandle) -> None:
    first, second = (devices_of(flash_lab, osd) for osd in HOST_OSDS)
    assert first == second, "host 1's two OSDs share one data device and one DB device"
    assert first["block"] != first["db"]
    for osd in HOST_OSDS:
        meta = flash_lab.ceph("osd", "metadata", str(osd))
        assert meta["bluestore_bdev_rotational"] == "0", meta  # BlueStore takes them for flash
        assert meta["bluefs_dedicated_db"] == "1" and meta["bluefs_db_rotational"] == "0", meta
    deadline = time.monotonic() + 60
    while True:
        info = query(flash_lab, "host_device:ceph_perfwatch_device:info")
        kinds = {r["metric"]["device"]: r["metric"]["kind"] for r in info}
        shared = by_device(flash_lab, "host_device:ceph_perfwatch_device_osds:count")
        if (kinds.get(first["block"]) and shared.get(first["db"])) or time.monotonic() > deadline:
            break
        time.sleep(5)
    print(f"\nkinds {kinds}\nOSDs per device {shared}")
    assert kinds[first["block"]] == kinds[first["db"]] == "ssd"
    assert shared[first["block"]] == 2 and shared[first["db"]] == 2


def test_flash_under_a_deep_fast_load_fires_no_media_alert(flash_lab: LabHandle) -> None:
    """4 KiB random writes, 16 in flight, no knob: the devices are about half busy, with queues of a few
    I/Os, and serve each in a millisecond or so. No media alert may fire. (The lab's two cores run out
    first, so 64 or 128 in flight hardly deepened the devices' queues; the CPU verdict may fire, rightly,
    as it did for the campaigns' 4 KiB random I/O; it is reported in the table, not asserted.)"""
    wait_quiet(flash_lab)
    load = Load(flash_lab, "small-random-write", HEALTHY_SECONDS)
    seen: set[str] = set()
    media: set[str] = set()
    busiest: dict[str, tuple[float, float, float]] = {}  # device -> (busy, queue, await), at the busiest
    try:
        while load.proc.poll() is None:
            now = saturation(am_alerts(flash_lab))
            seen.update(key(a) for a in now)
            media.update(key(a) for a in now if a.get("resource") == "media")
            figures = {
                name: by_device(flash_lab, f"host_device:node_disk_{name}")
                for name in ("busy:ratio", "queue:avg", "await:seconds")
            }
            judged = {r["metric"]["device"] for r in query(flash_lab, "host_device:ceph_perfwatch_device:info")}
            for device in judged:
                now = tuple(figures[n].get(device, 0.0) for n in ("busy:ratio", "queue:avg", "await:seconds"))
                if now[0] >= busiest.get(device, (0.0, 0.0, 0.0))[0]:
                    busiest[device] = now  # type: ignore[assignment]
            time.sleep(POLL)
    finally:
        out = load.stop()
    shown = ", ".join(
        f"{d} {b:.0%} busy, queue {q:.1f}, await {a * 1000:.2f} ms" for d, (b, q, a) in sorted(busiest.items())
    )
    ROWS.append(f"| flash, no knob, deep fast load ({out.removeprefix('lab: ')}) | none expected | | {shown} | "
                f"{', '.join(sorted(seen)) or 'none'} | |")  # fmt: skip
    print(f"\n{ROWS[-1]}")
    assert load.proc.returncode == 0
    assert not media, f"media alerts under a deep but fast load on flash: {media}"


def names_both(role: str) -> Any:
    def check(alert: dict[str, Any]) -> None:
        description = alert["annotations"]["description"]
        print(f"\ndescription: {description}")
        assert all(f"osd.{osd} ({role})" in description for osd in HOST_OSDS), description

    return check


def test_a_saturated_shared_db_device_fires_one_alert_naming_it_and_its_osds(flash_lab: LabHandle) -> None:
    host = flash_lab.lab.topo.host_of(HOST_OSDS[0]).crush_name
    db = devices_of(flash_lab, HOST_OSDS[0])["db"]
    knob_fires_then_resolves(
        flash_lab,
        # 20 IOPS: each OSD's kv sync thread then waits on the DB device for every WAL write, and both
        # keep it busy (at 100 IOPS their commits leave it idle a fifth of the time; at 30 IOPS it was
        # 89-93 % busy, at 20 IOPS 87-94 %: the lab profile's busy line is 80 %, alerts/profiles.py says why)
        ["media", "--host", "1", "--device", "db", "--iops", "20", "--mbps", "1"],
        "small-random-write",
        {"alertname": "PerfwatchDeviceSaturated", "hostname": host, "device": db, "kind": "ssd"},
        "flash, shared DB device (db of osd.0, osd.3) at 20 IOPS, 1 MB/s; 4 KiB random writes",
        on_fire=names_both("db"),
    )


def test_a_saturated_flash_data_device_fires_one_alert_naming_both_osds_on_it(flash_lab: LabHandle) -> None:
    host = flash_lab.lab.topo.host_of(HOST_OSDS[0]).crush_name
    data = devices_of(flash_lab, HOST_OSDS[0])["block"]
    knob_fires_then_resolves(
        flash_lab,
        ["media", "--host", "1", "--device", "block", "--iops", "300", "--mbps", "10"],
        "large-write",
        {"alertname": "PerfwatchDeviceSaturated", "hostname": host, "device": data, "kind": "ssd"},
        "flash, data device split in two (osd.0, osd.3) at 300 IOPS, 10 MB/s; 4 MiB writes",
        on_fire=names_both("block"),
    )
