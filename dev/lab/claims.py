"""Which lab directory holds a lab name on this machine.

A lab's name prefixes what it makes outside its directory: network namespaces, links, cgroups. When a lab
ends without `down` (the machine's processes were killed, a restart kept /run), those stay and the name
is blocked, while the directory that could remove them may be anywhere (another checkout, a CI clone).
`up` writes `<claims dir>/<name>` with the lab's directory and `down` removes it, so the next `up` of the
name can find the lab that left them, check that none of its processes runs, and `down` it.

The claims folder is /run/perfwatch-lab ($PERFWATCH_LAB_CLAIMS for tests): /run goes with a reboot, as the
namespaces do.
"""

from __future__ import annotations

import os
from pathlib import Path

CLAIMS_ENV = "PERFWATCH_LAB_CLAIMS"
DEFAULT_CLAIMS = Path("/run/perfwatch-lab")


def claims_dir() -> Path:
    return Path(os.environ.get(CLAIMS_ENV) or DEFAULT_CLAIMS)


def _path(name: str) -> Path:
    return claims_dir() / name


def holder(name: str) -> Path | None:
    """The directory of the lab that claimed `name`, or None when no lab has (or the record is not a path)."""
    try:
        text = _path(name).read_text().strip()
    except (FileNotFoundError, NotADirectoryError):
        return None
    return Path(text) if text.startswith("/") and "\n" not in text else None


def claim(name: str, directory: Path) -> None:
    """Record that the lab in `directory` holds `name` (written whole: a reader never sees half a path)."""
    folder = claims_dir()
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{name}.{os.getpid()}"
    tmp.write_text(f"{directory.resolve()}\n")
    os.replace(tmp, _path(name))


def release(name: str, directory: Path) -> None:
    """Forget the claim on `name` if the lab in `directory` holds it (never another lab's claim)."""
    if holder(name) == directory.resolve():
        _path(name).unlink(missing_ok=True)


def refusal(name: str, owner: Path, running: list[str], recorded_names: list[str]) -> str | None:
    """Why `up` must not `down` the lab in `owner` that holds `name`: some of its processes run, or its
    state lists links or namespaces that are not this name's (an edited state: never remove those).
    None: it may."""
    if running:
        shown = ", ".join(running[:3]) + (f" and {len(running) - 3} more" if len(running) > 3 else "")
        return (
            f"the lab name {name!r} is taken by the lab running in {owner} ({shown}); "
            f"nothing changed: pick another --name, or `python3 -m lab --dir {owner} down` first"
        )
    foreign = [n for n in recorded_names if not n.startswith(f"{name}-")]
    if foreign:
        return (
            f"{owner}/state.json lists {foreign}, which are not names of a lab called {name!r}; "
            "nothing changed: look at that lab by hand"
        )
    return None
