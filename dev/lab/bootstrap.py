"""A new cluster's files, made before its daemons start: ceph.conf and the keyrings, the mgr module
folder, the mon's store (mkfs with a one-mon monmap) and each OSD's store, on a loop device or a file."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from . import cephcli, cephconf, keyring, monitoring, osd_devices, prereq
from .config import REPO_ROOT, LabConfig, LabError
from .daemons import Catalogue
from .state import LabState
from .topology import Topology

MODULE_NAME = "perfwatch"
MODULE_SOURCE = REPO_ROOT / "mgr_module" / MODULE_NAME
SUBDIRECTORIES = ("run", "log", "crash", "mon", "mgr", "osd", "rgw", "devices")


def osd_data(directory: Path, osd_id: int | str) -> Path:
    """An OSD's data folder; its `block` is the device (or file) it stores on."""
    return directory / "osd" / f"ceph-{osd_id}"


def run(argv: list[str], timeout: float = 120) -> None:
    """Run a one-shot Ceph tool (mkfs, monmaptool); LabError with the end of its output if it fails."""
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise LabError(f"`{' '.join(argv)}` failed: {(proc.stderr or proc.stdout).strip()[-800:]}")


def make_directories(config: LabConfig) -> None:
    for sub in SUBDIRECTORIES:
        (config.directory / sub).mkdir(parents=True, exist_ok=True)


def key_format(config: LabConfig) -> keyring.KeyFormat:
    """The cephx key type and secret length new keys of this release have: one key from its own
    ceph-authtool, decoded (Tentacle makes 32-byte `aes256k` keys and allows nothing else by default)."""
    proc = subprocess.run(
        [cephcli.tool(config.conf_path, "ceph-authtool"), "--gen-print-key"], capture_output=True, text=True, timeout=60
    )
    if proc.returncode != 0:
        raise LabError(f"`ceph-authtool --gen-print-key` failed: {(proc.stderr or proc.stdout).strip()[-300:]}")
    return keyring.key_format(proc.stdout.strip())


def write_config_and_keys(config: LabConfig, topo: Topology, fsid: str, key_fmt: keyring.KeyFormat) -> None:
    d = config.directory
    config.conf_path.write_text(cephconf.render(config, topo, fsid))
    names = [
        "mon.",
        "client.admin",
        *(f"mgr.{m}" for m in config.mgrs),
        *(f"osd.{o.id}" for o in topo.osds),
        cephconf.rgw_name(config),
    ]
    entities = {n: keyring.Entity(n, keyring.make_key(key_fmt), keyring.caps_for(n)) for n in names}
    # The mon imports every entity of its initial keyring at mkfs: one step registers all daemons.
    (d / "mon-initial.keyring").write_text(keyring.render(list(entities.values())))
    (d / "keyring").write_text(keyring.render([entities["client.admin"]]))
    for name, entity in entities.items():
        kind, ident = name.split(".", 1)
        if kind in ("mgr", "osd", "mon"):
            where = d / kind / f"ceph-{ident or cephconf.MON_ID}"
        elif name.startswith("client.rgw."):
            where = d / "rgw"
        else:
            continue
        where.mkdir(parents=True, exist_ok=True)
        if kind != "mon":  # mon mkfs writes its own keyring
            (where / "keyring").write_text(keyring.render([entity]))
    for path in d.rglob("keyring"):
        path.chmod(0o600)


def link_modules(config: LabConfig, root: Path) -> list[str]:
    """A module folder that links every module Ceph ships (in the rootfs `root`; "/" for this machine's
    packages), plus ours from the checkout. The links name the paths the mgr sees: inside the rootfs,
    where the checkout's module folder is bound at its own path. Returns notes on what was adapted."""
    target = config.directory / "mgr-modules"
    target.mkdir(exist_ok=True)
    notes = []
    shipped = root / prereq.MGR_MODULES_DIR.relative_to("/")
    for entry in sorted(shipped.iterdir()):
        if entry.name == MODULE_NAME:
            continue
        if entry.name == "mgr_util.py" and BCRYPT_IMPORT in entry.read_text(errors="replace").splitlines():
            (target / entry.name).write_text(lazy_bcrypt(entry.read_text()))
            notes.append(f"{entry.name}: made its bcrypt import optional (PyO3 bcrypt refuses mgr sub-interpreters)")
            continue
        (target / entry.name).symlink_to(prereq.MGR_MODULES_DIR / entry.name)
    (target / MODULE_NAME).symlink_to(MODULE_SOURCE)
    return notes


