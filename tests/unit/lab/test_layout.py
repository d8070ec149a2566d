"""No import cycle among the modules of lab/: each imports what it needs, nothing imports it back.

The graph and the cycle search are test_layout.py's (imports read with `ast`, so those under
`if TYPE_CHECKING:` and inside functions count too). Here: lab/, which is not a package of the module.
"""

from __future__ import annotations

from pathlib import Path

from tests import paths
from tests.unit.test_layout import find_cycles, import_graph

REPO = paths.REPO


def test_the_lab_has_no_import_cycle() -> None:
    cycles = find_cycles(import_graph(REPO / "dev" / "lab", "lab"))
    assert not cycles, "import cycles in lab/ (pass what a function needs, not the whole lab):\n" + "\n".join(
        "  " + " -> ".join(cycle) for cycle in cycles
    )


def test_the_lab_graph_is_read_from_every_module() -> None:
    graph = import_graph(REPO / "dev" / "lab", "lab")
    assert {"lab", "lab.__main__", "lab.cluster", "lab.daemons", "lab.knobs", "lab.load"} <= set(graph)
    assert {"lab.daemons", "lab.knobs", "lab.probes", "lab.config"} <= graph["lab.cluster"]
    assert "lab.cli" in graph["lab.__main__"]


def test_the_cycle_the_lab_had_is_found_though_one_side_is_under_type_checking(tmp_path: Path) -> None:
    """cluster.py imported knobs; knobs.py imported cluster's Lab only for its annotations."""
    pkg = tmp_path / "lab"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "config.py").write_text("class LabError(Exception):\n    pass\n")
    (pkg / "cluster.py").write_text("from . import knobs\nfrom .config import LabError\n")
    (pkg / "knobs.py").write_text(
        "from typing import TYPE_CHECKING\n\nfrom .config import LabError\n\n"
        "if TYPE_CHECKING:\n    from .cluster import Lab\n"
    )
    graph = import_graph(pkg, "lab")
    assert graph["lab.knobs"] == {"lab.config", "lab.cluster"}
    assert find_cycles(graph) == [["lab.cluster", "lab.knobs", "lab.cluster"]]
