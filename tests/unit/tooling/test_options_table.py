"""The README's options table is generated from the options the mgr reads (dev/tooling/options_table.py):
stale, or drawn wrongly, fails here."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests import paths
from tooling import options_table

REPO = paths.REPO


def test_the_readme_table_is_the_generated_one() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "dev" / "tooling" / "options_table.py"), "--check"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr


def test_every_option_has_a_row_with_its_default_and_bounds() -> None:
    table = options_table.render()
    for option in options_table.OPTIONS:
        row = next(line for line in table.splitlines() if line.startswith(f"| `{option['name']}` |"))
        cells = [c.strip() for c in row.strip("|").split(" | ")]
        assert cells[1] == option["type"], row
        if "min" in option:
            assert cells[3] == f"{option['min']}\u2013{option['max']}", row
        if "enum_allowed" in option:
            assert all(f"`{v}`" in cells[3] for v in option["enum_allowed"]), row


def test_markdown_special_characters_stay_text() -> None:
    table = options_table.render(
        [{"name": "x", "type": "str", "default": "a|b", "desc": "per <mgr id> | `<kept>`", "long_desc": "<id>"}]
    )
    assert "per &lt;mgr id&gt; \\| `&lt;kept&gt;`" not in table  # code spans keep their text
    assert "per &lt;mgr id&gt; \\| `<kept>`" in table
    assert "`a\\|b`" in table
    assert "- `x`: &lt;id&gt;" in table


def test_a_readme_without_its_markers_is_refused() -> None:
    with pytest.raises(ValueError, match="lacks the markers"):
        options_table.spliced("# no table here\n", "| t |")