# Reef 18.2 as Debian trixie ships it: mgr_util.py imports bcrypt at the top, and trixie's bcrypt is built
# with PyO3, which refuses to load in a sub-interpreter, so every mgr module fails to load. The lab's
# module folder carries a copy of that file with the import made optional (only the dashboard's password
# hashing needs it). A lab-only workaround of a distribution problem: the module itself needs no bcrypt.
BCRYPT_IMPORT = "import bcrypt"


def lazy_bcrypt(text: str) -> str:
    lines = text.splitlines(keepends=True)
    at = [line.rstrip("\r\n") for line in lines].index(BCRYPT_IMPORT)
    shim = "try:\n    import bcrypt\nexcept ImportError:  # PyO3 builds refuse sub-interpreters\n    bcrypt = None\n"
    return "".join(lines[:at]) + shim + "".join(lines[at + 1 :])


def mkfs_mon(config: LabConfig, topo: Topology, fsid: str) -> None:
    d = config.directory
    run(
        [
            cephcli.tool(config.conf_path, "monmaptool"),
            "--create",
            "--clobber",
            "--enable-all-features",
            "--fsid",
            fsid,
            "--addv",
            cephconf.MON_ID,
            cephconf.mon_addr(config, topo),
            str(d / "monmap"),
        ]
    )
    run(
        [
            cephcli.tool(config.conf_path, "ceph-mon"),
            "-c",
            str(config.conf_path),
            "--mkfs",
            "-i",
            cephconf.MON_ID,
            "--monmap",
            str(d / "monmap"),
            "--keyring",
            str(d / "mon-initial.keyring"),
        ]
    )


def mkfs_osds(config: LabConfig, topo: Topology, state: LabState, save: Callable[[], None]) -> dict[int, str]:
    """Each OSD's store (its loop device recorded in `state` as soon as it exists); the OSD uuids, by id."""
    uuids = {o.id: str(uuid.uuid4()) for o in topo.osds}
    devices = osd_devices.attach_all(config, topo, state, save)  # none with --backing file
    for osd in topo.osds:
        data = osd_data(config.directory, osd.id)
        data.mkdir(parents=True, exist_ok=True)
        osd_devices.link(data, devices.get(osd.id, {}))

    def mkfs(osd_id: int) -> None:
        run(
            [
                cephcli.tool(config.conf_path, "ceph-osd"),
                "-c",
                str(config.conf_path),
                "-i",
                str(osd_id),
                "--mkfs",
                "--osd-uuid",
                uuids[osd_id],
                "--no-mon-config",
            ]
        )

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(mkfs, uuids))
    return uuids


def write_monitoring_config(name: str, catalogue: Catalogue) -> list[str]:
    """Before Prometheus starts: its configuration, with those of the lab's rule files that exist now.
    Before Alertmanager starts, while the checkout has no example: the fallback configuration. Returns
    notes on what is missing, for the operator."""
    directory, notes = catalogue.config.directory, []
    if name == monitoring.PROMETHEUS:
        present, missing = monitoring.present_rule_files(p for p in monitoring.RULE_FILES if p.exists())
        notes += [f"{p.relative_to(REPO_ROOT)} does not exist yet: Prometheus runs without it" for p in missing]
        path = monitoring.prometheus_config_path(directory)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(monitoring.render(catalogue.prometheus_config(present)))
    elif name == monitoring.ALERTMANAGER and catalogue.alertmanager_config is None:
        path = monitoring.fallback_alertmanager_config_path(directory)
        example = monitoring.ALERTMANAGER_EXAMPLE.relative_to(REPO_ROOT)
        notes.append(f"{example} does not exist yet: Alertmanager uses {path} (a receiver with no notifiers)")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(monitoring.render(monitoring.FALLBACK_ALERTMANAGER_CONFIG))
    return notes
