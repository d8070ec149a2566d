"""The lab's OSD device layouts (layout.py): the classic one, flash, several OSDs per device, a shared DB
device per host; and the checks of their options."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from lab import layout
from lab.config import GIB, LabConfig, LabError
from lab.layout import Part
from lab.osd_devices import image
from lab.state import LabState
from lab.topology import plan as topology


def devices(**options: object) -> list[layout.Device]:
    config = dataclasses.replace(LabConfig(), **options)  # type: ignore[arg-type]
    config.validate()
    return layout.plan(config, topology(config))


def test_the_classic_layout_is_one_plain_loop_device_per_osd_keyed_by_its_id() -> None:
    found = devices(osds=3, hosts=1)
    assert [d.key for d in found] == ["0", "1", "2"]
    assert all(not d.stacked and d.rotational and not d.partitioned for d in found)
    assert found[1].parts == (Part(1, "block", 0, 3 * GIB),)


def test_no_loop_devices_with_backing_file() -> None:
    assert devices(osd_backing="file") == []


def test_flash_alone_stacks_one_device_per_osd_that_does_not_rotate() -> None:
    found = devices(osds=3, hosts=3, media="flash")
    assert [(d.key, d.host_index, d.stacked, d.rotational) for d in found] == [
        ("h1-data0", 1, True, False),
        ("h2-data0", 2, True, False),
        ("h3-data0", 3, True, False),
    ]
    assert all(not d.partitioned for d in found)


def test_two_osds_per_device_share_a_host_device_in_two_partitions() -> None:
    found = devices(osds=6, hosts=3, osds_per_device=2)
    h2 = next(d for d in found if d.key == "h2-data0")
    # OSDs go round-robin over hosts: host 2 has osd.1 and osd.4
    assert h2.parts == (Part(1, "block", 1, 3 * GIB), Part(4, "block", 2, 3 * GIB))
    assert h2.size_bytes == 6 * GIB and h2.rotational and h2.stacked
    assert len(found) == 3


def test_an_odd_osd_out_gets_a_device_of_its_own_unsplit() -> None:
    found = devices(osds=3, hosts=1, osds_per_device=2)
    assert [(d.key, [p.osd_id for p in d.parts], d.partitioned) for d in found] == [
        ("h1-data0", [0, 1], True),
        ("h1-data1", [2], False),
    ]


def test_a_shared_db_device_holds_every_osd_of_its_host() -> None:
    found = devices(osds=6, hosts=3, db_device="shared", db_size_gib=0.5, media="flash")
    db = next(d for d in found if d.key == "h3-db")
    assert db.parts == (Part(2, "db", 1, GIB // 2), Part(5, "db", 2, GIB // 2))
    assert db.stacked and not db.rotational
    assert [d.key for d in found] == ["h1-data0", "h1-data1", "h1-db", "h2-data0", "h2-data1", "h2-db",
                                      "h3-data0", "h3-data1", "h3-db"]  # fmt: skip


def test_partitions_are_aligned_and_the_image_holds_them() -> None:
    parts = (Part(1, "block", 1, 3 * GIB), Part(4, "block", 2, 3 * GIB + 1000))
    table = layout.partition_table(parts)
    assert table == [(1, 2048, 3 * GIB // 512), (2, 2048 + 3 * GIB // 512, 3 * GIB // 512)]
    device = layout.Device("h2-data0", 2, 6 * GIB, parts, True, True)
    assert layout.image_size(device) == (2048 + 2 * 3 * GIB // 512) * 512
    assert all(start % 2048 == 0 and sectors % 2048 == 0 for _, start, sectors in table)


def test_image_names_keep_the_classic_ones() -> None:
    assert image(Path("/lab"), "3") == Path("/lab/devices/osd.3.img")
    assert image(Path("/lab"), "h2-db") == Path("/lab/devices/h2-db.img")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"media": "ssd"}, "--media 'ssd': must be one of disk, flash"),
        ({"db_device": "optane"}, "--db-device 'optane': must be one of none, shared"),
        ({"osds_per_device": 0}, "--osds-per-device 0: must be between 1 and 4"),
        ({"osds_per_device": 5}, "--osds-per-device 5: must be between 1 and 4"),
        ({"db_size_gib": 0.1}, "--db-size 0.1 GiB"),
        ({"osd_backing": "file", "media": "flash"}, "need loop devices"),
        ({"osd_backing": "file", "db_device": "shared"}, "need loop devices"),
    ],
)
def test_bad_layout_options_are_refused_with_the_rule(options: dict[str, object], message: str) -> None:
    with pytest.raises(LabError, match=message.replace("(", r"\(").replace(")", r"\)")):
        devices(**options)


def test_the_layout_options_survive_lab_json(tmp_path: Path) -> None:
    config = LabConfig(directory=tmp_path, media="flash", osds_per_device=2, db_device="shared", db_size_gib=0.5)
    assert LabConfig.from_json(config.to_json()) == config


def test_detach_order_is_upper_devices_first_with_their_backing(monkeypatch: pytest.MonkeyPatch) -> None:
    from lab import loopdev, osd_devices

    detached: list[tuple[str, Path]] = []
    monkeypatch.setattr(loopdev, "detach", lambda dev, backing: detached.append((dev, backing)) or [])
    state = LabState()
    # as the state file holds them: keys sorted, a lower device's key after its upper one's
    state.loops.update({"0": "/dev/loop1", "h1-data0": "/dev/loop5", "h1-data0-disk": "/dev/loop4",
                        "h1-db": "/dev/loop7", "h1-db-disk": "/dev/loop6"})  # fmt: skip
    state = LabState.from_json(state.to_json())
    assert osd_devices.detach_all(Path("/lab"), state) == []
    uppers, rest = detached[:2], detached[2:]
    assert sorted(uppers) == [("/dev/loop5", Path("/dev/loop4")), ("/dev/loop7", Path("/dev/loop6"))]
    assert sorted(rest) == [
        ("/dev/loop1", Path("/lab/devices/osd.0.img")),
        ("/dev/loop4", Path("/lab/devices/h1-data0.img")),
        ("/dev/loop6", Path("/lab/devices/h1-db.img")),
    ]
