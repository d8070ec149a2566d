"""Every in-repository path and anchor that a document, a docstring or a comment names exists.

Read: every Markdown file of the repository (`git ls-files --cached --others --exclude-standard`), the host
exporter's man page, and the docstrings and comments of every Python file. A reference is a Markdown link
without a scheme, or a word shaped like a path (`first/.../name.ext`, `first/.../`) whose first part is a
folder of the repository root or of a folder above the file; a `#anchor` after a Markdown file must be the
GitHub slug of one of its headings. The whole rule, and what is not a reference: docs/decisions/doc-references.md.
"""

from __future__ import annotations

import ast
import fnmatch
import io
import itertools
import re
import subprocess
import tokenize
from collections.abc import Iterator
from functools import cache
from pathlib import Path, PurePosixPath

REPO = Path(__file__).resolve().parents[2]
MAN_PAGES = ("packaging/perfwatch-host-exporter.8",)

LINK = re.compile(r"\[[^\]]*\]\(<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\)")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
# A path part: names, wildcards `*`, placeholders `<name>`, alternatives `{a,b}`.
PART = r"(?:[\w.*<>-]|\{[\w.,-]+\})+"
PATH = re.compile(rf"(?<![\w./:~$@#-])([A-Za-z0-9_][\w.-]*(?:/{PART})*/(?:{PART})?)(?:#([\w-]+))?")
DOCUMENT = re.compile(r"(?<![\w./:~$@#-])([\w-]+\.md)(?:#([\w-]+))?\b")
POSSESSIVE = re.compile(r"\b[\w-]+'s\s+`?$")
EXTENSION = re.compile(r"\.[A-Za-z0-9]+$")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^ {0,3}(```|~~~)")


@cache
def listed() -> frozenset[str]:
    """The repository's files, as paths relative to the root."""
    out = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return frozenset(name for name in out.splitlines() if (REPO / name).is_file())


@cache
def folders() -> frozenset[str]:
    return frozenset(str(parent) for name in listed() for parent in PurePosixPath(name).parents if str(parent) != ".")


def exists(path: str) -> bool:
    """Whether a root-relative path (wildcards allowed, a final `/` for a folder) names something listed."""
    path = str(PurePosixPath(path)) + ("/" if path.endswith("/") else "")
    if path.endswith("/"):
        pattern = path.rstrip("/")
        return any(fnmatch.fnmatchcase(folder, pattern) for folder in folders())
    if not any(c in path for c in "*?["):
        return path in listed() or path in folders()
    return any(fnmatch.fnmatchcase(name, path) for name in itertools.chain(listed(), folders()))


def expand(word: str) -> list[str]:
    """`{a,b}` alternatives spelt out, `<placeholders>` turned into `*`."""
    word = re.sub(r"<[^<>/]*>", "*", word)
    match = re.search(r"\{([^{}]*)\}", word)
    if not match:
        return [word]
    return [
        alt
        for choice in match.group(1).split(",")
        for alt in expand(word[: match.start()] + choice + word[match.end() :])
    ]


def bases(name: str) -> list[str]:
    """The folders a file's relative paths may start from: its own, each one above, the root ('')."""
    return [str(parent) if str(parent) != "." else "" for parent in PurePosixPath(name).parents]


def join(base: str, path: str) -> str:
    return f"{base}/{path}" if base else path


def normalise(path: str) -> str | None:
    """A root-relative path with `..` resolved; None if it leaves the repository."""
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(part)
    return "/".join(parts) + ("/" if path.endswith("/") else "")


def slug(heading: str) -> str:
    """GitHub's anchor of a heading's text."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link reads as its text
    text = re.sub(r"<[^>]+>", "", text)
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


@cache
def anchors(document: str) -> frozenset[str]:
    found: list[str] = []
    fenced = False
    for line in (REPO / document).read_text().splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        match = HEADING.match(line)
        if match and not fenced:
            base = slug(match.group(2))
            repeats = sum(1 for a in found if a == base or re.fullmatch(re.escape(base) + r"-\d+", a))
            found.append(f"{base}-{repeats}" if repeats else base)
    return frozenset(found)


def markdown_lines(name: str) -> Iterator[tuple[int, str]]:
    yield from enumerate((REPO / name).read_text().splitlines(), 1)


def python_lines(name: str) -> Iterator[tuple[int, str]]:
    """The lines of a Python file's docstrings, and its comments, with their line numbers."""
    source = (REPO / name).read_text()
    lines = source.splitlines()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) or not node.body:
            continue
        first = node.body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            end = first.value.end_lineno or first.value.lineno
            for number in range(first.value.lineno, end + 1):
                yield number, lines[number - 1]
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string


def scanned() -> list[str]:
    return sorted(n for n in listed() if n.endswith((".md", ".py")) or n in MAN_PAGES)


def anchor_problem(document: str, anchor: str | None) -> str | None:
    if anchor is None or not document.endswith(".md") or "*" in document:
        return None
    if anchor not in anchors(document):
        return f"{document} has no heading whose anchor is #{anchor}"
    return None


def link_problems(name: str, target: str) -> list[str]:
    if SCHEME.match(target):
        return []
    path, _, anchor = target.partition("#")
    document = normalise(path if path.startswith("/") else join(bases(name)[0], path)) if path else name
    if document is None or not exists(document):
        return [f"link ({target}): {document or path} does not exist"]
    problem = anchor_problem(document.rstrip("/"), anchor or None)
    return [f"link ({target}): {problem}"] if problem else []


def path_problems(name: str, word: str, anchor: str | None) -> list[str]:
    word = word.rstrip(".,;:")
    parts = word.split("/")
    if "..." in word or "…" in word or "*" in parts[0] or "<" in parts[0]:
        return []
    if not word.endswith("/") and not EXTENSION.search(parts[-1]):
        return []
    starts = [base for base in bases(name) if join(base, parts[0]) in folders()]
    if not starts:
        return []
    for base in starts:
        found = [join(base, alt) for alt in expand(word) if exists(join(base, alt))]
        if len(found) == len(expand(word)):
            problems = [anchor_problem(f, anchor) for f in found]
            return [f"`{word}#{anchor}`: {p}" for p in problems if p]
    return [f"`{word}` does not exist (from {' or '.join(b or 'the root' for b in starts)})"]


def document_problems(name: str, word: str, anchor: str | None) -> list[str]:
    for base in bases(name):
        if exists(join(base, word)):
            problem = anchor_problem(join(base, word), anchor)
            return [f"`{word}#{anchor}`: {problem}"] if problem else []
    return [f"`{word}` is no document of the repository (nor in {bases(name)[0] or 'the root'} or above)"]


def line_problems(name: str, line: str) -> list[str]:
    """The broken references of one line of a file."""
    problems: list[str] = []
    if name.endswith(".md"):
        for match in LINK.finditer(line):
            problems += link_problems(name, match.group(1))
        line = LINK.sub(lambda m: " " * len(m.group(0)), line)  # a link's target is not read again as a path
    for match in PATH.finditer(line):
        if not POSSESSIVE.search(line[: match.start()]):
            problems += path_problems(name, match.group(1), match.group(2))
    for match in DOCUMENT.finditer(line):
        problems += document_problems(name, match.group(1), match.group(2))
    return list(dict.fromkeys(problems))


def references_of(name: str) -> list[str]:
    """Each broken reference of one file, as `file:line: what`."""
    lines = python_lines(name) if name.endswith(".py") else markdown_lines(name)
    return [f"{name}:{number}: {problem}" for number, line in lines for problem in line_problems(name, line)]


def test_the_scan_reads_documents_docstrings_and_the_man_page() -> None:
    names = scanned()
    assert {"README.md", "alerts/runbook.md", "alerts/profiles.py", *MAN_PAGES} <= set(names)
    assert len([n for n in names if n.endswith(".py")]) > 100


def test_every_path_and_anchor_a_document_or_docstring_names_exists() -> None:
    broken = [problem for name in scanned() for problem in references_of(name)]
    assert not broken, "references to nothing in the repository:\n" + "\n".join(broken)


def test_the_rule_finds_what_is_broken_and_leaves_what_is_not_a_path() -> None:
    broken = {
        "see [the scrape jobs](alerts/README.md#what-prometheus-scrapes)": "no heading whose anchor",
        "[runbook](runbook.md)": "does not exist",
        "[down](#nowhere-at-all)": "no heading whose anchor",
        "cited in `tests/cluster/test_rule_inputs.py`": "does not exist",
        "The rule (DESIGN.md, a section)": "no document of the repository",
        "`alerts/generated/<profile>/rules.yml`": "does not exist",
        "alerts/generated/production/{recording,verdicts}.yml": "does not exist",
    }
    for line, expected in broken.items():
        found = line_problems("README.md", line)
        assert len(found) == 1 and expected in found[0], (line, found)
    fine = {
        "[what to scrape](alerts/README.md#what-prometheus-must-scrape), [up](#developing)": "README.md",
        "[the runbook](../../alerts/runbook.md#perfwatchdevicesaturated)": "deploy/cephadm/README.md",
        "`alerts/generated/<profile>/recording.yml`, alerts/generated/production/{recording,alerts}.yml": "x.md",
        "`alerts/tests/*.test.yml` and `dashboards/generated/` and `dev/bench/rule_cost.py`.": "x.md",
        "/proc/self/exe, .lab/, build/deb/, src/pybind/mgr/mgr_module.py, <https://x.io/alerts/none.py>": "x.md",
        "I/O at 3 MB/s; the store key bench/aside/<key>/<time>; kubectl exec deploy/rook-ceph-tools": "x.py",
        "Rook's deploy/examples/cluster.yaml, Ceph's `mgr_module.py`, mgr/perfwatch/... and README.md": "x.py",
    }
    for line, name in fine.items():
        assert line_problems(name, line) == [], line
    assert line_problems(
        "mgr_module/perfwatch/benchmarks/runs.py", "benchmarks/lifecycle/capacity.py, benchmarks/gone.py"
    ) == ["`benchmarks/gone.py` does not exist (from mgr_module/perfwatch)"]


def test_anchors_are_githubs_slugs() -> None:
    assert slug("What Prometheus must scrape") == "what-prometheus-must-scrape"
    assert slug("`perfwatch` / OSD detail (per OSD)") == "perfwatch--osd-detail-per-osd"
    assert slug("Trust only [real](x.md) daemons_now") == "trust-only-real-daemons_now"
