"""Alerts, in the ceph-mixin convention: CamelCase names, `severity` and `type` labels, `summary`,
`description` and a `documentation` link to the alert's section of alerts/runbook.md.

Every expression reads recorded series (recording.py); the thresholds and `for:` come from the profile.
A saturation alert's value is the figure that decided it (busy fraction, cores, utilisation), so its
description can quote it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .profiles import Profile
from .recording_load import ENTITIES, share

ALERT_TYPE = "perfwatch"  # the `type` label (ceph-mixin uses ceph_default for its own)
RUNBOOK_URL = "https://github.com/ceph-perfwatch/ceph-perfwatch/blob/main/alerts/runbook.md"


@dataclasses.dataclass(frozen=True)
class Alert:
    name: str
    expr: str
    duration: str
    severity: str
    summary: str
    description: str
    labels: tuple[tuple[str, str], ...] = ()

    def rule(self) -> dict[str, Any]:
        return {
            "alert": self.name,
            "expr": self.expr,
            "for": self.duration,
            "labels": {"severity": self.severity, "type": ALERT_TYPE, **dict(self.labels)},
            "annotations": {
                "summary": self.summary,
                "description": self.description,
                "documentation": f"{RUNBOOK_URL}#{self.name.lower()}",
            },
        }


def _pct(x: float) -> str:
    return f"{x * 100:g} %"


# A saturated device makes its OSDs' benchmarks slow and their RocksDB stall: symptoms of the device's
# alert (PerfwatchDeviceSaturated, which names them), not second problems. That alert is per device and
# has no ceph_daemon label for an Alertmanager inhibition to match, so these alerts leave such OSDs out.
UNLESS_MEDIA_SATURATED = (
    'unless on (cluster, ceph_daemon)\n(osd:ceph_perfwatch_saturation:verdict{resource="media"} == 1)'
)
DEVICE_LABELS = "$labels.cluster $labels.hostname $labels.device"


def _on_device(record: str, around: str = "{}") -> str:
    """A template query for one recorded series of the alert's device (placed in `around`)."""
    series = around.format(record + "{cluster=%q, hostname=%q, device=%q}")
    return f'query (printf "{series}" {DEVICE_LABELS})'


def _device_figure(record: str, shown: str = "humanizeDuration") -> str:
    """The device's value of a recorded series, shown as a duration or by `shown` ("none" where it has none)."""
    return "{{ with " + _on_device(record) + " }}{{ . | first | value | " + shown + " }}{{ else }}none{{ end }}"


def _osds_on_device(each: str, around: str = "{}", record: str = "osd_device:ceph_perfwatch_osd_device:info") -> str:
    """The OSDs on the alert's device, comma-separated, each rendered by `each` (a template of `.Labels`)."""
    rows = _on_device(record, around)
    return (
        "{{ range $i, $s := " + rows + ' | sortByLabel "ceph_daemon" }}{{ if $i }}, {{ end }}'
        "{{ with $s }}" + each + "{{ end }}{{ end }}"
    )


# The OSDs whose public or cluster address a NIC carries (rows of host_address:..._carrier:info for the NIC).
NIC_OSDS = (
    "max by (ceph_daemon) (osd:ceph_perfwatch_osd_network:info * on (cluster, hostname, address) group_left () "
    "max by (cluster, hostname, address) ({}))"
)


def _load(level: str, matchers: str, args: str) -> str:
    """Whose load, from the recorded shares (recording_load.py): "pool P NN %, client.N NN %" of the `level`
    (osd, host) that `matchers` (a printf pattern) and `args` (its template arguments) select; empty where
    the module exports no load (load_attribution off)."""
    pool, client = (f'query (printf "topk(1, {share(level, e)}{{{matchers}}})" {args})' for e in ENTITIES)
    return (
        "{{ with " + pool + " }}{{ with . | first }}pool {{ .Labels.pool }} {{ .Value | humanizePercentage }}"
        "{{ end }}{{ end }}{{ with " + client + " }}{{ with . | first }}, {{ .Labels.client }} "
        "{{ .Value | humanizePercentage }}{{ end }}{{ end }}"
    )


