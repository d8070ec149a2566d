"""The mgr modules `up` enables: perfwatch (from the checkout) and Ceph's own `prometheus` module.

Both mgrs of a lab share this machine and both listen (the standby too), so each module gets a port per
mgr (`mgr/<module>/<mgr id>/server_port`); with one port, whichever mgr binds it first wins and the
other raises MGR_MODULE_ERROR.
"""

from __future__ import annotations

import functools
from pathlib import Path

from . import bootstrap, probes
from .cephcli import Ceph, CephCommandError
from .config import LabError
from .daemons import Catalogue
from .probes import wait_for
from .security import USER, LabTls

CEPH_PROMETHEUS = "prometheus"  # Ceph's module, which serves the ceph_* metrics
# Seconds between perfwatch's collections in the lab: the lab profile's rules (30 s windows) see three.
COLLECT_INTERVAL = 10
EXCLUDE_PERF_COUNTERS = "exclude_perf_counters"  # the prometheus module's option from Reef on
# The prometheus module's source, as the release installs it (in the lab's root: "/" or its rootfs)
CEPH_PROMETHEUS_PY = Path("usr/share/ceph/mgr/prometheus/module.py")


def has_exclude_perf_counters(root: Path) -> bool:
    """Whether this Ceph's prometheus module has the option that leaves per-daemon counters to ceph-exporter
    (Reef on). Read from the module the lab's mgrs run (a feature, not a release name): `enable` runs before
    any mgr has told the mon which options its modules have."""
    try:
        return EXCLUDE_PERF_COUNTERS in (root / CEPH_PROMETHEUS_PY).read_text(errors="replace")
    except OSError:
        return False


def _set(ceph: Ceph, option: str, value: str) -> None:
    """`config set mgr <option>`, forced: before a mgr has run, the mon knows no module's options and refuses
    them unforced (EINVAL). The mon stores a forced one all the same (level `unknown` until a mgr declares
    it) and sends it with the rest of the mgr's configuration, so the module reads it at its first start."""
    ceph("config", "set", "mgr", option, value, "--force", as_json=False)


def settings(catalogue: Catalogue, root: Path) -> dict[str, str]:
    """The lab's options of perfwatch and of Ceph's prometheus module: a port per mgr, the core address
    only, the lab's collection interval, the counters' source, ssl in a secure lab."""
    module = bootstrap.MODULE_NAME
    address = catalogue.topo.core_address  # both modules listen there only, not on every address
    out = {f"mgr/{module}/{mgr}/server_port": str(port) for mgr, port in catalogue.module_ports().items()}
    out[f"mgr/{module}/server_addr"] = address
    out[f"mgr/{module}/collect_interval"] = str(COLLECT_INTERVAL)
    if catalogue.config.exporter_counters:  # the host exporters read them, with --daemon-counters
        out[f"mgr/{module}/daemon_counters_source"] = "exporters"
    if catalogue.tls is not None:  # with the certificate and key set first, it never serves plain HTTP
        out[f"mgr/{module}/ssl"] = "true"
    for mgr, port in catalogue.ceph_metrics_ports().items():
        out[f"mgr/{CEPH_PROMETHEUS}/{mgr}/server_port"] = str(port)
    if has_exclude_perf_counters(root):
        # Reef on: the module leaves per-daemon perf counters to ceph-exporter, which Debian does not ship.
        # The lab has none, so the module exports them, as Pacific's does (the rules read either).
        out[f"mgr/{CEPH_PROMETHEUS}/{EXCLUDE_PERF_COUNTERS}"] = "false"
    out[f"mgr/{CEPH_PROMETHEUS}/server_addr"] = address
    return out


def enable(ceph: Ceph, catalogue: Catalogue, root: Path) -> None:
    """Before any mgr starts: the TLS material, the modules' options (`settings`), and both modules enabled
    (forced: no mgr has listed them yet), so the first active mgr starts them configured, on the lab's core
    address only, and never respawns to load them. Enabling them under a running mgr respawned it once
    per module (about 10 s each time until it was active again)."""
    if catalogue.tls is not None:
        store_certificate(ceph, catalogue.tls)
    for option, value in settings(catalogue, root).items():
        _set(ceph, option, value)
    for name in (bootstrap.MODULE_NAME, CEPH_PROMETHEUS):
        ceph("mgr", "module", "enable", name, "--force", as_json=False)


