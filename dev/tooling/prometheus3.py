"""Prometheus 3 (the 3.x LTS operators run today) beside Debian 12's 2.42: Debian testing's `prometheus` and
`promtool`, unpacked into a cache, not installed (apt runs with sources, lists and cache of its own and checks
the archive's signatures). `make deps` fetches it; the promtool tests and `dev/bench/rule_cost.py --prometheus`
run on it. Whatever 3.x testing holds is fetched and kept until `--refetch`; a cache others may write is not
run (what runs from it runs as the caller), and a fetch replaces only what replaceable() allows, one at a time.

    python3 -m tooling.prometheus3            # fetch unless cached; prints the folder of its two binaries
    python3 -m tooling.prometheus3 --check    # exit 1 unless it is cached (prints why)
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from lab.rootfs import mirror

SUITE = "forky"  # Debian testing, with the Prometheus 3.5 LTS (bookworm has 2.42, trixie 2.53)
PACKAGES = ("prometheus", "promtool")
CACHE_ENV = "PERFWATCH_PROMETHEUS3_DIR"
DEFAULT_CACHE = Path("/var/cache/perfwatch-lab/prometheus3")
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
MARKER = "prometheus3.json"  # written last: the version unpacked, when, from where
WORK_PREFIX = "prometheus3-fetch-"  # a fetch's temporary folder beside the cache
FETCH_TIMEOUT = 600  # seconds for each apt-get and dpkg-deb step
VERSION = re.compile(r"version (\d+)\.(\d+)\.(\d+)")


class FetchError(RuntimeError):
    pass


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or DEFAULT_CACHE)


def bin_dir(cache: Path | None = None) -> Path:
    return (cache or cache_dir()) / "root" / "usr" / "bin"


def version_of(binary: Path) -> tuple[int, int, int] | None:
    """(major, minor, patch) that `binary --version` prints; None when it does not run or says none."""
    try:
        done = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = VERSION.search(done.stdout + done.stderr)
    return (int(found[1]), int(found[2]), int(found[3])) if found else None


def problem(cache: Path | None = None) -> str | None:
    """Why `cache` holds no usable Prometheus 3 (None when it does)."""
    cache = cache or cache_dir()
    if not (cache / MARKER).is_file():
        return f"no {MARKER} in {cache}: nothing fetched there"
    binaries = bin_dir(cache)
    for path in (cache, binaries, *(binaries / name for name in PACKAGES)):
        try:
            info = path.lstat()
        except OSError as exc:
            return f"{path}: {exc.strerror}"
        if info.st_uid not in (0, os.geteuid()) or info.st_mode & 0o022:
            return f"{path} may be written by others than root and this user: not run"
    for name in PACKAGES:
        found = version_of(binaries / name)
        if found is None or found[0] != 3:
            return f"{binaries / name} is not Prometheus 3 ({found})"
    return None


def cached(cache: Path | None = None) -> Path | None:
    """The folder of a fetched Prometheus 3's prometheus and promtool, or None when there is none (problem())."""
    return None if problem(cache) else bin_dir(cache)


def _apt(work: Path, *args: str) -> None:
    options = [
        f"-o=Dir::Etc::SourceList={work / 'sources.list'}",
        "-o=Dir::Etc::SourceParts=/dev/null",
        f"-o=Dir::State::Lists={work / 'lists'}",
        f"-o=Dir::Cache={work / 'cache'}",
        "-o=Dir::State::status=/dev/null",  # not the packages installed here (a 2.42 would be the candidate)
        "-o=Dir::Etc::Preferences=/dev/null",  # nor the machine's pins
        "-o=Dir::Etc::PreferencesParts=/dev/null",
        "-o=APT::Update::Error-Mode=any",  # a mirror that cannot be reached fails the update, not the download
        "-o=Acquire::Check-Valid-Until=false",  # a frozen snapshot's moving suite has an expired Release file
        "-o=APT::Sandbox::User=root",  # the download lands in a root-only temporary folder
        "-qq",
    ]
    done = subprocess.run(["apt-get", *options, *args], cwd=work, capture_output=True, text=True, timeout=FETCH_TIMEOUT)
    if done.returncode != 0:
        raise FetchError(f"apt-get {' '.join(args)} failed (exit {done.returncode}): {done.stderr.strip()[-2000:]}")


