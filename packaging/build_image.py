#!/usr/bin/env python3
"""Build ceph-perfwatch's container images from the Containerfile with buildah: the mgr image (a Ceph image
plus the perfwatch module, for cephadm and Rook) and the host exporter's image.

  packaging/build_image.py                                     # on the Containerfile's default Ceph image
  packaging/build_image.py --base quay.io/ceph/ceph:v18.2.7    # on the image your cluster runs
  packaging/build_image.py --base-rootfs DIR                   # no registry reachable: a local base made from
                                                            # a Ceph filesystem tree (the lab's rootfs)

Tags: <registry>/ceph-perfwatch:<perfwatch version>-ceph<Ceph version> (the mgr image is tied to the Ceph
it carries) and <registry>/perfwatch-host-exporter:<perfwatch version>. Prints each image with its size;
--json prints them as JSON. buildah's storage is its default unless --root/--runroot name another (the
tests keep theirs in a folder of their own).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CONTAINERFILE = REPO / "Containerfile"
VERSION_FILE = REPO / "mgr_module" / "perfwatch" / "common" / "version.py"
TARGETS = {"mgr": "ceph-perfwatch", "host-exporter": "perfwatch-host-exporter"}


class BuildError(Exception):
    """Printed as one line."""


def revision() -> str:
    """The commit the images are built from (`git rev-parse HEAD`), with "-dirty" for uncommitted changes;
    "unknown" outside a git checkout."""
    try:
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain"], capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def perfwatch_version() -> str:
    found = re.search(r'^__version__ = "([^"]+)"$', VERSION_FILE.read_text(), re.MULTILINE)
    if not found:
        raise BuildError(f"no __version__ in {VERSION_FILE}")
    return found.group(1)


def default_base() -> str:
    found = re.search(r"^ARG CEPH_IMAGE=(\S+)$", CONTAINERFILE.read_text(), re.MULTILINE)
    if not found:
        raise BuildError(f"no `ARG CEPH_IMAGE=...` in {CONTAINERFILE}")
    return found.group(1)


def ceph_version_of_image(image: str) -> str | None:
    """The Ceph version an image reference names in its tag (quay.io/ceph/ceph:v20.2.4 -> 20.2.4)."""
    found = re.search(r":v?(\d+\.\d+\.\d+)(?:[-.].*)?$", image)
    return found.group(1) if found else None


def ceph_version_of_rootfs(root: Path) -> str | None:
    """The upstream version of ceph-mgr in a Debian tree's dpkg database (20.2.4+ds-2 -> 20.2.4)."""
    status = root / "var/lib/dpkg/status"
    if not status.exists():
        return None
    for stanza in status.read_text(errors="replace").split("\n\n"):
        if re.search(r"^Package: ceph-mgr$", stanza, re.MULTILINE):
            found = re.search(r"^Version: (?:\d+:)?(\d+\.\d+\.\d+)", stanza, re.MULTILINE)
            return found.group(1) if found else None
    return None


class Buildah:
    def __init__(self, root: str | None, runroot: str | None, driver: str) -> None:
        self.globals = ["--storage-driver", driver]
        if root:
            self.globals += ["--root", root]
        if runroot:
            self.globals += ["--runroot", runroot]

    def __call__(self, *args: str, timeout: float = 1800) -> str:
        argv = ["buildah", *self.globals, *args]
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
        except FileNotFoundError as exc:
            raise BuildError("buildah not found: apt-get install -y buildah") from exc
        if proc.returncode != 0:
            raise BuildError(f"`{' '.join(argv)}` failed: {proc.stderr.strip()[-1500:]}")
        return proc.stdout.strip()

    def sizes(self, image: str, base: str) -> tuple[int, int]:
        """The image's size in bytes (its layers, uncompressed) and what it adds to `base` (the layers
        the base does not have)."""

        def layers(name: str) -> list[tuple[str, int]]:
            manifest = json.loads(json.loads(self("inspect", "--type", "image", name))["Manifest"])
            return [(layer["digest"], int(layer["size"])) for layer in manifest["layers"]]

        own, under = layers(image), {digest for digest, _ in layers(base)}
        return sum(size for _, size in own), sum(size for layer, size in own if layer not in under)


