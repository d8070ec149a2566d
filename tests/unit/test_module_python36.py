"""The module runs in ceph-mgr's embedded Python, as old as 3.6: vermin must find nothing newer."""

import shutil
import subprocess
import sys
from pathlib import Path

MODULE_DIR = Path(__file__).resolve().parents[2] / "mgr_module" / "perfwatch"


def test_module_code_needs_nothing_newer_than_python_3_6() -> None:
    vermin = shutil.which("vermin") or str(Path(sys.executable).parent / "vermin")
    proc = subprocess.run(
        [vermin, "-t=3.6-", "--violations", "--no-tips", "--eval-annotations", str(MODULE_DIR)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_module_imports_no_ceph_code_outside_the_mgr() -> None:
    # The pure modules must import without ceph-mgr; module.py is the only one that needs mgr_module.
    code = "import perfwatch, perfwatch.options, perfwatch.status, perfwatch.output; print('ok')"
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=MODULE_DIR.parent, capture_output=True, text=True, check=False
    )
    assert proc.stdout.strip() == "ok", proc.stderr
