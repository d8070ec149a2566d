"""A Debian rootfs holding a newer Ceph release's daemons and tools, built with mmdebstrap on first use and
cached outside the checkout, keyed by suite and exact Ceph version.

The archive this machine reaches is a frozen snapshot: the Release files of moving suites (forky) have
expired, so apt is told not to check their validity dates (their signatures are still checked). forky is
a moving suite: the exact Ceph version a build got is read from the rootfs's dpkg database and names its
folder (`forky-20.2.4+ds-1`), and a second `up` reuses it. `python3 -m lab rootfs --rebuild` builds a
fresh one (a newer version lands beside the old one, which `up` then no longer uses).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from .config import LabError
from .releases import Release

CACHE_ENV = "PERFWATCH_ROOTFS_CACHE"
DEFAULT_CACHE = Path("/var/cache/perfwatch-lab/rootfs")
MARKER = ".perfwatch-rootfs.json"  # written last into a finished rootfs: its suite, Ceph version, build time
# Ceph's daemons and tools; libqatzip3: without it Tentacle's zlib/lz4 compressor plugins fail to load.
PACKAGES = (
    "ceph-mon", "ceph-osd", "ceph-mgr", "ceph-common", "radosgw", "python3-rados", "python3-rbd",
    "procps", "iproute2", "libqatzip3",
)  # fmt: skip
# Every tool the lab runs from a rootfs; a build without one of them is not used.
TOOLS = (
    "ceph", "rados", "rbd", "radosgw-admin", "ceph-authtool", "monmaptool",
    "ceph-mon", "ceph-mgr", "ceph-osd", "radosgw",
)  # fmt: skip
DEFAULT_MIRROR = "http://deb.debian.org/debian"
BUILD_TIMEOUT = 1200  # seconds; a build takes one to two minutes here
BUILD_SPACE = 2 * 1024**3  # a rootfs is about 700 MB; mmdebstrap also downloads its packages first
SOURCES = (Path("/etc/apt/sources.list.d/debian.sources"), Path("/etc/apt/sources.list"))


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or DEFAULT_CACHE)


def mirror_from_sources(texts: list[str]) -> str:
    """The Debian mirror apt uses here: the first enabled `deb` entry over http(s) (deb822 stanzas, or
    one-line `deb URL suite ...` lines) that is neither the security archive nor a third-party archive
    (Ceph's own, a cdrom)."""

    def fits(url: str) -> bool:
        return url.startswith(("http://", "https://")) and "security" not in url and "ceph.com" not in url

    for text in texts:
        for stanza in re.split(r"\n\s*\n", text):
            fields = dict(re.findall(r"^([A-Za-z-]+):[ \t]*(.*)$", stanza, re.MULTILINE))
            if fields:  # deb822
                types, uris = fields.get("Types", "").split(), fields.get("URIs", "").split()
                if fields.get("Enabled", "yes").strip().lower() == "no" or "deb" not in types:
                    continue
                for url in uris:
                    if fits(url):
                        return url.rstrip("/")
                continue
            for line in stanza.splitlines():
                match = re.match(r"^\s*deb\s+(?:\[[^]]*\]\s+)?(\S+)\s+\S+", line)
                if match and fits(match.group(1)):
                    return match.group(1).rstrip("/")
    return DEFAULT_MIRROR


def mirror() -> str:
    return mirror_from_sources([p.read_text(errors="replace") for p in SOURCES if p.exists()])


def mmdebstrap_argv(suite: str, target: Path, mirror_url: str) -> list[str]:
    return [
        "mmdebstrap",
        "--variant=apt",
        '--aptopt=Acquire::Check-Valid-Until "false"',
        "--components=main",
        "--include=" + ",".join(PACKAGES),
        suite,
        str(target),
        f"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] {mirror_url} {suite} main",
    ]


def package_version(status_text: str, package: str) -> str | None:
    """The installed version of `package` in the text of a dpkg status file."""
    for stanza in status_text.split("\n\n"):
        fields = dict(re.findall(r"^([A-Za-z-]+):\s*(.*)$", stanza, re.MULTILINE))
        if fields.get("Package") == package and "installed" in fields.get("Status", "").split():
            return fields.get("Version")
    return None


def installed_ceph_version(root: Path) -> str | None:
    status = root / "var/lib/dpkg/status"
    return package_version(status.read_text(errors="replace"), "ceph-mon") if status.exists() else None


def tree_ceph_version(root: Path) -> str:
    """The Ceph version in a filesystem tree given with --rootfs: from its dpkg database (a Debian tree), else
    from its own `ceph --version` run chrooted (an RPM-based one, as Ceph's upstream images are). LabError
    when the tree holds no Ceph the lab can run."""
    missing = [t for t in TOOLS if not (root / "usr/bin" / t).exists()]
    if missing:
        raise LabError(f"--rootfs {root}: no Ceph to run there (missing /usr/bin/{', /usr/bin/'.join(missing)})")
    version = installed_ceph_version(root)
    if version:
        return version
    try:
        out = subprocess.run(
            ["chroot", str(root), "/usr/bin/ceph", "--version"], capture_output=True, text=True, timeout=30
        )
    except subprocess.TimeoutExpired as exc:
        raise LabError(f"--rootfs {root}: `ceph --version` did not answer in 30 s") from exc
    found = re.search(r"ceph version (\d+\.\d+\.\d+)", out.stdout)
    if out.returncode != 0 or not found:
        raise LabError(f"--rootfs {root}: `ceph --version` there said {(out.stdout + out.stderr).strip()[:200]!r}")
    return found.group(1)


def folder_name(suite: str, version: str) -> str:
    return f"{suite}-{version.replace(':', '_')}"


def cached(cache: Path, suite: str) -> list[tuple[Path, str]]:
    """Finished rootfs folders of `suite` in the cache, as (path, Ceph version), the newest build first."""
    found = []
    for path in cache.glob(f"{suite}-*"):
        try:
            marker = json.loads((path / MARKER).read_text())
            if not isinstance(marker, dict) or marker.get("suite") != suite:
                continue
            version, built = marker["ceph_version"], float(marker.get("built", 0))
        except (OSError, ValueError, TypeError, KeyError):
            continue  # not finished, or not ours
        if isinstance(version, str) and version:
            found.append((built, path, version))
    return [(path, version) for _, path, version in sorted(found, reverse=True)]


def processes_in(root: Path) -> list[int]:
    """PIDs of the processes whose root directory is `root` (a lab's chrooted daemons and tools)."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if os.readlink(proc / "root") == str(root):
                found.append(int(proc.name))
        except OSError:
            continue
    return sorted(found)


def _refuse_in_use(path: Path) -> None:
    users = processes_in(path)
    if users:
        raise LabError(
            f"{path} is in use by {len(users)} process(es) (pids {', '.join(map(str, users[:8]))}): "
            "stop the labs that run from it (`python3 -m lab down`), then rebuild"
        )


@contextlib.contextmanager
def _locked(cache: Path, suite: str, say: Callable[[str], None]) -> Iterator[None]:
    """One build of a suite at a time, across labs and processes."""
    cache.mkdir(parents=True, exist_ok=True, mode=0o755)
    info = cache.stat()
    if info.st_uid != 0 or info.st_mode & 0o022:
        # root chroots into what it finds here and runs it: only root may write there
        raise LabError(f"{cache} must belong to root and not be writable by group or others (chmod 755, chown root)")
    fd = os.open(cache / f"{suite}.lock", os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"another process is building the {suite} rootfs in {cache}: waiting for it")
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def ensure(release: Release, say: Callable[[str], None], rebuild: bool = False) -> tuple[Path, str]:
    """The rootfs of `release` (built now when the cache has none, or with rebuild=True) and its exact
    Ceph version."""
    suite = release.suite
    if suite is None:
        raise LabError(f"{release.name} runs from this machine's packages, not from a rootfs")
    cache = cache_dir()
    with _locked(cache, suite, say):
        _remove_abandoned(cache, suite)
        found = cached(cache, suite)
        if found and not rebuild:
            path, version = found[0]
            release.check_version(version, str(path))
            return path, version
        for path, _version in found:  # a rebuild of the same version replaces the folder: not under a lab
            _refuse_in_use(path)
        path, version = _build(release, suite, cache, say)
    return path, version


def _run_build(argv: list[str], log: Path) -> int:
    """mmdebstrap in a private mount namespace of its own (its proc, sys and dev mounts in the target go
    with it, whatever happens) and in a process group of its own: on an interrupt or a timeout the whole
    group (apt, dpkg) gets SIGTERM and up to 30 s to end, then SIGKILL."""
    with open(log, "w") as out:
        proc = subprocess.Popen(
            ["unshare", "--mount", "--propagation", "private", *argv],
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        try:
            return proc.wait(timeout=BUILD_TIMEOUT)
        except BaseException:
            for sig, wait in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, sig)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=wait)
                    break
            raise


def mounts_under(path: Path, mountinfo: str) -> list[str]:
    """Mount points at or under `path` in the text of /proc/self/mountinfo (field 5)."""
    prefix = str(path).rstrip("/")
    points = [line.split()[4] for line in mountinfo.splitlines() if len(line.split()) > 4]
    return [p for p in points if p == prefix or p.startswith(prefix + "/")]


def _remove_build(work: Path) -> None:
    """Remove an unfinished build, never through a mount that is still there (one-line error instead)."""
    if not work.exists():
        return
    left = mounts_under(work, Path("/proc/self/mountinfo").read_text())
    if left:
        raise LabError(f"{work} still has mounts ({', '.join(left[:4])}): unmount them (umount -R), then remove it")
    shutil.rmtree(work, ignore_errors=True)


def _remove_abandoned(cache: Path, suite: str) -> None:
    """Unfinished builds of `suite` whose builder is gone (killed): they would hold 700 MB each forever."""
    for work in cache.glob(f".building-{suite}-*"):
        pid = work.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            _remove_build(work)


def _build(release: Release, suite: str, cache: Path, say: Callable[[str], None]) -> tuple[Path, str]:
    if shutil.which("mmdebstrap") is None:
        raise LabError(
            f"{release.name} runs from a Debian {suite} rootfs built by mmdebstrap: run `apt-get install -y mmdebstrap`"
        )
    stat = os.statvfs(cache)
    if stat.f_bavail * stat.f_frsize < BUILD_SPACE:
        raise LabError(
            f"{cache} has {stat.f_bavail * stat.f_frsize / 2**30:.1f} GiB free; a rootfs build needs "
            f"{BUILD_SPACE / 2**30:.0f} GiB: free space, or point ${CACHE_ENV} elsewhere"
        )
    work = cache / f".building-{suite}-{os.getpid()}"
    log = cache / f"{suite}.build.log"
    _remove_build(work)
    url = mirror()
    say(f"building a Debian {suite} rootfs with Ceph {release.series} from {url} into {cache} (about a minute; once)")
    started = time.monotonic()
    try:
        returncode = _run_build(mmdebstrap_argv(suite, work, url), log)
        if returncode != 0:
            tail = "\n".join(log.read_text(errors="replace").splitlines()[-8:])
            raise LabError(f"mmdebstrap of {suite} failed (exit {returncode}; log {log}):\n{tail}")
        missing = [t for t in TOOLS if not (work / "usr/bin" / t).exists()]
        if missing:
            raise LabError(f"the {suite} rootfs lacks {', '.join(missing)} (log {log})")
        version = installed_ceph_version(work)
        if version is None:
            raise LabError(f"the {suite} rootfs has no ceph-mon package installed (log {log})")
        release.check_version(version, f"Debian {suite}")
        marker = {"suite": suite, "ceph_version": version, "built": time.time(), "mirror": url}
        (work / MARKER).write_text(json.dumps(marker, indent=2))
        final = cache / folder_name(suite, version)
        if final.exists():
            _refuse_in_use(final)
            shutil.rmtree(final)
        os.rename(work, final)
    except BaseException:
        _remove_build(work)
        raise
    say(f"rootfs {final.name} ready in {time.monotonic() - started:.0f} s")
    return final, version
