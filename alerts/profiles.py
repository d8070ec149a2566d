"""The one config of the rules: every threshold, rate window, `for:` duration and selector, each with why.

Two profiles: PRODUCTION (what an operator ships) and LAB (shorter windows, `for:` durations and, where the
lab's shared two cores or its tiny loop devices need it, other numbers, so that the lab proves the logic in
minutes). They differ only in numbers and durations (tests/unit/alerts/test_rules.py checks it). Figures
cited: the published Ceph test campaigns that alerts/runbook.md describes (5-node all-NVMe clusters with
RocksDB/WAL on Optane, 6-node HDD clusters with NVMe bucket indexes), node-mixin, kubernetes-mixin and
ceph-mixin defaults; the lab's: docs/decisions/lab-margins.md.
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
    # Either of them: the OSDs' counters come from the module, or from the host exporters run with
    # --daemon-counters (the module's daemon_counters_source). The rules pick one per OSD (promql.either);
    # dashboards read the plain gauges with this.
    daemon_counters_selector: str = 'job=~"perfwatch|perfwatch-host"'
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
    # host's other files and every other loop-backed OSD too (the loop device itself is what the OSD
    # queues on); nor the paths of a dm-multipath device, each carrying a share of its one disk's queue
    # (the multipath device is judged).
    media_device_selector: str = 'via!~"loop|multipath"'
    # ... nor a device-mapper or md device (an LVM volume, dm-crypt, a RAID): it is judged through the
    # disks beneath it, which the exporter reports too (via="dm"/"md"). They are what queues, and
    # several volumes share one (ceph-volume's `--osds-per-device`), so the verdict names the disk once.
    stacked_device_selector: str = 'transport=~"dm|md"'
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

    # ----- media: a device busy *and* queued *and* slow for its kind --------------------------------
    # The exporter's ceph_perfwatch_device_info says each device's kind (hdd, ssd, nvme, unknown: see
    # exporters/perfwatch_host_exporter/device_kind.py). "Slow" is judged for that kind: flash saturates at
    # latencies far below a disk's healthy ones. `unknown` (a virtio, loop or dm device that says it
    # rotates, the kernel's default there) is judged as hdd: the conservative side, never a false verdict
    # for a flash device taken for a disk.
    # Busy fraction (io_time rate) of the device. Alone it is not saturation (multi-queue NVMe reads
    # 100 % long before it is full), so two more conditions must hold.
    media_busy_ratio: float = 0.9
    # Average requests in flight (weighted io_time rate). node-mixin's NodeDiskIOSaturation uses 10 for
    # 30 m on any disk; a device with 4+ waiting while it is 90 % busy is queueing, and the latency
    # conditions below keep a deep but fast flash queue from firing.
    media_queue_depth: float = 4.0
    # ... except on a device that holds only RocksDB DB/WAL partitions (no OSD's data): each OSD's kv sync
    # thread writes its WAL one batch at a time, so N OSDs keep at most about N writes in flight there,
    # however overloaded they are (their ops queue in the OSD, above the device). Its queue condition is
    # this many per OSD whose WAL it holds, at most media_queue_depth: most of them waiting on it. (The
    # campaigns' Optane held 14 OSDs' WAL: 4; the lab's shared DB device holds 2: 1.5.)
    media_wal_queue_per_osd: float = 0.75
    # The device's own await (seconds per I/O, iostat's await, reads and writes together) for its kind:
    # - hdd: a 7.2k disk serves in 5-15 ms even with a few queued (seek plus half a rotation is about
    #   8 ms); 50 ms per I/O is a queue waiting several service times.
    media_await_hdd_seconds: float = 0.05
    # - ssd (SATA/SAS): unloaded 4 KiB I/O takes 0.05-0.2 ms; 10 ms is 50 or more service times queued
    #   (a SATA SSD at its IOPS limit with 32 in flight waits a few ms at most).
    media_await_ssd_seconds: float = 0.01
    # - nvme: unloaded service time is tens to hundreds of microseconds (the campaigns' NVMe data devices
    #   and their Optane DB/WAL device); 2 ms is tens of service times queued, or a 1 MiB stream at its
    #   bandwidth limit (about 0.4 ms per MiB at 2.5 GB/s, 4+ deep) -- the campaigns' 1 MiB random writes,
    #   media-bound.
    media_await_nvme_seconds: float = 0.002
    # The BlueStore kv commit (RocksDB synchronous submit) latency, mean over the window, of the OSDs whose
    # RocksDB WAL is on the device (its block.wal, else block.db, else block), for the device's kind. Slow
    # commits implicate that device, not the OSD's other ones.
    # - hdd: with its WAL on the same disk an OSD commits in about 10 ms; 50 ms is beyond healthy.
    media_commit_hdd_seconds: float = 0.05
    # - ssd: about 1 ms on a datacenter SSD, 2-10 ms on one without power-loss protection (every commit
    #   waits for a cache flush): 20 ms is beyond both.
    media_commit_ssd_seconds: float = 0.02
    # - nvme: healthy flash commits in about 1 ms (0.1-0.5 ms on Optane); 5 ms is several times that.
    media_commit_nvme_seconds: float = 0.005
    media_for: str = "10m"

    # ----- CPU: at the cgroup limit and throttled, or the host out of CPU ----------------------------
    # CPU used against the cgroup limit: the seeds' 4 KiB campaigns ran at 89-92 % of a 7-vCPU limit.
    cpu_quota_ratio: float = 0.9
    # Fraction of CFS periods throttled: kubernetes-mixin's CPUThrottlingHigh fires at 25 %.
    cpu_throttled_periods_ratio: float = 0.25
    # Host CPU busy (1 - idle) for OSDs without a limit...
    host_cpu_busy_ratio: float = 0.9
    # ... and runnable threads per core (node_procs_running, averaged over the rate window): above 1, threads
    # wait for a CPU (node-mixin's NodeCPUHighUsage is 90 % busy for 15 m; this condition tells a busy host
    # from one that makes work wait). Not node_load1: Linux's load average also counts threads in
    # uninterruptible sleep, so a host whose disks are saturated (many OSD threads waiting on I/O) looked
    # out of CPU beside the media verdict.
    host_runnable_per_core: float = 1.5
    # OpenShift Data Foundation's OSDHighCPULoad and node-mixin's NodeCPUHighUsage both wait 15 m.
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
    # Onode cache too small: a write of a new object misses by design (no cache holds what does not
    # exist yet: 2.7-2.9 misses per write, 73 % of lookups, in a 4 KiB ingest on the lab), so the miss
    # ratio alone calls every ingest a small cache. Measured on the lab (rados bench, 45,000 4 KiB
    # objects; one OSD's cache cut to 20 MB, holding 6,000 onodes): random reads missed 46 % of lookups
    # there (1.7 per read: a read looks up twice, the first misses) and 0 % on the OSDs whose cache held
    # them all. So the alert wants all of: at least this share of lookups missing ...
    onode_miss_ratio: float = 0.3
    # ... under load: at least this many onode lookups per second (an idle OSD's few misses are noise) ...
    onode_min_lookups_per_second: float = 100.0
    # ... misses that come with client reads: the misses beyond onode_misses_per_write per write (client
    # and replica writes: 2.7-2.9 in the ingest above) per client read, at least this (a read of an
    # object the cache holds misses nothing; one of an evicted object 1.7 live) ...
    onode_misses_per_write: float = 3.0
    onode_read_miss_ratio: float = 0.5
    # ... and at most this: a read looks up its object at most twice, so more misses per read come from
    # neither reads nor writes (backfill, recovery, scrub: no bigger cache helps them). Left out on purpose:
    # a cache too small for a workload that mostly overwrites (its misses look like new objects') ...
    onode_max_misses_per_read: float = 2.5
    # ... and a full cache: it gains fewer onodes per second than this fraction of its misses (live: the
    # cut cache gained 2/s at 8,500 misses/s; a cache with room gained 1,500/s at 4,000 misses/s in the
    # ingest). A cache that still grows is warming up, not too small.
    onode_full_growth_fraction: float = 0.1
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
    # two evaluations (5 s) over the line, the line itself judged over the 30 s rate window: a step load
    # fires in about 45 s, so a knob's test is short
    media_for="10s",
    # The lab slows a device with blk-throttle, which holds each I/O above the device until its turn: the
    # wait is not counted in the device's io_time, so a throttled loop device at its limit reads 87-94 %
    # busy, not the 100 % of a real device at its limit (docs/decisions/lab-margins.md). The queue and the
    # await or commits still have to say saturated.
    media_busy_ratio=0.8,
    # 30 s for CPU: the lab's two cores are briefly out of CPU under the media tests' 4 KiB loads too (host
    # busy 99 %, load 4 per core), and at 20 s that fired beside the media alert once
    cpu_for="30s",
    # An OSD held to 0.2 cores on the lab's two shared cores gets 80-99 % of its quota, depending on what
    # else runs at that moment; throttling (the periods ratio) is what shows it wants more.
    cpu_quota_ratio=0.75,
    # The lab's "hosts" are one 2-core machine shared with the client load, Prometheus and the mgr: its
    # CPU is judged only at the extreme, or every host would be out of CPU under any load.
    host_cpu_busy_ratio=0.99,
    host_runnable_per_core=4.0,
    network_for="10s",
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
    # a SIGKILLed active mgr leaves no mgr serving perfwatch for about 19 s here (the mon's beacon grace is
    # 20 s): 30 s rides out a failover, with little margin (docs/decisions/lab-margins.md)
    target_down_for="30s",
    inputs_missing_for="2m",
)

PROFILES = {p.name: p for p in (PRODUCTION, LAB)}

# The kinds of device_info, and the kind whose limits each is judged by.
MEDIA_KINDS = {"hdd": "hdd", "unknown": "hdd", "ssd": "ssd", "nvme": "nvme"}


def media_limits(p: Profile, kind: str) -> tuple[float, float]:
    """(await, commit) seconds from which a device of `kind` is slow."""
    judged = MEDIA_KINDS[kind]
    return getattr(p, f"media_await_{judged}_seconds"), getattr(p, f"media_commit_{judged}_seconds")


def differing_fields(a: Profile, b: Profile) -> dict[str, tuple[object, object]]:
    """The fields whose values differ between two profiles, name -> (a's, b's)."""
    return {
        f.name: (getattr(a, f.name), getattr(b, f.name))
        for f in dataclasses.fields(Profile)
        if getattr(a, f.name) != getattr(b, f.name)
    }
