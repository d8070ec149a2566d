"""For tests: the scripts of packaging/ as modules (packaging/ is a folder of tools, not a package), and the
module files the host exporter ships."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parent.parent


def packaging_tool(name: str) -> ModuleType:
    """packaging/<name>.py, loaded."""
    spec = importlib.util.spec_from_file_location(name, REPO / "packaging" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def shared_module_files() -> list[str]:
    """The files of the mgr module's package the host exporter ships: perfwatch/__init__.py and the whole
    common/ folder (its tracked .py files), as repository paths."""
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "mgr_module/perfwatch/common"], capture_output=True, text=True, check=True
    ).stdout.split()
    return ["mgr_module/perfwatch/__init__.py", *sorted(f for f in listed if f.endswith(".py"))]
