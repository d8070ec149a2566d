"""The exporter's parts, one file each: a part reads one thing of each daemon (its process, its cgroup, an
OSD's devices and counters, an RGW's objecter) or of the host (its disks' kinds, its network) and returns
samples. Each registers itself in PARTS (registry.py); the collector runs the enabled ones and reports,
for each, the seconds it took and whether it failed, as node_exporter does for its collectors. To add a
part: a new file here, imported below; a daemon's parts run in the order they are imported."""

# isort: off
from . import process  # noqa: F401  (each import registers its part)
from . import cgroup  # noqa: F401
from . import osd_devices  # noqa: F401
from . import osd_counters  # noqa: F401
from . import rgw_objecter  # noqa: F401
from . import device_kinds  # noqa: F401
from . import network  # noqa: F401

# isort: on
from .registry import PARTS  # noqa: F401
