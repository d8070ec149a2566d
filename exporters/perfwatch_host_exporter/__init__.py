"""perfwatch-host-exporter: what only a Ceph host can see, for Prometheus.

Per Ceph daemon CPU seconds, threads and RSS from /proc; the daemon's cgroup CPU quota and throttling;
the map from each OSD to the block devices beneath it (joinable with node_exporter's node_disk_*);
RGW bucket-index work counters from the admin socket; link capacity per network interface.
Standard library only, Python 3.6 and later. Rendering reuses the mgr module's `perfwatch.common.exposition`
and `perfwatch.common.metrics_model` (its families go into a registry of their own, families.EXPORTER_REGISTRY).
"""
