"""The exporter's metric families (names without the ceph_perfwatch_ prefix that render() adds),
declared into EXPORTER_REGISTRY: the exporter's own, not the mgr module's."""

from typing import Iterable, Tuple

from perfwatch.common.metrics_model import Registry

EXPORTER_REGISTRY = Registry()

DAEMON: Tuple[str, ...] = ("ceph_daemon", "cluster", "hostname")
HOST: Tuple[str, ...] = ("hostname",)


def _family(name: str, type_: str, help_: str, labels: Iterable[str]) -> str:
    return EXPORTER_REGISTRY.declare(name, type_, help_, labels).name


# --- per daemon: ceph_daemon, cluster (the fsid), hostname -----------------------------------------
CPU_SECONDS = _family(
    "daemon_cpu_seconds_total", "counter", "CPU seconds the daemon has used, by mode (user, system)", (*DAEMON, "mode")
)
THREADS = _family("daemon_threads", "gauge", "Threads of the daemon's process", DAEMON)
RSS = _family("daemon_resident_memory_bytes", "gauge", "Resident memory of the daemon's process", DAEMON)
CGROUP_INFO = _family(
    "daemon_cgroup_info",
    "gauge",
    "The daemon's CPU cgroup (path and cgroup version); always 1",
    (*DAEMON, "cgroup_version", "cgroup"),
)
CPU_LIMIT = _family(
    "daemon_cgroup_cpu_limit_cores",
    "gauge",
    "CPU cores the daemon's cgroup may use: the smallest quota over its cgroup and its ancestors",
    DAEMON,
)
CPU_PERIODS = _family(
    "daemon_cgroup_cpu_periods_total",
    "counter",
    "CFS enforcement periods with runnable tasks, of the cgroup whose quota limits the daemon (else its own)",
    DAEMON,
)
CPU_THROTTLED_PERIODS = _family(
    "daemon_cgroup_cpu_throttled_periods_total",
    "counter",
    "CFS periods in which the limiting cgroup was throttled",
    DAEMON,
)
CPU_THROTTLED_SECONDS = _family(
    "daemon_cgroup_cpu_throttled_seconds_total",
    "counter",
    "Seconds the limiting cgroup spent throttled (summed over CPUs)",
    DAEMON,
)
OSD_DEVICE = _family(
    "osd_device_info",
    "gauge",
    "Kernel block devices beneath an OSD's BlueStore block, block.db and block.wal (device as in "
    "/proc/diskstats and node_disk_*); always 1",
    (*DAEMON, "role", "device", "partition", "via"),
)
DEVICE_INFO = _family(
    "device_info",
    "gauge",
    "The kind of each disk beneath an OSD (kind: hdd, ssd, nvme or unknown; from the transport and "
    "queue/rotational, the flag BlueStore reads); always 1",
    (*HOST, "device", "kind", "rotational", "transport"),
)
RGW_OBJECTER_OPS = _family(
    "rgw_objecter_ops_total",
    "counter",
    "RADOS operations an RGW sent that do bucket-index work: cls calls and omap reads, writes, deletes",
    (*DAEMON, "op"),
)

# --- host: hostname --------------------------------------------------------------------------------
ADDRESS_INFO = _family(
    "network_address_info",
    "gauge",
    "Always 1: an address of this host, the device that holds it and the device that carries its traffic "
    "(a VLAN's lower device, a bridge's physical ports, a bond itself): what joins an OSD's public and "
    "cluster addresses to the NIC that carries them",
    (*HOST, "address", "device", "carrier"),
)
LINK_CAPACITY = _family(
    "network_link_capacity_bytes",
    "gauge",
    "Bytes per second an interface can send: its root tbf/htb shaping rate (source=tc), else its link speed",
    (*HOST, "device", "source"),
)

# --- the exporter itself: hostname -----------------------------------------------------------------
COLLECTION_DURATION = _family("exporter_collection_duration_seconds", "gauge", "Seconds the last collection took", HOST)
PART_DURATION = _family(
    "exporter_part_duration_seconds",
    "gauge",
    "Seconds each part of the exporter (parts/) took in the last collection, over every daemon it read",
    (*HOST, "part"),
)
PART_SUCCESS = _family(
    "exporter_part_success",
    "gauge",
    "Whether each part of the exporter read all it reads without an error in the last collection (1) or not (0)",
    (*HOST, "part"),
)
COLLECTION_ERRORS = _family(
    "exporter_collection_errors_total",
    "counter",
    "Things the exporter failed to read, by source; the collection goes on",
    (*HOST, "source"),
)
REFUSED = _family(
    "exporter_refused_total",
    "counter",
    "Things the exporter refused to trust or read, by reason: a process claiming a daemon's name as "
    "another user, a socket another user listens on, a file that is not a regular file, too large, a "
    "symlink loop",
    (*HOST, "reason"),
)
HTTP_REFUSED = _family(
    "exporter_http_refused_total",
    "counter",
    "Connections and requests the endpoint refused, by reason: plain HTTP to its TLS port, a failed TLS "
    "handshake (no or a bad client certificate), a client certificate without an allowed name, no or "
    "wrong basic auth credentials",
    (*HOST, "reason"),
)
COLLECTIONS = _family("exporter_collections_total", "counter", "Collections finished since the exporter started", HOST)
CACHE_AGE = _family(
    "exporter_cache_age_seconds",
    "gauge",
    "Seconds since the collection this answer comes from ended (scrapes are served from its cache)",
    HOST,
)
DAEMONS = _family(
    "exporter_daemons",
    "gauge",
    "Ceph daemons the last collection reported (of the --cluster-fsid cluster, if given)",
    HOST,
)
DAEMONS_UNKNOWN_CLUSTER = _family(
    "exporter_daemons_unknown_cluster",
    "gauge",
    'Ceph daemons on this host whose cluster fsid no source told: reported with cluster="", or left out '
    "under --cluster-fsid",
    HOST,
)

ERROR_SOURCES = ("proc", "cgroup", "asok", "device", "network")
# Reasons for a refusal; each module that refuses names its own (fsroot, discovery, asok), checked
# against this list by a test.
REFUSAL_REASONS = ("untrusted_process", "untrusted_socket", "not_regular_file", "too_large", "symlink_loop")
