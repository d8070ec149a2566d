"""Running a newer release's Ceph from its rootfs: a mount namespace of the lab's own, held open by one
process, in which the rootfs gets /proc, /sys, /dev, fresh /run and /tmp, and the lab directory and the
checkout's module folder at the same paths as outside (so ceph.conf and the module links mean the same
inside and out). Every Ceph command of the lab (daemons, mkfs, the CLI) enters that namespace and chroots
into the rootfs: the lab writes one wrapper script per tool into `<lab>/bin`, and `lab env` puts that
folder first in PATH.

Each step is an exec (`ip netns exec`, the wrapper, nsenter, chroot, sh), so a daemon started through a
wrapper keeps the PID the lab recorded. The mounts live only in the namespace: when its holder and the
daemons are gone, they are gone; nothing is mounted on the machine itself.
"""

from __future__ import annotations

import shlex
import subprocess
import time
from pathlib import Path

from . import procs
from .config import LabError
from .procs import ProcRef

BIN = "bin"
HOLDER_NAME = "mount-namespace"
OVERLAY_UNSAFE = (",", ":", "\\")  # overlayfs mount options separate layers and options with these
# Writable scratch over the read-only rootfs (Ceph writes nothing there given the lab's ceph.conf).
SCRATCH = ("run", "tmp", "var/log/ceph", "var/lib/ceph")


def bin_dir(lab_dir: Path) -> Path:
    return lab_dir / BIN


def holder_script(root: Path, binds: list[Path], read_only: list[Path], layer: Path | None = None) -> str:
    """The shell script the holder runs in its new namespace: the rootfs bound read-only onto itself (the
    cached rootfs is shared by every lab of its release: nothing a lab runs may change it) or, with a
    `layer` folder of the lab's own, an overlay over it whose changes land in that folder (packages the lab
    installs); then the mounts on top of it, then sleep until stopped. One command per line, so `sh -e`
    stops at any failure."""
    r = shlex.quote(str(root))

    def under_scratch(path: Path) -> bool:  # on a tmpfs mounted below: its mount point is made there
        return any(path == Path("/", sub) or Path("/", sub) in path.parents for sub in SCRATCH)

    def inside(path: Path) -> str:
        return shlex.quote(f"{root}{path}")

    binds_all = [(p, "") for p in binds] + [(p, " -o ro") for p in read_only]
    lines = []
    if layer is not None:  # the overlay first, so that even the mount points below land in the layer
        options = f"lowerdir={root},upperdir={layer / 'upper'},workdir={layer / 'work'}"
        lines.append(f"mount -t overlay overlay -o {shlex.quote(options)} {r}")
    # mount points, made before the rootfs turns read-only (those on a scratch tmpfs after it is mounted)
    lines.append("mkdir -p " + " ".join(shlex.quote(f"{root}/{sub}") for sub in SCRATCH))
    lines += [f"mkdir -p {inside(p)}" for p, _ in binds_all if not under_scratch(p)]
    if layer is None:
        lines += [f"mount --bind {r} {r}", f"mount -o remount,bind,ro {r}"]
    lines += [
        f"mount -t proc proc {r}/proc",
        f"mount --rbind /dev {r}/dev",
        f"mount -t sysfs sysfs {r}/sys",
    ]
    for sub in SCRATCH:
        mode = "1777" if sub == "tmp" else "755"
        lines.append(f"mount -t tmpfs -o mode={mode} tmpfs {r}/{sub}")
    lines += [f"mkdir -p {inside(p)}" for p, _ in binds_all if under_scratch(p)]
    for path, options in binds_all:
        lines.append(f"mount --bind{options} {shlex.quote(str(path))} {inside(path)}")
    lines.append("exec sleep infinity")
    return "\n".join(lines)


def check_paths(root: Path, paths: list[Path]) -> None:
    """LabError when a path to bind crosses a symlink inside the rootfs (/var/run -> /run, say): the
    holder, not chrooted, would follow it onto the machine's own folders."""
    for path in paths:
        for ancestor in [*reversed(path.parents), path]:
            inside = root / ancestor.relative_to("/")
            if inside.is_symlink():
                raise LabError(
                    f"{path} lies under {ancestor}, a symlink in the rootfs {root}: "
                    "put the lab directory (--dir) somewhere else, e.g. under /var/tmp or the checkout"
                )
        if path == root or root in path.parents:
            raise LabError(f"{path} is inside the rootfs {root}: put the lab directory somewhere else")