def check_enabled(ceph: Ceph, catalogue: Catalogue, root: Path) -> None:
    """Once a mgr is active: it has both modules, enabled (LabError if it says it cannot run one); each
    option `enable` forced is one those modules declare (a misspelt name was taken too, and the module would
    run on its default); in a secure lab, perfwatch has the client CA and the password."""
    for name in (bootstrap.MODULE_NAME, CEPH_PROMETHEUS):
        runs = functools.partial(probes.module_runs, ceph, name)
        wait_for(runs, 60, f"the active mgr to have the {name} module, enabled", 0.5)
    undeclared = undeclared_options(ceph("mgr", "dump"), list(settings(catalogue, root)))
    if undeclared:
        raise LabError(f"the mgr modules declare no option {', '.join(undeclared)} (set with --force before a mgr ran)")
    if catalogue.tls is not None:
        secure_after_enable(ceph, catalogue.tls)


def undeclared_options(mgr_dump: dict, names: list[str]) -> list[str]:
    """Of `names` (`mgr/<module>/<option>`, or `mgr/<module>/<mgr id>/<option>` for one mgr's), those the
    module does not declare, from the options the active mgr reported with its available modules."""
    declared = {m.get("name"): set(m.get("module_options") or {}) for m in mgr_dump.get("available_modules", [])}
    out = []
    for name in names:
        _, module, rest = name.split("/", 2)
        if rest.rsplit("/", 1)[-1] not in declared.get(module, set()):
            out.append(name)
    return out


def store_certificate(ceph: Ceph, tls: LabTls) -> None:
    """The certificate and key as config-keys (one of the two ways the docs give), before the module first
    listens."""
    module = bootstrap.MODULE_NAME
    ceph("config-key", "set", f"mgr/{module}/crt", "-i", str(tls.server.cert), as_json=False)
    ceph("config-key", "set", f"mgr/{module}/key", "-i", str(tls.server.key), as_json=False)


def secure_after_enable(ceph: Ceph, tls: LabTls) -> None:
    """The client CA and the password through the module's own commands (the other way), once it answers.
    A standby mgr takes them at its next look (standby.py)."""
    wait_for(lambda: _answers(ceph), 60, "the perfwatch module to answer its commands", 0.5)
    ceph("perfwatch", "set-ssl-client-ca", "-i", str(tls.ca.cert), as_json=False)
    ceph("perfwatch", "set-basic-auth", USER, "-i", str(tls.password_file), as_json=False)


def _answers(ceph: Ceph) -> bool:
    try:
        ceph("perfwatch", "status", timeout=10)
    except CephCommandError:
        return False
    return True


# The mgr's own pools and the application the mgr tags each with right after creating it.
MGR_POOLS = {".mgr": "mgr", "device_health_metrics": "mgr_devicehealth"}


# The mgr's Python base class, as the release installs it (in the lab's root: "/" or its rootfs)
MGR_MODULE_PY = Path("usr/share/ceph/mgr/mgr_module.py")


def mgr_makes_its_pool(root: Path) -> bool:
    """Whether this Ceph's mgr makes its own pool unasked: from Quincy on, `.mgr` (MgrModule.MGR_POOL_NAME),
    which devicehealth's serve loop makes as it opens its database, every 2 s until it has. Read from the
    mgr_module.py the lab's mgrs run (a feature, not a release name); False when it cannot be read."""
    try:
        return "MGR_POOL_NAME" in (root / MGR_MODULE_PY).read_text(errors="replace")
    except OSError:
        return False


def mgr_pool_made(ceph: Ceph, ask: bool = True) -> bool:
    """Whether the mgr has made its own pool; when not, and `ask`, ask devicehealth to make it (a scrape):
    Pacific's devicehealth may never make it for a mgr that starts with every OSD already up. A mgr that
    makes `.mgr` itself (mgr_makes_its_pool) does so some 10 s after it starts, maybe after every other PG is
    clean, and must not be asked: the scrape's handler crashes Reef's mgr on Python 3.13.
    Why: docs/decisions/why-librados-not-send-command.md#the-same-crash-in-the-lab-devicehealths-scrape."""
    if any(pool in MGR_POOLS for pool in ceph("osd", "pool", "ls")):
        return True
    if ask:
        ceph("device", "scrape-health-metrics", timeout=10, as_json=False)
    return False


def tag_mgr_pools(ceph: Ceph) -> list[str]:
    """Give the mgr's own pool its application when it has none; returns what was done. Enabling modules
    under a running mgr restarts it (`up` enables them before one starts); on Tentacle a restart between
    its `osd pool create .mgr` and `osd pool application enable .mgr mgr` leaves the pool untagged for good
    (the next mgr sees it exists), and POOL_APP_NOT_ENABLED appears once the pool holds objects."""
    done = []
    for pool in ceph("osd", "pool", "ls", "detail"):
        app = MGR_POOLS.get(pool["pool_name"])
        if app is not None and not pool.get("application_metadata"):
            ceph(
                "osd", "pool", "application", "enable", pool["pool_name"], app, "--yes-i-really-mean-it", as_json=False
            )
            done.append(
                f"tagged the mgr's pool {pool['pool_name']} with application {app} (the mgr restarted before it did)"
            )
    return done
