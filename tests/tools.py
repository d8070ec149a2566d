"""The scripts of packaging/ as modules, for tests (packaging/ is a folder of tools, not a package)."""

from __future__ import annotations

import importlib.util
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
