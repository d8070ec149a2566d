"""The Ceph releases the lab runs, and where each comes from.

Pacific is this machine's own packages (Debian 12). Newer releases come from Debian's archive as a
rootfs (rootfs.py) whose daemons run chrooted in a mount namespace of the lab (mountns.py): Reef from
trixie, Tentacle from forky. Pure: names and versions in, a Release or a LabError out.
"""

from __future__ import annotations

import dataclasses
import re

from .config import LabError


@dataclasses.dataclass(frozen=True)
class Release:
    name: str  # "reef"
    series: str  # "18.2": every exact version of this release starts with it
    suite: str | None  # the Debian suite a rootfs is built from; None: this machine's packages

    @property
    def from_rootfs(self) -> bool:
        return self.suite is not None

    def check_version(self, version: str, where: str) -> None:
        """LabError unless `version` (a Debian version, e.g. "18.2.7+ds-1") is of this release."""
        upstream = version.split(":", 1)[-1]  # drop an epoch
        if not (upstream == self.series or upstream.startswith(self.series + ".")):
            raise LabError(f"{where} has Ceph {version}, not {self.name} {self.series}")

    def check_exact(self, wanted: str, version: str, where: str) -> None:
        """LabError unless `version` is the exact version `wanted` (the operator's `--release 18.2.7`)."""
        upstream = version.split(":", 1)[-1]
        if not (upstream == wanted or re.match(re.escape(wanted) + r"[+~-]", upstream)):
            raise LabError(f"{where} has Ceph {version}, not {wanted}: ask for {self.name} to run what it has")


def exact_version(text: str) -> str:
    """The exact version in an operator's --release ("18.2.7"), or "" for a name, series or major."""
    wanted = text.strip()
    return wanted if re.fullmatch(r"\d+\.\d+\.\d+", wanted) else ""


RELEASES = (
    Release("pacific", "16.2", None),
    Release("reef", "18.2", "trixie"),
    Release("tentacle", "20.2", "forky"),
)
DEFAULT = "pacific"


def names() -> list[str]:
    return [r.name for r in RELEASES]


def resolve(text: str) -> Release:
    """A release by name ("reef"), series ("18.2"), major ("18") or exact version ("18.2.7")."""
    wanted = text.strip().lower()
    for release in RELEASES:
        major = release.series.split(".")[0]
        if wanted in (release.name, release.series, major) or wanted.startswith(release.series + "."):
            return release
    choices = ", ".join(f"{r.name} ({r.series})" for r in RELEASES)
    raise LabError(f"--release {text!r}: the lab runs {choices}")


def of_version(version: str, where: str) -> Release:
    """The release an exact Ceph version ("20.2.4+ds-2", "20.2.4") is of; LabError for one the lab does not run."""
    upstream = version.split(":", 1)[-1]
    for release in RELEASES:
        if upstream == release.series or upstream.startswith(release.series + "."):
            return release
    choices = ", ".join(f"{r.name} ({r.series})" for r in RELEASES)
    raise LabError(f"{where} has Ceph {version}: the lab runs {choices}")