# The device's OSDs that have load shares, and one OSD's pool shares (in a range over the device's OSDs: $s)
OSDS_WITH_LOAD = "{} and on (cluster, ceph_daemon) " + share("osd", "pool")
_LOAD_OF_OSD = 'query (printf "{pool}{{cluster=%q, ceph_daemon=%q}}" $labels.cluster $s.Labels.ceph_daemon)'


def _whose_load(level: str, matchers: str, args: str, whose: str) -> str:
    """A sentence naming the busiest pool and client by their share of `whose` client ops; none without."""
    pool = f'query (printf "{share(level, "pool")}{{{matchers}}}" {args})'
    return (
        "{{ with "
        + pool
        + " }} Busiest by their share of "
        + whose
        + " client ops: "
        + _load(level, matchers, args)
        + ".{{ end }}"
    )


def saturation_alerts(p: Profile) -> list[Alert]:
    return [
        Alert(
            "PerfwatchDeviceSaturated",
            # group_right: the alert takes the verdict's labels (the device's kind) and the busy fraction as
            # its value; one alert per device, however many OSDs it holds
            "host_device:node_disk_busy:ratio\n"
            "* on (cluster, hostname, device) group_right ()\n"
            "(host_device:ceph_perfwatch_media_saturated:bool == 1)",
            p.media_for,
            "warning",
            "Device {{ $labels.device }} ({{ $labels.kind }}) on {{ $labels.hostname }} holds back "
            + _osds_on_device("{{ .Labels.ceph_daemon }}", "max by (ceph_daemon) ({})"),
            "Device {{ $labels.device }} ({{ $labels.kind }}) of host {{ $labels.hostname }} is "
            "{{ $value | humanizePercentage }} busy with "
            + _device_figure("host_device:node_disk_queue:avg", 'printf "%.1f"')
            + " requests in flight on average (limit "
            + _device_figure("host_device:ceph_perfwatch_media_queue_limit:avg", 'printf "%.1f"')
            + "), and slow for its kind: its I/Os take "
            + _device_figure("host_device:node_disk_await:seconds")
            + " (await; limit "
            + _device_figure("host_device:ceph_perfwatch_media_await_limit:seconds")
            + ")"
            + "{{ with "
            + _on_device("host_device:ceph_perfwatch_media_commit_latency:seconds")
            + " }}; the BlueStore commits of the OSDs whose RocksDB WAL it holds take "
            "{{ . | first | value | humanizeDuration }} (limit "
            + _device_figure("host_device:ceph_perfwatch_media_commit_limit:seconds")
            + "){{ end }}. It holds back "
            + _osds_on_device("{{ .Labels.ceph_daemon }} ({{ .Labels.role }})")
            + ". The media is saturated."
            + "{{ with "
            + _on_device("osd_device:ceph_perfwatch_osd_device:info", OSDS_WITH_LOAD)
            + " }} Busiest by their share of each OSD's client ops: "
            + _osds_on_device(
                "{{ .Labels.ceph_daemon }}{{ with "
                + _LOAD_OF_OSD.format(pool=share("osd", "pool"))
                + " }} ("
                + _load("osd", "cluster=%q, ceph_daemon=%q", "$labels.cluster $s.Labels.ceph_daemon")
                + "){{ end }}",
                "max by (ceph_daemon) ({})",
            )
            + ".{{ end }}",
            (("resource", "media"),),
        ),
        Alert(
            "PerfwatchOSDCPUSaturated",
            # group_right: the alert takes the verdict's labels (its `reason`) and the cores as its value
            "osd:ceph_perfwatch_cpu_usage:cores\n"
            "* on (cluster, hostname, ceph_daemon) group_right ()\n"
            "(osd:ceph_perfwatch_cpu_saturated:bool == 1)",
            p.cpu_for,
            "warning",
            "{{ $labels.ceph_daemon }} on {{ $labels.hostname }} is held back by CPU ({{ $labels.reason }})",
            '{{ $labels.ceph_daemon }} on host {{ $labels.hostname }} uses {{ $value | printf "%.2f" }} cores. '
            f"reason=cgroup_limit: it runs at {_pct(p.cpu_quota_ratio)} or more of its cgroup CPU limit and is "
            f"throttled in {_pct(p.cpu_throttled_periods_ratio)} or more of the CFS periods. reason=host_cpu: it "
            f"has no limit and its host is {_pct(p.host_cpu_busy_ratio)} or more busy with "
            f"{p.host_runnable_per_core:g} or more runnable threads per core."
            + _whose_load("osd", "cluster=%q, ceph_daemon=%q", "$labels.cluster $labels.ceph_daemon", "its"),
            (("resource", "cpu"),),
        ),
        Alert(
            "PerfwatchHostNetworkSaturated",
            # group_right: the alert takes the verdict's labels (the network the NIC carries) and the
            # utilisation as its value; one alert per NIC and direction, only NICs that carry Ceph's traffic
            "host_nic:ceph_perfwatch_network_utilisation:ratio\n"
            "* on (cluster, hostname, device, direction) group_right ()\n"
            "(host_nic:ceph_perfwatch_network_saturated:bool == 1)",
            p.network_for,
            "warning",
            "Host {{ $labels.hostname }}'s link {{ $labels.device }} "
            '({{ if eq $labels.network "unknown" }}which network: unknown{{ else }}{{ $labels.network }} network'
            "{{ end }}) is full ({{ $labels.direction }})",
            "Interface {{ $labels.device }} of host {{ $labels.hostname }}"
            '{{ if ne $labels.network "unknown" }}, which carries Ceph\'s {{ $labels.network }} traffic,{{ end }} '
            "runs at {{ $value | humanizePercentage }} of its capacity ({{ $labels.direction }}; the capacity is "
            '{{ if eq $labels.direction "receive" }}its link speed{{ else }}its tc shaping rate, else its link '
            "speed{{ end }}). Drops: "
            + _device_figure("host_nic:node_network_drops:rate", 'printf "%.1f/s"')
            + "; slowest heartbeat round trip of the host's OSDs over it: "
            + _device_figure("host_nic:ceph_perfwatch_heartbeat_ping:seconds")
            + '. {{ if eq $labels.network "unknown" }}Judged because the address of an OSD of the host could not '
            "be placed on a NIC of the host that the rules judge (an address the host does not hold, a carrier "
            "left out by the NIC selector, or an exporter or module too old to tell; "
            "osd:ceph_perfwatch_network_fallback:info names it): every NIC of such a host is judged, as if it "
            "carried that OSD's traffic.{{ else }}It holds back "
            + _osds_on_device("{{ .Labels.ceph_daemon }}", NIC_OSDS, "host_address:ceph_perfwatch_address_carrier:info")
            + ".{{ end }} The network is saturated."
            + _whose_load("host", "cluster=%q, hostname=%q", "$labels.cluster $labels.hostname", "the host's"),
            (("resource", "network"),),
        ),
    ]


