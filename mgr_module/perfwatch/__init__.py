"""perfwatch: scheduled, safe micro-benchmarks and the performance metrics Ceph's exporters leave out."""

import importlib.util

# ceph_module exists only inside ceph-mgr. Outside it (unit tests, tools) the package still imports,
# so the pure modules can be used without Ceph; inside it, import errors surface as they should.
if importlib.util.find_spec("ceph_module") is not None:  # pragma: no cover - runs inside ceph-mgr
    # ceph-mgr looks for these subclasses here.
    from .module import Module  # noqa: F401
    from .standby import StandbyModule  # noqa: F401
