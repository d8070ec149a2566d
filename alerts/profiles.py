"""The one config of the rules: every threshold, rate window, `for:` duration and selector, each with why.

Two profiles: PRODUCTION (what an operator ships) and LAB (shorter windows, `for:` durations and, where the
lab's shared two cores or its tiny loop devices need it, other numbers, so that the lab proves the logic in
minutes). They differ only in numbers and durations: tests/unit/test_alert_rules.py checks that every
field that is not a number or a duration is the same in both.

Figures cited: FIELD_NOTES ("Deciding which resource saturates"), the published Ceph test campaigns
behind it, node-mixin, kubernetes-mixin and ceph-mixin defaults.
"""

from __future__ import annotations

import dataclasses

NUMBER_TYPES = (int, float)


@dataclasses.dataclass(frozen=True)
class Profile:
    name: str

    # ----- selectors: which scrape jobs feed the rules (the same in every profile) -------------------
    # The perfwatch mgr module's endpoint (every mgr; standbys answer empty).
    module_selector: str = 'job="perfwatch"'
    # The perfwatch host exporter on every Ceph host (scraped with honor_labels: it sets `cluster`).
    exporter_selector: str = 'job="perfwatch-host"'
    # node_exporter on every Ceph host: job "node" (cephadm, the node-mixin's convention) or "node-exporter"
    # (kube-prometheus-stack and kube-prometheus, e.g. beside Rook). Per-device and per-host inputs take the
    # max over targets, so a host scraped by both is not counted twice. Its targets must carry `cluster` and
    # `hostname` target labels (the exporter's --hostname, by default the short host name Ceph uses): that
    # is the join key.
    node_selector: str = 'job=~"node|node-exporter"'
    # Ceph's own metrics: the prometheus mgr module (job "ceph", as cephadm names it: pool usage for IOPS/GB,
    # and per-OSD client I/O on Pacific) and ceph-exporter (job "ceph-exporter": per-OSD client I/O from
    # Reef on, where the module leaves perf counters out by default). Per-OSD rates take the max over
    # sources, so a cluster that has both export them is not counted twice. Rook names its jobs
    # rook-ceph-mgr and rook-ceph-exporter: set this selector to match.
    ceph_selector: str = 'job=~"ceph|ceph-exporter"'
    # Devices under an OSD that the media verdict judges: not a loop file's backing disk, which holds the
    # host's other files and every other loop-backed OSD too; the loop device itself is what the OSD
    # queues on. (A dm device and the disks beneath it are both judged: each names itself.)
    media_device_selector: str = 'via!="loop"'
    # Interfaces the network verdict judges: not loopback nor virtual bridges' internals.
    nic_selector: str = 'device!~"lo|docker.*|cni.*|virbr.*|veth.*"'
    # The 4 KiB write IOPS result of the osd benchmark: the media's measured small-write capability.
    iops_bench_selector: str = 'kind="osd",metric="write_iops_4k"'
    # The rgw probe's results that time bucket-index work (omap ops on an index object, shard listing).
    bucket_index_selector: str = 'kind="rgw",metric=~"omap_.*_latency|index_list_latency"'

    # ----- windows and evaluation --------------------------------------------------------------------
    # Rate window: at least 4 scrapes of every input. Production scrapes every 15-30 s and perfwatch
    # collects every 30 s (collect_interval): 5 m holds 10 collections (node-mixin uses 5 m too). The lab
    # scrapes every 5 s and collects every 10 s.
    rate_window: str = "5m"
    evaluation_interval: str = "1m"

    # ----- media: the OSD's device busy *and* queued *and* the OSD's own commits slowed ---------------
    # Busy fraction (io_time rate) of the device. Alone it is not saturation (multi-queue NVMe reads
    # 100 % long before it is full), so two more conditions must hold.
    media_busy_ratio: float = 0.9
    # Average requests in flight (weighted io_time rate). node-mixin's NodeDiskIOSaturation uses 10 for
    # 30 m on any disk; an OSD's device with 4+ waiting while it is 90 % busy is queueing, and the latency
    # condition below keeps a deep but fast NVMe queue from firing.
    media_queue_depth: float = 4.0
    # The OSD's RocksDB synchronous submit (its BlueStore kv commit) latency, mean over the window. Healthy
    # flash commits in about 1 ms and HDD with its WAL on the same disk in about 10 ms; the media-bound
    # campaigns saw tail latency multiply when the WAL device queued. 50 ms is beyond both healthy figures.
    media_commit_latency_seconds: float = 0.05
    # ... or the device's own await (seconds per I/O, iostat's await), for a data device whose RocksDB/WAL
    # lives on another, faster one: its commits stay fast while it drowns. A healthy HDD serves in 5-15 ms
    # even with a few queued; 50 ms per I/O is a queue waiting several service times.
    media_await_seconds: float = 0.05
    media_for: str = "10m"

    # ----- CPU: at the cgroup limit and throttled, or the host out of CPU ----------------------------
    # CPU used against the cgroup limit: the seeds' 4 KiB campaigns ran at 89-92 % of a 7-vCPU limit.
    cpu_quota_ratio: float = 0.9
    # Fraction of CFS periods throttled: kubernetes-mixin's CPUThrottlingHigh fires at 25 %.
    cpu_throttled_periods_ratio: float = 0.25
    # Host CPU busy (1 - idle) for OSDs without a limit...
    host_cpu_busy_ratio: float = 0.9
    # ... and runnable load per core: above 1, threads wait for a CPU (node-mixin's NodeCPUHighUsage is
    # 90 % busy for 15 m; the load condition tells a busy host from one that makes work wait).
    host_load_per_core: float = 1.5
    # FIELD_NOTES: ODF's OSDHighCPULoad and node-mixin's NodeCPUHighUsage both wait 15 m.
    cpu_for: str = "15m"

    # ----- network: a NIC at its capacity (tc shaping rate, else link speed) --------------------------
    # The campaigns' large reads ran flat at link capacity; 90 % of capacity for the `for:` is a full link.
    network_utilisation_ratio: float = 0.9
    network_for: str = "10m"

    # ----- BlueStore, RocksDB, BlueFS -----------------------------------------------------------------
    # Ranges waiting in the OSD's compaction queue: Ceph queues range compactions after deletes (PG
    # removal); a queue that stays above a few means compaction does not keep up.
    compaction_queue_length: float = 5.0
    compaction_for: str = "30m"
    # Seconds of write stall per second (rocksdb_write_delay_time; moves only with rocksdb_perf on):
    # 1 % of the time stalled is already visible as client latency.
    write_stall_ratio: float = 0.01
    write_stall_for: str = "10m"
    # Bytes of RocksDB on the slow device (Ceph's own BLUEFS_SPILLOVER warns at any): any spill-over.
    spillover_bytes: float = 0.0
    spillover_for: str = "15m"
    # Onode cache miss fraction: "missing far more than it hits" is 3 misses per hit...
    onode_miss_ratio: float = 0.75
    # ... under load: at least this many onode lookups per second (an idle OSD's few misses are noise).
    onode_min_lookups_per_second: float = 100.0
    onode_for: str = "30m"

    # ----- benchmarks and probes ----------------------------------------------------------------------
    # Bucket-index op latency from the rgw probe: the campaigns saw 57 ms average reads with the index on
    # NVMe and 142 ms on HDD; an omap op alone beyond 100 ms is an index on slow media or overloaded.
    bucket_index_latency_seconds: float = 0.1
    bucket_index_for: str = "15m"
    # perfwatch already requires probe_regression_runs consecutive regressed results before it sets
    # bench_regression: the alert only waits out one more evaluation.
    regression_for: str = "5m"
    # Planned IOPS per stored GB: the seeds' capacity planning uses 3-30 IOPS per provisioned GB (public
    # cloud SSD block storage); below the low end, an IOPS-bound workload runs out of media first.
    iops_per_gb_target: float = 3.0
    # The top of that planning range (no alert: the dashboards draw the 3-30 band): above it the media has
    # IOPS to spare for the data stored.
    iops_per_gb_high_tier: float = 30.0
    # Too little data stored for the ratio to mean anything (an empty cluster has infinite headroom).
    iops_per_gb_min_stored_bytes: float = 100e9
    iops_per_gb_for: str = "1h"

    # ----- self-monitoring ----------------------------------------------------------------------------
    # The module's data older than this (cache_age_seconds): 3 collect_intervals of 30 s plus slack.
    collection_stale_seconds: float = 180.0
    # A host exporter whose answers are older than this (exporter_cache_age_seconds): 8 of its 15 s
    # collections; its /healthz says stuck after 60 s.
    exporter_stale_seconds: float = 120.0
    # An OSD whose counters could not be read for this long (daemon_up == 0).
    collection_failing_for: str = "10m"
    # A target down or an input missing: long enough to ride out a restart or an mgr failover.
    target_down_for: str = "5m"
    inputs_missing_for: str = "15m"


