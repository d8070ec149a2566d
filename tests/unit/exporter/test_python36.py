"""The exporter needs only the standard library and the module's pure code (its 3.6 check: test_module_python36)."""

import ast
import sys

from tests import paths

PACKAGE = paths.REPO / "exporters" / "perfwatch_host_exporter"
ALLOWED = set(sys.stdlib_module_names) | {"perfwatch", "perfwatch_host_exporter"}


def test_exporter_imports_only_the_standard_library_and_perfwatch() -> None:
    found = set()
    for path in PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    assert "perfwatch" in found, "the renderer is the module's"
    assert found <= ALLOWED, found - ALLOWED
