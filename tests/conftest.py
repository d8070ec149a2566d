"""Puts the checkout and the module's folder on sys.path so tests import `lab` and `perfwatch`."""

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
for path in (REPO, REPO / "mgr_module", REPO / "exporters"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
