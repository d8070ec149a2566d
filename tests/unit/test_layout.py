"""The layout of the code: a file over the size guideline says why, no import cycle among a package's
modules, and the shared code (SHARED: the core, the daemon counters) importing nothing of the module's
other parts.

Imports are read with `ast` (not by importing), so those inside functions and under `if TYPE_CHECKING:`
count too: a cycle hidden from the interpreter is still two modules that each need the other.
To check another package, add it to PACKAGES (and, for the size guideline, to SIZE_GUIDED).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# (directory, the package name its modules are imported by); subpackages (benchmarks/kinds/, ...) included
PACKAGES = [
    (REPO / "mgr_module" / "perfwatch", "perfwatch"),
    (REPO / "exporters" / "perfwatch_host_exporter", "perfwatch_host_exporter"),
]
SIZE_GUIDED = [REPO / "mgr_module" / "perfwatch"]  # every .py file below these, recursively

# ======================================================================================================
# THE SIZE GUIDELINE: a file of SIZE_GUIDED over GUIDELINE_LINES lines says why in its module docstring.
# ======================================================================================================
# A guideline, not a cap: a file holds one concern and a folder one subsystem (the project's layout rule),
# and a concern that takes more than GUIDELINE_LINES lines stays whole rather than being cut where a
# count falls. Such a file's module docstring has a paragraph that starts with OVER_GUIDELINE followed by
# the reason (e.g. "Over 300 lines: one state machine, whose steps read in order."). Split a file when it
# holds two concerns, not because it is long; do not join small files just because the guideline allows.
GUIDELINE_LINES = 300
OVER_GUIDELINE = "Over 300 lines:"


def line_count(path: Path) -> int:
    return len(path.read_text().splitlines())


def says_why_it_is_long(source: str) -> bool:
    """Whether the module docstring has a paragraph starting with OVER_GUIDELINE and giving a reason."""
    docstring = ast.get_docstring(ast.parse(source)) or ""
    for paragraph in docstring.split("\n\n"):
        text = paragraph.strip()
        if text.startswith(OVER_GUIDELINE) and text[len(OVER_GUIDELINE) :].strip():
            return True
    return False


def long_files_not_saying_why(roots: list[Path]) -> dict[str, int]:
    """Path (relative to REPO when below it) -> lines, of every .py file over GUIDELINE_LINES whose docstring
    does not say why."""
    found = {}
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            lines = line_count(path)
            if lines > GUIDELINE_LINES and not says_why_it_is_long(path.read_text()):
                found[path.relative_to(REPO).as_posix() if path.is_relative_to(REPO) else str(path)] = lines
    return found


def test_a_file_over_the_size_guideline_says_why_in_its_docstring() -> None:
    unexplained = long_files_not_saying_why(SIZE_GUIDED)
    assert not unexplained, (
        "over {} lines without a docstring paragraph starting {!r} that says why (or split them where a "
        "concern ends): {}".format(
            GUIDELINE_LINES,
            OVER_GUIDELINE,
            ", ".join(f"{path} ({lines} lines)" for path, lines in sorted(unexplained.items())),
        )
    )


def test_the_size_guideline_asks_a_reason_of_long_files_only(tmp_path: Path) -> None:
    body = "x = 1\n" * GUIDELINE_LINES
    (tmp_path / "short.py").write_text('"""Short."""\n' + "x = 1\n" * (GUIDELINE_LINES - 1))
    (tmp_path / "silent.py").write_text('"""Long, and silent about it."""\n' + body)
    (tmp_path / "empty.py").write_text('"""Long.\n\nOver 300 lines:\n"""\n' + body)
    (tmp_path / "buried.py").write_text('"""Long. Over 300 lines: not a paragraph of its own."""\n' + body)
    (tmp_path / "comment.py").write_text("# Over 300 lines: in a comment, not the docstring\n" + body)
    (tmp_path / "explained.py").write_text(
        '"""Long.\n\nOver 300 lines: one state machine, read in order.\n"""\n' + body
    )
    assert sorted(long_files_not_saying_why([tmp_path])) == [
        str(tmp_path / name) for name in ("buried.py", "comment.py", "empty.py", "silent.py")
    ]


# ======================================================================================================
# NO IMPORT CYCLES among the modules of each of PACKAGES.
# ======================================================================================================


def module_name(path: Path, package_dir: Path, package_name: str) -> str:
    parts = [package_name, *path.relative_to(package_dir).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(node: ast.AST, package: str) -> list[str]:
    """The dotted names an import statement names, relative imports resolved against `package` (the
    package the importing module is in); [] for any other node."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        parts = package.split(".")
        base = parts[: len(parts) - (node.level - 1)]
        stem = ".".join(base + ([node.module] if node.module else []))
    else:
        stem = node.module or ""
    # `from . import store` names a module; `from .store import BenchStore` a member of one: both are
    # given as stem.name, and import_graph keeps the longest prefix that is a module.
    return [f"{stem}.{alias.name}" for alias in node.names]


