"""The lab CLI's answers to bad input: one line, no stack trace, nothing created."""

import os
import subprocess
import sys
from pathlib import Path

from tests import paths

REPO = paths.REPO


def lab(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lab", *args], cwd=REPO, capture_output=True, text=True, timeout=60, check=False
    )


def test_impossible_topology_is_one_line_and_creates_nothing(tmp_path: Path) -> None:
    proc = lab("--dir", str(tmp_path / "lab"), "up", "--hosts", "5")
    assert proc.returncode == 1
    assert proc.stderr.strip() == "lab: error: --hosts 5: must be between 1 and the OSD count (3)"
    assert not (tmp_path / "lab").exists()


def test_status_of_no_lab_says_how_to_start_one(tmp_path: Path) -> None:
    proc = lab("--dir", str(tmp_path), "status")
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert "python3 -m lab up" in proc.stderr


def test_down_without_a_lab_is_a_no_op(tmp_path: Path) -> None:
    proc = lab("--dir", str(tmp_path / "none"), "down")
    assert proc.returncode == 0
    assert "nothing to do" in proc.stdout


def test_a_reader_that_stops_reading_gets_no_stack_trace(tmp_path: Path) -> None:
    """`python3 -m lab status | head -2`: the pipe closes before the lab has printed all; it stops quietly."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before anything is written
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "lab", "--dir", str(tmp_path / "none"), "down"],
            cwd=REPO,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        os.close(write_end)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == "", proc.stderr


def test_unknown_daemon_names_the_choices(tmp_path: Path) -> None:
    from lab.config import LabConfig

    LabConfig(directory=tmp_path).save()
    proc = lab("--dir", str(tmp_path), "stop", "osd.9")
    assert proc.returncode == 1
    assert "no daemon 'osd.9'" in proc.stderr and "osd.2" in proc.stderr


def test_bad_layout_options_are_one_line_and_create_nothing(tmp_path: Path) -> None:
    proc = lab("--dir", str(tmp_path / "lab"), "up", "--osds-per-device", "9")
    assert proc.returncode == 1
    assert proc.stderr.strip() == "lab: error: --osds-per-device 9: must be between 1 and 4"
    proc = lab("--dir", str(tmp_path / "lab"), "up", "--backing", "file", "--db-device", "shared")
    assert proc.returncode == 1 and "need loop devices" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "lab").exists()


def test_a_media_knob_needs_an_osd_or_a_host_and_a_known_device(tmp_path: Path) -> None:
    from lab.config import LabConfig

    LabConfig(directory=tmp_path).save()
    proc = lab("--dir", str(tmp_path), "saturate", "media", "--iops", "100")
    assert proc.returncode == 2 and "one of the arguments --osd --host is required" in proc.stderr
    proc = lab("--dir", str(tmp_path), "saturate", "media", "--host", "1", "--device", "wal")
    assert proc.returncode == 2 and "invalid choice: 'wal'" in proc.stderr
    proc = lab("--dir", str(tmp_path), "saturate", "media", "--host", "9")
    assert proc.returncode == 1 and "no host '9'" in proc.stderr