def store_alerts(p: Profile) -> list[Alert]:
    return [
        Alert(
            "PerfwatchRocksDBCompactionBacklog",
            f"osd:ceph_perfwatch_compaction_queue:length >= {p.compaction_queue_length:g}",
            p.compaction_for,
            "warning",
            "RocksDB compactions are queueing up on {{ $labels.ceph_daemon }}",
            "{{ $labels.ceph_daemon }} has {{ $value }} ranges waiting in its RocksDB compaction queue: "
            "compaction does not keep up (often after large deletions or PG removal).",
        ),
        Alert(
            "PerfwatchRocksDBWriteStalls",
            f"osd:ceph_perfwatch_rocksdb_write_stall:ratio >= {p.write_stall_ratio:g}\n" + UNLESS_MEDIA_SATURATED,
            p.write_stall_for,
            "warning",
            "RocksDB is stalling writes on {{ $labels.ceph_daemon }}",
            "RocksDB on {{ $labels.ceph_daemon }} delayed writes for {{ $value | humanizePercentage }} of the "
            "time: its memtables or L0 fill faster than they are flushed and compacted.",
        ),
        Alert(
            "PerfwatchBlueFSSpillover",
            f"osd:ceph_perfwatch_bluefs_spillover:bytes > {p.spillover_bytes:g}",
            p.spillover_for,
            "warning",
            "RocksDB of {{ $labels.ceph_daemon }} spills over onto its slow device",
            "{{ $labels.ceph_daemon }} keeps {{ $value | humanize1024 }}B of RocksDB on its main (slow) device: "
            "its DB device is too small, and metadata reads and compactions hit the slow media.",
        ),
        Alert(
            "PerfwatchOnodeCacheMisses",
            f"osd:ceph_perfwatch_onode_miss:ratio >= {p.onode_miss_ratio:g}\n"
            "and on (cluster, ceph_daemon)\n"
            f"osd:ceph_perfwatch_onode_lookups:rate >= {p.onode_min_lookups_per_second:g}\n"
            "and on (cluster, ceph_daemon)\n"
            f"osd:ceph_perfwatch_onode_read_misses:ratio >= {p.onode_read_miss_ratio:g}\n"
            "and on (cluster, ceph_daemon)\n"
            f"osd:ceph_perfwatch_onode_read_misses:ratio <= {p.onode_max_misses_per_read:g}\n"
            "and on (cluster, ceph_daemon)\n"
            "osd:ceph_perfwatch_onode_growth:rate\n"
            f"< on (cluster, ceph_daemon) {p.onode_full_growth_fraction:g} * osd:ceph_perfwatch_onode_misses:rate",
            p.onode_for,
            "warning",
            "The BlueStore onode cache of {{ $labels.ceph_daemon }} is too small for what it reads",
            "{{ $value | humanizePercentage }} of the onode lookups of {{ $labels.ceph_daemon }} miss its cache "
            f"under load ({p.onode_min_lookups_per_second:g} or more lookups per second), its client reads miss "
            f"(beyond what its writes of new objects explain) and the cache no longer grows: it is full, each "
            "miss evicts another object's metadata, and reads go to RocksDB again and again.",
        ),
    ]


