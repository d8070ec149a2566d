"""The module runs in ceph-mgr's embedded Python and the host exporter on hosts' own Python, either as
old as 3.6: vermin must find nothing newer in them."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import paths

REPO = paths.REPO
MODULE_DIR = REPO / "mgr_module" / "perfwatch"


EXPORTER_DIR = REPO / "exporters" / "perfwatch_host_exporter"


@pytest.mark.parametrize("package", [MODULE_DIR, EXPORTER_DIR], ids=("module", "exporter"))
def test_code_needs_nothing_newer_than_python_3_6(package: Path) -> None:
    vermin = shutil.which("vermin") or str(Path(sys.executable).parent / "vermin")
    proc = subprocess.run(
        [vermin, "-t=3.6-", "--violations", "--no-tips", "--eval-annotations", str(package)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_module_imports_no_ceph_code_outside_the_mgr() -> None:
    # The pure modules must import without ceph-mgr; only module.py, standby.py and mgr_adapter.py need mgr_module.
    code = (
        "import perfwatch, perfwatch.options.declared, perfwatch.commands.status_report, "
        "perfwatch.commands.output; print('ok')"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=MODULE_DIR.parent, capture_output=True, text=True, check=False
    )
    assert proc.stdout.strip() == "ok", proc.stderr