def import_rootfs(buildah: Buildah, root: Path, name: str) -> None:
    """A base image of one layer holding the tree `root` (what a registry's Ceph image would be)."""
    if not (root / "usr/bin/ceph-mgr").exists():
        raise BuildError(f"--base-rootfs {root}: no /usr/bin/ceph-mgr there, not a Ceph tree")
    container = buildah("from", "--name", f"perfwatch-base-{int(time.time())}", "scratch")
    try:
        mount = buildah("mount", container)
        copy = subprocess.run(["cp", "-a", "--", f"{root}/.", mount], capture_output=True, text=True, check=False)
        if copy.returncode != 0:
            raise BuildError(f"copying {root} into the base image failed: {copy.stderr.strip()[-500:]}")
        buildah("umount", container)
        buildah("commit", "--quiet", container, name)
    finally:
        subprocess.run(["buildah", *buildah.globals, "rm", container], capture_output=True, check=False)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = p.add_mutually_exclusive_group()
    source.add_argument("--base", help="the Ceph image to add perfwatch to (default: the Containerfile's)")
    source.add_argument("--base-rootfs", type=Path, help="make a local base image from this Ceph filesystem tree")
    p.add_argument("--ceph-version", help="the Ceph version for the mgr image's tag (default: from the base)")
    p.add_argument("--registry", default="localhost", help="the registry part of the tags (default: localhost)")
    p.add_argument("--target", choices=(*TARGETS, "all"), default="all")
    p.add_argument("--root", help="buildah's storage root (default: buildah's own)")
    p.add_argument("--runroot", help="buildah's run root (default: buildah's own)")
    p.add_argument("--storage-driver", default="vfs", help="buildah storage driver (default vfs: works anywhere)")
    p.add_argument("--json", action="store_true", help="print the images and their sizes as JSON")
    args = p.parse_args(argv)
    try:
        version = perfwatch_version()
        buildah = Buildah(args.root, args.runroot, args.storage_driver)
        registry = args.registry.rstrip("/")
        if not re.fullmatch(r"[a-z0-9]+([._-][a-z0-9]+)*(:\d+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*", registry):
            raise BuildError(f"--registry {args.registry!r}: not a registry/namespace an image name can start with")
        if args.base_rootfs:
            root = args.base_rootfs.resolve()
            ceph = args.ceph_version or ceph_version_of_rootfs(root)
            if not ceph:
                raise BuildError(f"--base-rootfs {root}: no ceph-mgr in its dpkg database; give --ceph-version")
            base = f"localhost/perfwatch-ceph-base:{ceph}"
            started = time.monotonic()
            import_rootfs(buildah, root, base)
            print(f"base image {base} from {root} in {time.monotonic() - started:.0f} s", file=sys.stderr)
        else:
            base = args.base or default_base()
            ceph = args.ceph_version or ceph_version_of_image(base)
            if not ceph:
                raise BuildError(f"--base {base}: its tag names no Ceph version (vX.Y.Z); give --ceph-version")
        if not re.fullmatch(r"\d+\.\d+\.\d+", ceph):
            raise BuildError(f"Ceph version {ceph!r}: expected X.Y.Z")
        tags = {
            "mgr": f"{registry}/{TARGETS['mgr']}:{version}-ceph{ceph}",
            "host-exporter": f"{registry}/{TARGETS['host-exporter']}:{version}",
        }
        built: dict[str, dict[str, str | int]] = {}
        for target in TARGETS if args.target == "all" else [args.target]:
            started = time.monotonic()
            buildah(
                "bud", "--isolation", "chroot", "--layers=false", "--quiet", "-f", str(CONTAINERFILE),
                "--target", target, "--build-arg", f"CEPH_IMAGE={base}",
                "--build-arg", f"PERFWATCH_VERSION={version}", "--build-arg", f"PERFWATCH_REVISION={revision()}",
                "-t", tags[target], str(REPO),
            )  # fmt: skip
            total, added = buildah.sizes(tags[target], base)
            built[target] = {"image": tags[target], "bytes": total, "added_bytes": added}
            seconds = time.monotonic() - started
            what = f"{total / 1e6:.0f} MB, {added / 1e3:.0f} kB on the base"
            print(f"{target}: {tags[target]} ({what}) in {seconds:.0f} s", file=sys.stderr)
        out = {"base": base, "ceph_version": ceph, "version": version, "images": built}
        print(json.dumps(out, indent=2) if args.json else "\n".join(str(b["image"]) for b in built.values()))
        return 0
    except BuildError as exc:
        print(f"build_image.py: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