def bench_alerts(p: Profile) -> list[Alert]:
    return [
        Alert(
            "PerfwatchBucketIndexLatencyHigh",
            f"cluster:ceph_perfwatch_bucket_index_latency:seconds >= {p.bucket_index_latency_seconds:g}",
            p.bucket_index_for,
            "warning",
            "Bucket-index operations are slow ({{ $labels.metric }})",
            "The rgw probe's {{ $labels.metric }} took {{ $value | humanizeDuration }}: bucket-index (omap) "
            "work is slow, so every RGW PUT, DELETE and listing waits on it.",
        ),
        Alert(
            "PerfwatchBenchmarkRegression",
            "cluster:ceph_perfwatch_bench_regression:bool == 1\n" + UNLESS_MEDIA_SATURATED,
            p.regression_for,
            "warning",
            "perfwatch's {{ $labels.kind }} benchmark regressed ({{ $labels.metric }} {{ $labels.ceph_daemon }})",
            "The last {{ $labels.kind }} result for {{ $labels.metric }} {{ $labels.ceph_daemon }} is below the "
            "module's regression_fraction of its own or its peers' baseline (see `ceph perfwatch bench status`).",
        ),
        Alert(
            "PerfwatchIOPSPerGBBelowTarget",
            f"cluster:ceph_perfwatch_iops_per_stored_gb:ratio < {p.iops_per_gb_target:g}\n"
            f"and on (cluster)\ncluster:ceph_perfwatch_stored:bytes >= {p.iops_per_gb_min_stored_bytes:g}",
            p.iops_per_gb_for,
            "warning",
            f"Measured IOPS per stored GB is below the planned {p.iops_per_gb_target:g}",
            "The OSDs' measured 4 KiB write IOPS (osd benchmark, summed over every OSD) come to "
            '{{ $value | printf "%.2f" }} per raw stored GB, below the target of '
            f"{p.iops_per_gb_target:g}: IOPS-bound workloads will run out of media before space.",
        ),
    ]