@contextlib.contextmanager
def _fetch_lock(cache: Path) -> Iterator[None]:
    """One fetch into `cache` at a time; whoever holds it removes what interrupted fetches left beside it."""
    with open(cache.parent / (cache.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for left in cache.parent.glob(WORK_PREFIX + "*"):
            shutil.rmtree(left, ignore_errors=True)
        yield


def replaceable(cache: Path) -> str | None:
    """Why a fetch may not replace what is at `cache` (None when it may: nothing, an empty folder, or a
    folder this tool made, with its marker)."""
    if not cache.exists() and not cache.is_symlink():
        return None
    if cache.is_symlink() or not cache.is_dir():
        return f"{cache} is not a folder"
    if (cache / MARKER).is_file() or not any(cache.iterdir()):
        return None
    return f"{cache} holds files this tool did not put there (no {MARKER}): choose an empty or new folder"


def fetch(cache: Path | None = None) -> Path:
    """Download and unpack Debian testing's prometheus and promtool into `cache` (replacing what an earlier
    fetch put there); the folder of the two binaries. FetchError when a step fails, what it got is not
    Prometheus 3, or `cache` holds something else (replaceable())."""
    cache = (cache or cache_dir()).absolute()
    if cache.parent == cache or cache.name in ("", ".", ".."):
        raise FetchError(f"{cache}: not a folder a fetch can replace")
    refused = replaceable(cache)
    if refused:
        raise FetchError(refused)
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        raise FetchError("apt-get and dpkg-deb are needed (a Debian machine)")
    cache.parent.mkdir(parents=True, exist_ok=True)
    url = mirror()
    with _fetch_lock(cache), tempfile.TemporaryDirectory(prefix=WORK_PREFIX, dir=cache.parent) as tmp:
        work = Path(tmp)
        for sub in ("lists/partial", "cache/archives/partial"):
            (work / sub).mkdir(parents=True)
        (work / "sources.list").write_text(f"deb [signed-by={KEYRING}] {url} {SUITE} main\n")
        _apt(work, "update")
        _apt(work, "download", *(f"{name}/{SUITE}" for name in PACKAGES))
        root = work / "new" / "root"
        root.mkdir(parents=True)
        debs = sorted(work.glob("*.deb"))
        if len(debs) != len(PACKAGES):
            raise FetchError(f"apt-get download gave {[d.name for d in debs]}, not one package each of {PACKAGES}")
        for deb in debs:
            subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True, timeout=FETCH_TIMEOUT)
        versions = {name: version_of(root / "usr" / "bin" / name) for name in PACKAGES}
        if any(v is None or v[0] != 3 for v in versions.values()):
            raise FetchError(f"Debian {SUITE} gave {versions}, not Prometheus 3")
        marker = {"suite": SUITE, "mirror": url, "packages": [d.name for d in debs], "fetched": time.time()}
        (work / "new" / MARKER).write_text(json.dumps(marker) + "\n")
        refused = replaceable(cache)  # again, under the lock
        if refused:
            raise FetchError(refused)
        if cache.exists():
            cache.rename(work / "old")  # removed with the temporary folder
        (work / "new").rename(cache)
    return bin_dir(cache)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, help=f"the cache (default ${CACHE_ENV} or {DEFAULT_CACHE})")
    parser.add_argument("--check", action="store_true", help="exit 1 unless a Prometheus 3 is cached")
    parser.add_argument("--refetch", action="store_true", help="fetch again even if one is cached")
    parser.add_argument("--version", action="store_true", help="print the cached promtool's version")
    args = parser.parse_args(argv)
    cache = args.dir or cache_dir()
    if args.check:
        why = problem(cache)
        if why:
            print(f"{why}; run `python3 -m tooling.prometheus3` (`make deps` does)", file=sys.stderr)
            return 1
    found = None if args.refetch else cached(cache)
    if found is None:
        try:
            found = fetch(cache)
        except (FetchError, OSError, subprocess.SubprocessError) as exc:
            print(f"fetching Prometheus 3 failed: {exc}", file=sys.stderr)
            return 1
    if args.version:
        print(".".join(map(str, version_of(found / "promtool") or ())))
    else:
        print(found)
    return 0


if __name__ == "__main__":
    sys.exit(main())
