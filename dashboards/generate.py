"""Write the dashboards' JSON from the generator: `python3 -m dashboards.generate [--check]`.

dashboards/generated/<name>.json (uid `perfwatch-<name>`) are committed; `--check` (and a unit test) fails
when they differ from what the code and alerts/profiles.py make, so a changed threshold cannot be forgotten.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import dashboard as dm

from . import benchmarks, bluestore, bottlenecks, osd_detail, rgw
from .common import UID_PREFIX

OUT = Path(__file__).resolve().parent / "generated"
BUILDERS: tuple[Callable[[], dm.Dashboard], ...] = (
    bottlenecks.build,
    osd_detail.build,
    bluestore.build,
    rgw.build,
    benchmarks.build,
)


def dashboards() -> list[dm.Dashboard]:
    return [build() for build in BUILDERS]


def render(dashboard: dm.Dashboard) -> str:
    """The dashboard's JSON as Grafana imports it (keys sorted, so the committed files diff well)."""
    return json.dumps(dashboard, cls=JSONEncoder, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def name_of(dashboard: dm.Dashboard) -> str:
    uid = dashboard.uid or ""
    if not uid.startswith(UID_PREFIX):
        raise ValueError(f"uid {uid!r} does not start with {UID_PREFIX!r}")
    return uid[len(UID_PREFIX) :]


def files() -> dict[Path, str]:
    """Path -> content of each dashboard file."""
    return {OUT / f"{name_of(d)}.json": render(d) for d in dashboards()}


def committed() -> list[dict[str, Any]]:
    """The committed dashboards, as Grafana would load them (what the live tests query)."""
    return [json.loads(path.read_text()) for path in sorted(OUT.glob("*.json"))]


def stale() -> list[Path]:
    """Generated files that are missing, differ from what the code makes now, or are no longer made."""
    made = files()
    out = [path for path, text in made.items() if not path.exists() or path.read_text() != text]
    return out + sorted(set(OUT.glob("*.json")) - set(made))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m dashboards.generate", description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if a generated file is stale; write nothing")
    args = parser.parse_args(argv)
    if args.check:
        behind = stale()
        for path in behind:
            print(f"stale: {path} (run `python3 -m dashboards.generate`)", file=sys.stderr)
        return 1 if behind else 0
    made = files()
    OUT.mkdir(parents=True, exist_ok=True)
    for path in sorted(set(OUT.glob("*.json")) - set(made)):
        path.unlink()
        print(f"removed {path}")
    for path, text in made.items():
        path.write_text(text)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
