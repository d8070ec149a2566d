"""The mgr modules `up` enables: perfwatch (from the checkout) and Ceph's own `prometheus` module.

Both mgrs of a lab share this machine and both listen (the standby too), so each module gets a port per
mgr (`mgr/<module>/<mgr id>/server_port`); with one port, whichever mgr binds it first wins and the
other raises MGR_MODULE_ERROR.
"""

from __future__ import annotations

import functools

from . import bootstrap, probes
from .cephcli import Ceph
from .daemons import Catalogue
from .probes import wait_for

CEPH_PROMETHEUS = "prometheus"  # Ceph's module, which serves the ceph_* metrics
# Seconds between perfwatch's collections in the lab: the lab profile's rules (30 s windows) see three.
COLLECT_INTERVAL = 10


def _per_mgr_ports(ceph: Ceph, module: str, ports: dict[str, int]) -> None:
    for mgr, port in ports.items():
        ceph("config", "set", "mgr", f"mgr/{module}/{mgr}/server_port", str(port), as_json=False)


def enable(ceph: Ceph, catalogue: Catalogue) -> None:
    """Configure and enable perfwatch, then Ceph's prometheus module (on the lab's core address)."""
    module = bootstrap.MODULE_NAME
    for name in (module, CEPH_PROMETHEUS):
        listed = functools.partial(probes.module_listed, ceph, name)
        wait_for(listed, 60, f"the active mgr to list the {name} module", 0.5)
    address = catalogue.topo.core_address  # both modules listen there only, not on every address
    _per_mgr_ports(ceph, module, catalogue.module_ports())
    ceph("config", "set", "mgr", f"mgr/{module}/server_addr", address, as_json=False)
    ceph("config", "set", "mgr", f"mgr/{module}/collect_interval", str(COLLECT_INTERVAL), as_json=False)
    ceph("mgr", "module", "enable", module, as_json=False)
    _per_mgr_ports(ceph, CEPH_PROMETHEUS, catalogue.ceph_metrics_ports())
    ceph("config", "set", "mgr", f"mgr/{CEPH_PROMETHEUS}/server_addr", address, as_json=False)
    ceph("mgr", "module", "enable", CEPH_PROMETHEUS, as_json=False)