def health_alerts(p: Profile) -> list[Alert]:
    return [
        Alert(
            "PerfwatchCollectionStale",
            f"cluster:ceph_perfwatch_collection_age:seconds > {p.collection_stale_seconds:g}",
            p.target_down_for,
            "warning",
            "perfwatch's collection of OSD counters is stale",
            "The perfwatch module last finished a collection {{ $value | humanizeDuration }} ago: its "
            "counters, and the verdicts built on them, are old.",
        ),
        Alert(
            "PerfwatchCollectionFailing",
            "osd:ceph_perfwatch_daemon_up:bool == 0\n"
            "unless on (cluster, ceph_daemon)\n"
            '(osd:ceph_perfwatch_fetch_errors:rate{reason="down"} > 0)',
            p.collection_failing_for,
            "warning",
            "perfwatch cannot read the counters of {{ $labels.ceph_daemon }}",
            "perfwatch has not read the counters of {{ $labels.ceph_daemon }} in its recent collections: the "
            "module (which leaves out OSDs the map says are down), or with daemon_counters_source=exporters the "
            "host exporter of its host; see ceph_perfwatch_fetch_errors_total's reason.",
        ),
        Alert(
            "PerfwatchMetricsAbsent",
            "cluster:ceph_perfwatch_module_targets:count\n"
            "unless on (cluster)\ncluster:ceph_perfwatch_module_serving:count",
            p.target_down_for,
            "critical",
            "No mgr serves perfwatch metrics",
            "Prometheus scrapes {{ $value }} perfwatch endpoint(s) of cluster {{ $labels.cluster }} and none "
            "serves data: the module is disabled, failed, or no mgr is active. Every perfwatch verdict is blind.",
        ),
        Alert(
            "PerfwatchExporterDown",
            "host:ceph_perfwatch_exporter_up:bool == 0",
            p.target_down_for,
            "warning",
            "{{ $labels.job }} on {{ $labels.hostname }} is down",
            "Prometheus cannot scrape {{ $labels.job }} at {{ $labels.instance }} (host {{ $labels.hostname }}): "
            "the saturation verdicts of that host's OSDs lack their inputs.",
        ),
        Alert(
            "PerfwatchExporterStuck",
            f"host:ceph_perfwatch_exporter_cache_age:seconds > {p.exporter_stale_seconds:g}",
            p.target_down_for,
            "warning",
            "The perfwatch host exporter on {{ $labels.hostname }} serves old data",
            "The host exporter at {{ $labels.instance }} (host {{ $labels.hostname }}) answers, but its last "
            "collection ended {{ $value | humanizeDuration }} ago: something it reads does not answer (its "
            "/healthz says what). The saturation verdicts of that host's OSDs use old inputs.",
        ),
        Alert(
            "PerfwatchDaemonCountersFromTwoSources",
            "cluster:ceph_perfwatch_osds_counted_twice:count > 0",
            p.target_down_for,
            "warning",
            "The counters of {{ $value }} OSD(s) of {{ $labels.cluster }} are collected twice",
            "{{ $value }} OSD(s) of cluster {{ $labels.cluster }} have their counters exported by more than one "
            "source: by the mgr module and their host's exporter (--daemon-counters), or by two exporter targets "
            "(two exporters on one host, or one scraped under two names). The rules count one, but each collects: "
            "set the module's daemon_counters_source to exporters (or run the exporters without "
            "--daemon-counters), and keep one exporter target per host.",
        ),
        Alert(
            "PerfwatchVerdictInputMissing",
            "osd:ceph_perfwatch_verdict_input_missing:info",
            p.inputs_missing_for,
            "warning",
            "A saturation verdict for {{ $labels.ceph_daemon }} cannot be made: {{ $labels.input }} missing",
            "{{ $labels.input }} series for {{ $labels.ceph_daemon }} (host {{ $labels.hostname }}) are missing, "
            "so its saturation verdict is silent. node_disk/node_cpu: is node_exporter scraped with the "
            "`cluster` and `hostname` target labels, and does it report the device? perfwatch_module: is the "
            "module enabled and collecting (with daemon_counters_source=exporters: does the OSD's host run the "
            "exporter with --daemon-counters)? perfwatch_host_exporter: does the host run the exporter? "
            "network_capacity: does node_exporter report the NIC and the exporter its capacity?",
        ),
    ]


def alerts(p: Profile) -> list[Alert]:
    return saturation_alerts(p) + store_alerts(p) + bench_alerts(p) + health_alerts(p)


def groups(p: Profile) -> list[dict[str, Any]]:
    made = [
        ("perfwatch-saturation", saturation_alerts(p)),
        ("perfwatch-store", store_alerts(p)),
        ("perfwatch-benchmarks", bench_alerts(p)),
        ("perfwatch-self", health_alerts(p)),
    ]
    return [
        {"name": f"{name}-alerts", "interval": p.evaluation_interval, "rules": [a.rule() for a in items]}
        for name, items in made
    ]
