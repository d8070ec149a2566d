"""The lab's state.json carries its version. An older file (no version) is read as before; a newer or broken
one is an error that names the file and says what to do, and `down` does not guess past it."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lab import procs
from lab.config import LabConfig, LabError
from lab.procs import ProcRef
from lab.state import STATE_FILE, STATE_VERSION, LabState, StateUnreadable, forget_process, record_process
from tests import paths

REPO = paths.REPO
LAB_NAME = "zzstate"  # no real lab's name: `down` below looks for cgroups named after it


def sample() -> LabState:
    return LabState(
        fsid="6b1f3c2e-0000-4000-8000-000000000000",
        daemons={"mon.a": ProcRef(1234, 5678), "osd.0": ProcRef(1240, 5690)},
        loops={"0": "/dev/loop7"},
        netns=[f"{LAB_NAME}-h1"],
        links=[f"{LAB_NAME}-br", f"{LAB_NAME}-h1"],
        knobs={"cpu:osd.0": {"kind": "cpu", "target": "osd.0", "group": f"{LAB_NAME}-osd.0", "cores": 0.5}},
        ceph_version="20.2.4+ds-1",
        rootfs="/var/cache/perfwatch-lab/rootfs/forky-20.2.4+ds-1",
        mount_ns=ProcRef(1200, 5600),
    )


def unversioned(state: LabState) -> str:
    """state.json as the lab wrote it before versioning."""
    return json.dumps(
        {
            "fsid": state.fsid,
            "daemons": {k: v.to_dict() for k, v in state.daemons.items()},
            "loops": state.loops,
            "netns": state.netns,
            "links": state.links,
            "knobs": state.knobs,
        },
        indent=2,
        sort_keys=True,
    )


def test_the_state_is_written_with_its_version_and_read_back(tmp_path: Path) -> None:
    sample().save(tmp_path)
    assert json.loads((tmp_path / STATE_FILE).read_text())["version"] == STATE_VERSION == 2
    assert LabState.load(tmp_path) == sample()


def test_no_file_is_an_empty_state(tmp_path: Path) -> None:
    assert LabState.load(tmp_path) == LabState()


def test_a_file_from_before_versioning_is_read_as_before(tmp_path: Path) -> None:
    (tmp_path / STATE_FILE).write_text(unversioned(sample()))
    # A lab from before releases ran this machine's packages: no version recorded, no rootfs
    assert LabState.load(tmp_path) == dataclasses.replace(sample(), ceph_version="", rootfs="", mount_ns=None)
    (tmp_path / STATE_FILE).write_text('{"fsid": "x", "daemons": {"mon.a": {"pid": 1, "start_ticks": 2}}}')
    assert LabState.load(tmp_path) == LabState(fsid="x", daemons={"mon.a": ProcRef(1, 2)})


def test_a_newer_version_says_which_file_and_to_use_the_newer_lab(tmp_path: Path) -> None:
    data = json.loads(sample().to_json())
    data["version"] = STATE_VERSION + 1
    data["daemons"] = [{"name": "mon.a", "pid": 1234}]  # whatever a newer lab writes
    (tmp_path / STATE_FILE).write_text(json.dumps(data))
    with pytest.raises(StateUnreadable) as raised:
        LabState.load(tmp_path)
    text = str(raised.value)
    assert str(tmp_path / STATE_FILE) in text and f"newer lab (state version {STATE_VERSION + 1}" in text
    assert "down" in text and "checkout that started" in text
    assert isinstance(raised.value, LabError)


BROKEN = {
    "not JSON": "{ definitely not json",
    "empty": "",
    "a list": "[]",
    "version as text": '{"version": "1"}',
    "version zero": '{"version": 0}',
    "daemons as a list": '{"daemons": ["mon.a"]}',
    "a pid as text": '{"daemons": {"mon.a": {"pid": "1234", "start_ticks": 5}}}',
    "a pid missing": '{"daemons": {"mon.a": {"start_ticks": 5}}}',
    "a pid of true": '{"daemons": {"mon.a": {"pid": true, "start_ticks": 5}}}',
    "a negative pid": '{"daemons": {"mon.a": {"pid": -1, "start_ticks": 5}}}',
    "netns as text": '{"netns": "pwlab-h1"}',
    "links with numbers": '{"links": [1, 2]}',
    "loops as a list": '{"loops": ["/dev/loop0"]}',
    "knobs of strings": '{"knobs": {"cpu:osd.0": "on"}}',
    "fsid as a number": '{"fsid": 7}',
    "a version as a number": '{"ceph_version": 18.2}',
    "a mount namespace as a pid": '{"mount_ns": 1200}',
    "a mount namespace without start time": '{"mount_ns": {"pid": 1200}}',
}


@pytest.mark.parametrize("what", sorted(BROKEN))
def test_a_broken_file_says_which_file_and_what_to_do(tmp_path: Path, what: str) -> None:
    path = tmp_path / STATE_FILE
    path.write_text(BROKEN[what])
    with pytest.raises(StateUnreadable) as raised:
        LabState.load(tmp_path)
    text = str(raised.value)
    assert text.startswith(f"{path} is unreadable (")
    assert "does not guess" in text and f"mv {path} {path}.bad" in text and "lab --dir" in text


def test_a_file_of_binary_garbage_is_broken_too(tmp_path: Path) -> None:
    (tmp_path / STATE_FILE).write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(StateUnreadable, match="is unreadable"):
        LabState.load(tmp_path)


def lab(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lab", *args], cwd=REPO, capture_output=True, text=True, timeout=60, check=False
    )


def test_down_stops_at_a_broken_state_with_one_line_and_proceeds_once_it_is_moved_away(tmp_path: Path) -> None:
    directory = tmp_path / "lab"
    LabConfig(directory=directory, name=LAB_NAME).save()
    path = directory / STATE_FILE
    path.write_text('{"daemons": {"mon.a": {"pid": "garbled"')
    proc = lab("--dir", str(directory), "down")
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert proc.stderr.startswith(f"lab: error: {path} is unreadable")
    assert path.exists() and (directory / "lab.json").exists(), "nothing removed while the state is unknown"
    status = lab("--dir", str(directory), "status")
    assert status.returncode == 1 and "Traceback" not in status.stderr
    path.rename(directory / (STATE_FILE + ".bad"))  # what the message says to do, once the processes are stopped
    proc = lab("--dir", str(directory), "down")
    assert proc.returncode == 0, proc.stderr
    assert not directory.exists()


def test_a_helper_process_is_recorded_in_the_file_as_it_is_now_and_forgotten_again(tmp_path: Path) -> None:
    sample().save(tmp_path)
    record_process(tmp_path, "load.1", os.getpid())
    recorded = LabState.load(tmp_path)
    assert procs.is_alive(recorded.daemons["load.1"]) and recorded.daemons["load.1"].pid == os.getpid()
    assert {k: v for k, v in recorded.daemons.items() if k != "load.1"} == sample().daemons
    assert recorded.knobs == sample().knobs
    forget_process(tmp_path, "load.1")
    assert LabState.load(tmp_path) == sample()
    forget_process(tmp_path, "load.1")  # twice: nothing to do
    assert LabState.load(tmp_path) == sample()