PRODUCTION = Profile(name="production")

LAB = dataclasses.replace(
    PRODUCTION,
    name="lab",
    rate_window="30s",  # 6 scrapes at 5 s, 3 collections at 10 s
    evaluation_interval="5s",
    media_for="30s",
    # The lab's loop devices sit on one virtual disk: an unthrottled OSD's loop device reaches about
    # 1 ms commits even under load, a throttled one hundreds of ms.
    media_commit_latency_seconds=0.05,
    cpu_for="30s",
    # An OSD held to 0.2 cores on the lab's two shared cores gets 80-99 % of its quota, depending on what
    # else runs at that moment; throttling (the periods ratio) is what shows it wants more.
    cpu_quota_ratio=0.75,
    # The lab's "hosts" are one 2-core machine shared with the client load, Prometheus and the mgr: its
    # CPU is judged only at the extreme, or every host would be out of CPU under any load.
    host_cpu_busy_ratio=0.99,
    host_load_per_core=4.0,
    network_for="30s",
    compaction_for="2m",
    write_stall_for="1m",
    spillover_for="1m",
    onode_min_lookups_per_second=20.0,
    onode_for="2m",
    bucket_index_for="1m",
    regression_for="1m",
    iops_per_gb_min_stored_bytes=1e6,
    iops_per_gb_for="2m",
    collection_stale_seconds=60.0,  # collect_interval 10 s in the lab
    exporter_stale_seconds=30.0,  # the lab's exporters collect every 5 s
    collection_failing_for="1m",
    target_down_for="1m",
    inputs_missing_for="2m",
)

PROFILES = {p.name: p for p in (PRODUCTION, LAB)}


def differing_fields(a: Profile, b: Profile) -> dict[str, tuple[object, object]]:
    """The fields whose values differ between two profiles, name -> (a's, b's)."""
    return {
        f.name: (getattr(a, f.name), getattr(b, f.name))
        for f in dataclasses.fields(Profile)
        if getattr(a, f.name) != getattr(b, f.name)
    }