def import_graph(package_dir: Path, package_name: str) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports (absolute or relative, anywhere in the file).
    Importing a module also imports its packages (`from .benchmarks.records.store import x` runs
    benchmarks/__init__.py): those edges are left out, as every module would otherwise depend on them."""
    files = {module_name(path, package_dir, package_name): path for path in sorted(package_dir.rglob("*.py"))}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            for target in imported_names(node, package):
                while target and target not in files:  # a member, or a name outside the package: its module
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected group of modules, as [a, b, ..., a]; [] when there is none."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def connect(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1 or node in graph.get(node, ()):
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return sorted(cycle_in(group, graph) for group in groups)


def cycle_in(group: set[str], graph: dict[str, set[str]]) -> list[str]:
    """A shortest cycle through the first module of a strongly connected group, as [a, b, ..., a]."""
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt in sorted(graph.get(node, set()) & group):
                if nxt == start:
                    return paths[node] + [start]
                if nxt not in paths:
                    paths[nxt] = paths[node] + [nxt]
                    following.append(nxt)
        frontier = following
    raise AssertionError(f"not a cycle: {sorted(group)}")


@pytest.mark.parametrize("package_dir,package_name", PACKAGES, ids=[name for _, name in PACKAGES])
def test_no_import_cycle(package_dir: Path, package_name: str) -> None:
    cycles = find_cycles(import_graph(package_dir, package_name))
    assert not cycles, "import cycles (pass what a function needs instead of importing back):\n" + "\n".join(
        "  " + " -> ".join(cycle) for cycle in cycles
    )


def test_find_cycles_reports_each_cycle_and_nothing_else() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "e"}, "e": {"e"}, "f": set()}
    assert find_cycles(graph) == [["a", "b", "c", "a"], ["e", "e"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_import_graph_resolves_relative_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\nfrom .sub.c import thing\nimport os\n")
    (pkg / "b.py").write_text("def f():\n    from .a import x\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "c.py").write_text("from .. import b\nfrom ..sub import d\nimport pkg.a\n")
    (pkg / "sub" / "d.py").write_text("")
    graph = import_graph(pkg, "pkg")
    assert graph == {
        "pkg": set(),
        "pkg.a": {"pkg.b", "pkg.sub.c"},
        "pkg.b": {"pkg.a"},
        "pkg.sub": set(),
        "pkg.sub.c": {"pkg.b", "pkg.sub.d", "pkg.a"},
        "pkg.sub.d": set(),
    }
    assert find_cycles(graph) == [["pkg.a", "pkg.b", "pkg.a"]]


def test_the_import_graph_reaches_into_the_subpackages() -> None:
    """benchmarks/ is a folder of folders: their modules, and the imports across them (`from ..lifecycle
    import x`), are in the graph the cycle test reads."""
    graph = import_graph(*PACKAGES[0])
    for sub in ("kinds", "records", "lifecycle", "judging"):
        assert any(name.startswith(f"perfwatch.benchmarks.{sub}.") for name in graph), sub
    assert "perfwatch.benchmarks.lifecycle.scratch_pool" in graph["perfwatch.benchmarks.kinds.rados"]
    assert "perfwatch.benchmarks.records.common" in graph["perfwatch.benchmarks.records.store"]
    assert "perfwatch.benchmarks.kinds.registry" in graph["perfwatch.benchmarks.runner"]


# ======================================================================================================
# ONE WAY: the code both daemons ship imports nothing of the mgr module's other parts.
# ======================================================================================================
# A package of perfwatch -> the packages its modules may import from perfwatch (itself among them).
# common/ (the HTTP server, the renderer, the metric model, the cache a scrape reads, the daemon counters,
# the version) is what the module and the host exporter both ship: packaging copies the folder whole into
# the exporter's package, so nothing in it may reach back into the module.
SHARED = {
    "perfwatch.common": ("perfwatch.common",),
    "perfwatch.common.daemon_counters": ("perfwatch.common.daemon_counters", "perfwatch.common"),
}


# The module's lower rooms: the seam to Ceph (ceph/) and the options (options/) are what the benchmarks,
# the collection and the commands build on, so they import none of them (a view of Ceph's maps a
# benchmark needs lives in ceph/, a time window's syntax in options/).
LOWER_ROOMS = {
    "perfwatch.ceph": ("perfwatch.ceph", "perfwatch.common"),
    "perfwatch.options": ("perfwatch.options", "perfwatch.common"),
}


def within(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == package or name.startswith(package + ".") for package in packages)


def imports_out_of(graph: dict[str, set[str]], package: str, allowed: tuple[str, ...]) -> list[str]:
    """'a -> b' for each module a of `package` that imports a module b outside `allowed`."""
    return sorted(
        f"{name} -> {target}"
        for name, targets in graph.items()
        if within(name, (package,))
        for target in targets
        if not within(target, allowed)
    )


@pytest.mark.parametrize("package", sorted(SHARED))
def test_the_shared_code_imports_only_inward(package: str) -> None:
    graph = import_graph(REPO / "mgr_module" / "perfwatch", "perfwatch")
    assert any(within(name, (package,)) for name in graph), f"no module of {package}"
    wrong = imports_out_of(graph, package, SHARED[package])
    assert not wrong, (
        f"{package} may import only {', '.join(SHARED[package])} of perfwatch (pass what it needs as "
        "arguments or callables instead):\n" + "\n".join("  " + line for line in wrong)
    )


def test_imports_out_of_finds_an_import_back_into_the_module(tmp_path: Path) -> None:
    pkg = tmp_path / "perfwatch"
    (pkg / "common").mkdir(parents=True)
    for name in ("__init__.py", "web.py", "common/__init__.py", "common/render.py", "common/server.py"):
        (pkg / name).write_text("")
    (pkg / "web.py").write_text("from .common import render\n")  # the module uses the shared code: fine
    (pkg / "common" / "server.py").write_text("from . import render\ndef app():\n    from .. import web\n")
    (pkg / "common" / "render.py").write_text("import perfwatch\n")
    graph = import_graph(pkg, "perfwatch")
    assert imports_out_of(graph, "perfwatch.common", ("perfwatch.common",)) == [
        "perfwatch.common.render -> perfwatch",
        "perfwatch.common.server -> perfwatch.web",
    ]
    assert imports_out_of(graph, "perfwatch.web", ("perfwatch.web", "perfwatch.common")) == []


@pytest.mark.parametrize("package", sorted(LOWER_ROOMS))
def test_the_seam_and_the_options_import_nothing_above_them(package: str) -> None:
    graph = import_graph(REPO / "mgr_module" / "perfwatch", "perfwatch")
    assert any(within(name, (package,)) for name in graph), f"no module of {package}"
    wrong = imports_out_of(graph, package, LOWER_ROOMS[package])
    assert not wrong, f"{package} may import only {', '.join(LOWER_ROOMS[package])} of perfwatch:\n" + "\n".join(
        "  " + line for line in wrong
    )