def holder_argv(root: Path, binds: list[Path], read_only: list[Path], layer: Path | None = None) -> list[str]:
    # No --fork: unshare execs sh, sh execs sleep, so the PID recorded is the one holding the namespace.
    script = holder_script(root, binds, read_only, layer)
    return ["unshare", "--mount", "--propagation", "private", "sh", "-ec", script]


def check_layer(layer: Path, root: Path) -> None:
    """LabError for paths that overlayfs's mount options cannot hold (they separate with these)."""
    for path in (root, layer):
        if any(c in str(path) for c in OVERLAY_UNSAFE):
            raise LabError(f"{path}: a path with ',', ':' or '\\' cannot be a layer of an overlay")


# Inside, PATH is the rootfs's own: the lab directory (and so its bin/ of wrappers, which `lab env` puts
# first in PATH) is visible there too, and a wrapper found inside would enter the namespace again, forever.
INSIDE_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"


def exec_prefix(holder: ProcRef, root: Path) -> list[str]:
    """What runs a command of the rootfs: enter the holder's mount namespace, chroot, set the rootfs's
    PATH and go to the same working directory inside when it exists there (the lab directory does)."""
    return [
        "nsenter", f"--target={holder.pid}", "--mount", "--",
        "chroot", str(root), "sh", "-c", f'PATH={INSIDE_PATH}; export PATH; cd "$0" 2>/dev/null || cd /; exec "$@"',
    ]  # fmt: skip


def run_inside(holder: ProcRef, root: Path, argv: list[str], cwd: Path, timeout: float) -> tuple[int, str]:
    """Run a command of the rootfs in the lab's namespace; its exit code and its output (both streams)."""
    try:
        proc = subprocess.run(
            [*exec_prefix(holder, root), str(cwd), *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise LabError(f"`{' '.join(argv)}` in {root} did not end within {timeout:.0f} s") from exc
    return proc.returncode, proc.stdout


def wrapper_text(holder: ProcRef, root: Path, tool: str, ceph_version: str) -> str:
    """A wrapper script for `tool`: refuses to run once the holder is gone (a reused PID is another
    process's namespace), else execs into the rootfs with the caller's working directory."""
    prefix = " ".join(shlex.quote(a) for a in exec_prefix(holder, root))
    pid = holder.pid
    return (
        "#!/bin/sh\n"
        f"# {tool} of Ceph {ceph_version}, from the lab's rootfs {root}: in the lab's mount namespace, chrooted.\n"
        f'if [ "$(cut -d" " -f22 /proc/{pid}/stat 2>/dev/null)" != "{holder.start_ticks}" ]; then\n'
        f'  echo "{tool}: the lab\'s mount namespace (pid {pid}) is gone: run python3 -m lab down, then up" >&2\n'
        "  exit 1\n"
        "fi\n"
        f'exec {prefix} "$PWD" /usr/bin/{shlex.quote(tool)} "$@"\n'
    )


def write_wrappers(lab_dir: Path, holder: ProcRef, root: Path, tools: tuple[str, ...], ceph_version: str) -> None:
    target = bin_dir(lab_dir)
    target.mkdir(parents=True, exist_ok=True)
    for tool in tools:
        path = target / tool
        path.write_text(wrapper_text(holder, root, tool, ceph_version))
        path.chmod(0o755)


def start_holder(root: Path, binds: list[Path], read_only: list[Path], log: Path, layer: Path | None = None) -> ProcRef:
    """Start the holder; returns once its mounts are made (it has exec'd `sleep`)."""
    check_paths(root, [*binds, *read_only])
    if layer is not None:
        check_layer(layer, root)
        for sub in ("upper", "work"):
            (layer / sub).mkdir(parents=True, exist_ok=True)
    ref = procs.spawn(holder_argv(root, binds, read_only, layer), log)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if not procs.is_alive(ref):
                tail = log.read_text(errors="replace").strip()[-600:] if log.exists() else ""
                raise LabError(f"the mount namespace for {root} did not start: {tail}")
            try:
                if Path(f"/proc/{ref.pid}/comm").read_text().strip() == "sleep":
                    return ref
            except OSError:
                pass
            time.sleep(0.05)
        raise LabError(f"the mount namespace for {root} was not ready in 30 s (log {log})")
    except BaseException:  # an interrupt too: nothing records the holder yet, so stop it here
        procs.stop(ref)
        raise
