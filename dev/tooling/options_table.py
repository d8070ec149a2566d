#!/usr/bin/env python3
"""The module's options in README.md, generated from mgr_module/perfwatch/options/declared.py: the list the mgr
reads (module.py turns each entry into an `Option`), so the README cannot drift from what
`ceph config set mgr mgr/perfwatch/<option>` accepts. A table (name, type, default, range or values, the
short description), then each option's long description where it has one.

    .venv/bin/python -m tooling.options_table            # print what goes between the README's markers
    .venv/bin/python -m tooling.options_table --write    # rewrite it in README.md
    .venv/bin/python -m tooling.options_table --check    # exit 1 when README.md's copy is stale (a unit test runs this)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from perfwatch.options.declared import OPTIONS

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
BEGIN = "<!-- BEGIN options: generated from the module's options by dev/tooling/options_table.py --write -->"
END = "<!-- END options -->"


def _text(text: str) -> str:
    """Markdown-safe outside code spans: `<mgr id>` would be taken for an HTML tag and vanish."""
    parts = text.split("`")
    return "`".join(p if i % 2 else p.replace("<", "&lt;").replace(">", "&gt;") for i, p in enumerate(parts))


# The README section that says more of an option: (its title, its anchor). tests/unit/test_doc_references.py
# fails on an anchor the README does not have.
SWITCH = ("When to switch", "when-to-switch-the-daemon-counters-to-the-host-exporters")
COVERAGE = ("Every OSD measured", "every-osd-measured")
S3_USER = ("The rgw probe's S3 user", "the-rgw-probes-s3-user")
WHOSE_LOAD = ("Whose load", "whose-load")
SEE = {
    "ssl": ("Security", "security"),
    "daemon_counters_source": SWITCH,
    "bench_export_baselines": SWITCH,
    "scratch_pool_pg_num": COVERAGE,
    "scratch_pool_pgs_per_osd": COVERAGE,
    "rados_probe_osds_per_round": COVERAGE,
    **{name: S3_USER for name in ("rgw_s3_endpoint", "rgw_s3_access_key", "rgw_s3_secret_key")},
    **{name: WHOSE_LOAD for name in ("load_attribution", "load_client_sample", "load_top_clients")},
    **{name: WHOSE_LOAD for name in ("load_top_per_osd", "load_osd_series_max")},
}


def _what(option: dict[str, Any]) -> str:
    """The short description, and a link to the section that says more."""
    text = _cell(option["desc"])
    if option["name"] in SEE:
        title, anchor = SEE[option["name"]]
        text += f" (see [{title}](#{anchor}))"
    return text


def _cell(text: str) -> str:
    """Table-safe: a `|` would end the cell."""
    return _text(text).replace("|", "\\|")


def _default(option: dict[str, Any]) -> str:
    value = option["default"]
    if isinstance(value, bool):
        return "true" if value else "false"
    if value == "":
        return "(empty)"
    return f"`{value}`" if isinstance(value, str) else str(value)


def _range(option: dict[str, Any]) -> str:
    if "enum_allowed" in option:
        return ", ".join(f"`{v}`" for v in option["enum_allowed"])
    if "min" in option or "max" in option:
        return f"{option.get('min', '')}\u2013{option.get('max', '')}"  # an en dash
    return ""


def render(options: list[dict[str, Any]] = OPTIONS) -> str:
    rows = [
        "| option | type | default | range | what it does |",
        "| --- | --- | --- | --- | --- |",
        *(f"| `{o['name']}` | {o['type']} | {_cell(_default(o))} | {_cell(_range(o))} | {_what(o)} |" for o in options),
    ]
    notes = [f"- `{o['name']}`: {_text(o['long_desc'])}" for o in options if o.get("long_desc")]
    return "\n".join([*rows, "", "More on some of them:", "", *notes]) if notes else "\n".join(rows)


def spliced(text: str, table: str) -> str:
    """`text` with what lies between BEGIN and END replaced by `table`; ValueError without both markers."""
    head, begin, rest = text.partition(BEGIN + "\n")
    _, end, tail = rest.partition(END)
    if not begin or not end:
        raise ValueError(f"{README.name} lacks the markers {BEGIN!r} ... {END!r}")
    return f"{head}{BEGIN}\n{table}\n{END}{tail}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="rewrite the table in README.md")
    mode.add_argument("--check", action="store_true", help="exit 1 when README.md's table is stale")
    args = parser.parse_args()
    table = render()
    if not (args.write or args.check):
        print(table)
        return 0
    text = README.read_text()
    wanted = spliced(text, table)
    if args.check:
        if wanted != text:
            print(f"{README} has a stale options table: run python3 -m tooling.options_table --write", file=sys.stderr)
            return 1
        return 0
    README.write_text(wanted)
    return 0


if __name__ == "__main__":
    sys.exit(main())
