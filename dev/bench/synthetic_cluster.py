"""A synthetic Ceph cluster of N OSDs as Prometheus sees it: every input series the production recording
rules read, with the labels the real sources carry, for dev/bench/rule_cost.py.

Four sources (each served as one scrape target by rule_cost.py), each series with the labels it has once
ingested (target labels included):
  perfwatch host exporter  job="perfwatch-host", instance "<host>:9285"; cluster, hostname (ceph_daemon)
  node_exporter            job="node", instance "<host>:9100"; cluster and hostname as target labels
  perfwatch mgr module     job="perfwatch", instance "<active mgr>:9284"; cluster from the target
  Ceph's prometheus module job="ceph", instance "<active mgr>:9283"; cluster from the target

Every series is a straight line, value(t) = base + slope * (t - t_ref); a few OSDs, devices, hosts and NICs
are made saturated or unhealthy (a few decoys meet part of a verdict's conditions), and `checks` holds what
the rules must then find, as PromQL counts. What each source holds: docs/decisions/rule-cost-measurement.md.
"""

from __future__ import annotations

import math
import random
import statistics
import time
from collections.abc import Callable, Iterator

from alerts.profiles import PRODUCTION, Profile
from perfwatch.load.queries import CLIENTS
from perfwatch.load.queries import POOLS as POOLS_QUERY
from perfwatch.options.declared import defaults

# load_attribution on, with its defaults: per-OSD load series of the busiest OSDs up to the cap
LOAD_DEFAULTS = defaults()
LOAD_TOP_CLIENTS, LOAD_TOP_PER_OSD = LOAD_DEFAULTS["load_top_clients"], LOAD_DEFAULTS["load_top_per_osd"]
LOAD_SERIES_PER_OSD = 4 * (1 + 2 * LOAD_TOP_PER_OSD)  # (ops, bytes) x (read, write): its totals, pools, clients
LOAD_OSDS_MAX = LOAD_DEFAULTS["load_osd_series_max"] // LOAD_SERIES_PER_OSD
LOAD_OPS = ("read", "write")

Line = tuple[str, float, float]  # series text (name{labels}), value at t_ref, increase per second

CPUS = 32  # per host, as node_exporter reports them
CPU_MODES = ("user", "system", "nice", "irq", "softirq", "steal", "iowait", "idle")
NICS = ("ens1f0", "ens1f1")  # public and cluster network, 25 GbE
NIC_CAPACITY = 25e9 / 8
OSD_CPU_LIMIT = 4.0  # cores, on the hosts whose OSDs run in containers with a CPU limit
POOLS = 10
MGRS = ("mgr-a", "mgr-b")  # the first is the active one
RGWS = 4  # RGW daemons, on the first hosts
OBJECTER_OPS = ("call", "omap_rd", "omap_wr", "omap_del")
COMPACTION_TRIGGERS = ("background", "range", "queue_merge")
PROBE_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
PROBE_RUNS = 1 / 300  # light probe results per OSD and metric per second
RGW_METRICS = ("omap_set_latency", "omap_get_latency", "omap_list_latency", "omap_remove_latency", "index_list_latency")


def disk_name(index: int) -> str:
    """sda, sdb, ..., sdz, sdaa, ...: the index-th SCSI disk name."""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("a") + rest) + letters
    return "sd" + letters


def series(name: str, labels: dict[str, str]) -> str:
    return name + "{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}"


class SyntheticCluster:
    def __init__(
        self,
        osds: int,
        osds_per_host: int,
        seed: int = 1,
        cluster: str = "",
        profile: Profile = PRODUCTION,
        counters_from: str = "module",
        baselines: bool = True,
    ) -> None:
        """counters_from: who exports the OSDs' daemon counters (the module's daemon_counters_source):
        "module", or "exporters" (each host's exporter, with --daemon-counters); baselines: the module's
        bench_export_baselines."""
        if counters_from not in ("module", "exporters"):
            raise ValueError(f"counters_from {counters_from!r}: module or exporters")
        self.counters_from = counters_from
        self.baselines = baselines
        self.osds = osds
        self.hosts = [f"ceph-{h:04d}" for h in range(-(-osds // osds_per_host))]
        self.cluster = cluster or "5e1f0c2a-6d3b-4f8e-9a71-0c0ffee00001"  # the exporter's label is the fsid
        self.t_ref = float(int(time.time()) - 86400)
        self.by_source: dict[str, list[Line]] = {}
        self.checks: list[tuple[str, str, int]] = []  # (what, PromQL count, expected)
        self._rng = random.Random(seed)
        # the light probes' usual latency per OSD, by (kind, metric): the module's histograms are per device class
        self._probe_latencies: dict[tuple[str, str], list[float]] = {}
        self._build(osds_per_host, profile)

    # ----- building ------------------------------------------------------------------------------------
    @property
    def sources(self) -> dict[str, int]:
        return {source: len(lines) for source, lines in self.by_source.items()}

    @property
    def series_count(self) -> int:
        return sum(self.sources.values())

    def _add(self, source: str, name: str, labels: dict[str, str], base: float, slope: float = 0.0) -> None:
        self.by_source.setdefault(source, []).append((series(name, labels), base, slope))

    def _counter(self, source: str, name: str, labels: dict[str, str], slope: float) -> None:
        self._add(source, name, labels, slope * self._rng.uniform(0.5, 1.5) * 3600, slope)

    def _build(self, per_host: int, p: Profile) -> None:
        rng, hosts = self._rng, self.hosts
        host_osds = {h: list(range(i * per_host, min(self.osds, (i + 1) * per_host))) for i, h in enumerate(hosts)}
        osd_host = {osd: h for h, ids in host_osds.items() for osd in ids}
        limited = {h for i, h in enumerate(hosts) if i % 2 == 0}  # half the hosts run OSDs under a CPU limit
        has_db = {osd for osd in osd_host if osd % 4 == 0}  # every 4th OSD: its RocksDB on the host's NVMe
        node_down = hosts[-1] if len(hosts) > 1 else ""  # node_exporter down on one host: inputs missing
        healthy_hosts = [h for h in hosts if h != node_down]
        host_pool = rng.sample(healthy_hosts, len(healthy_hosts))

        def take_hosts(k: int, keep: Callable[[str], bool]) -> set[str]:
            picked = [h for h in host_pool if keep(h)][:k]
            for h in picked:
                host_pool.remove(h)
            return set(picked)

        nh = len(hosts)
        nvme_sat = take_hosts(max(1, nh // 100), lambda h: True)  # the shared NVMe DB device saturated
        cpu_sat_hosts = take_hosts(max(1, nh // 50), lambda h: h not in limited)  # busy, threads waiting
        cpu_decoy_hosts = take_hosts(max(1, nh // 50), lambda h: h not in limited)  # busy, nobody waiting
        net_sat = take_hosts(max(1, nh // 60), lambda h: True)  # the cluster NIC full (transmit)
        pool = [o for h in healthy_hosts if h not in nvme_sat for o in host_osds[h]]
        rng.shuffle(pool)

        def take(k: int, keep: Callable[[int], bool] = lambda o: True) -> set[int]:
            picked = [o for o in pool if keep(o)][:k]
            for o in picked:
                pool.remove(o)
            return set(picked)

        n = self.osds
        media_sat, busy_only, fast_commits = take(max(1, n // 200)), take(max(1, n // 200)), take(max(1, n // 200))
        slow_device = take(max(1, n // 200))  # busy, queued, slow per I/O, though its commits stay fast
        cg_sat = take(max(1, n // 250), lambda o: osd_host[o] in limited)
        cg_decoy = take(max(1, n // 250), lambda o: osd_host[o] in limited)  # at the limit, hardly throttled
        few = max(1, n // 300)
        compaction, stall, spill, onode, onode_idle = take(few), take(few), take(few), take(few), take(few)
        regressed, failing, down = take(max(1, n // 500)), take(max(1, n // 1000)), take(max(1, n // 1000))
        db_slow = {o for h in nvme_sat for o in host_osds[h] if o in has_db}

        for h in hosts:
            cpu = "saturated" if h in cpu_sat_hosts else "busy" if h in cpu_decoy_hosts else ""
            self._host(h, host_osds[h], has_db, limited=h in limited, node_down=h == node_down,
                       nvme_sat=h in nvme_sat, cpu=cpu, net_sat=h in net_sat)  # fmt: skip
        for osd in range(n):
            h = osd_host[osd]
            k = osd - host_osds[h][0]  # its index on the host: its disk's name
            cgroup = 2 if osd in cg_sat else 1 if osd in cg_decoy else 0
            self._osd_exporter(osd, h, k, osd in has_db, h in limited, cgroup)
            if h != node_down:
                media = [media_sat, busy_only, fast_commits, slow_device]
                self._osd_node(h, k, next((i + 1 for i, group in enumerate(media) if osd in group), 0))
            commit = 0.08 if osd in media_sat or osd in db_slow else 0.0
            self._osd_ceph(osd, commit)
            self._osd_module(
                osd,
                h,
                osd in has_db,
                commit,
                {
                    "compaction": osd in compaction,
                    "stall": osd in stall,
                    "spill": osd in spill,
                    "onode": osd in onode,
                    "onode_idle": osd in onode_idle,
                    "regressed": osd in regressed,
                },
                "timeout" if osd in failing else "down" if osd in down else "",
            )
        for h in self.hosts[:RGWS]:
            self._rgw(h)
        self._cluster_level()
        # Whose load: the busiest OSDs keep their per-OSD load series (the saturated ones are the busiest)
        gone = down | failing
        saturated = (
            media_sat | slow_device | db_slow | cg_sat
            | {o for h in cpu_sat_hosts for o in host_osds[h]}
            | {o for h in net_sat for o in host_osds[h] if o not in down}
        )  # fmt: skip
        busiest = sorted(saturated - gone) + [o for o in range(n) if o not in saturated and o not in gone]
        loaded = busiest[:LOAD_OSDS_MAX]
        self._load(loaded, n - len(gone) - len(loaded))

        on_hosts = lambda hs: sum(len(host_osds[h]) for h in hs)  # noqa: E731
        verdict = 'count(osd:ceph_perfwatch_saturation:verdict{{resource="{}"}} == 1)'
        missing = 'count(osd:ceph_perfwatch_verdict_input_missing:info{{input="{}"}})'
        down_osds = host_osds[node_down] if node_down else []
        self.checks = [
            ("media verdict", verdict.format("media"), len(media_sat) + len(slow_device) + len(db_slow)),
            ("cpu verdict", verdict.format("cpu"), len(cg_sat) + on_hosts(cpu_sat_hosts)),
            # an OSD down in the OSD map has no address (nothing it would send): no network verdict
            (
                "network verdict",
                verdict.format("network"),
                on_hosts(net_sat) - sum(osd_host[o] in net_sat for o in down),
            ),
            (
                "compaction backlog",
                f"count(osd:ceph_perfwatch_compaction_queue:length >= {p.compaction_queue_length})",
                len(compaction),
            ),
            (
                "write stalls",
                f"count(osd:ceph_perfwatch_rocksdb_write_stall:ratio >= {p.write_stall_ratio})",
                len(stall),
            ),
            ("spillover", f"count(osd:ceph_perfwatch_bluefs_spillover:bytes > {p.spillover_bytes})", len(spill)),
            (
                "onode misses",
                f"count(osd:ceph_perfwatch_onode_miss:ratio >= {p.onode_miss_ratio} and on (cluster, ceph_daemon) "
                f"osd:ceph_perfwatch_onode_lookups:rate >= {p.onode_min_lookups_per_second})",
                len(onode),
            ),
            ("regressions", "count(cluster:ceph_perfwatch_bench_regression:bool == 1)", len(regressed)),
            (
                "load: OSDs' busiest pools",
                "count(osd:ceph_perfwatch_load_pool_ops:ratio)",
                LOAD_TOP_PER_OSD * len(loaded),
            ),
            (
                "load: saturated OSDs' busiest clients",
                "count(osd:ceph_perfwatch_saturated_load_client_ops:ratio)",
                LOAD_TOP_PER_OSD * len(set(loaded) & saturated),
            ),
            (
                "bucket index slow",
                f"count(cluster:ceph_perfwatch_bucket_index_latency:seconds >= {p.bucket_index_latency_seconds})",
                1,
            ),
            (
                "IOPS/GB below target",
                f"count(cluster:ceph_perfwatch_iops_per_stored_gb:ratio < {p.iops_per_gb_target})",
                1,
            ),
            ("exporters down", "count(host:ceph_perfwatch_exporter_up:bool == 0)", 1 if node_down else 0),
            ("input missing node_disk", missing.format("node_disk"), sum(1 + (o in has_db) for o in down_osds)),
            ("input missing node_cpu", missing.format("node_cpu"), len(down_osds)),
            ("input missing network_capacity", missing.format("network_capacity"), len(down_osds)),
            ("input missing perfwatch_module", missing.format("perfwatch_module"), len(failing) + len(down)),
            (
                "collection failing",
                "count(osd:ceph_perfwatch_daemon_up:bool == 0 unless on (cluster, ceph_daemon) "
                '(osd:ceph_perfwatch_fetch_errors:rate{reason="down"} > 0))',
                len(failing),
            ),
        ]

    def addresses(self, h: str) -> tuple[str, str]:
        """Host h's public and cluster address (on NICS[0] and NICS[1])."""
        i = int(h.rsplit("-", 1)[1])
        return f"10.0.{i // 250}.{i % 250 + 1}", f"10.1.{i // 250}.{i % 250 + 1}"

    def _host(
        self, h: str, osds: list[int], has_db: set[int], *, limited: bool, node_down: bool, nvme_sat: bool, cpu: str,
        net_sat: bool,
    ) -> None:  # fmt: skip
        """The host's own series: node_exporter's CPUs, load, NICs, OS and NVMe disks; the exporter's link
        capacities; both targets' `up`. cpu: "saturated" (busy, threads waiting), "busy" (nobody waits) or ""."""
        rng, c = self._rng, self.cluster
        exp = {"job": "perfwatch-host", "instance": f"{h}:9285", "cluster": c, "hostname": h}
        node = {"job": "node", "instance": f"{h}:9100", "cluster": c, "hostname": h}
        self._add("perfwatch-host", "up", exp, 1.0)
        self._add("perfwatch-host", "ceph_perfwatch_exporter_cache_age_seconds", exp, rng.uniform(1.0, 15.0))
        self._add("node", "up", node, 0.0 if node_down else 1.0)
        for nic, address in zip(NICS, self.addresses(h), strict=True):  # public, cluster; then loopback
            carried = {"address": address, "device": nic, "carrier": nic}
            self._add("perfwatch-host", "ceph_perfwatch_network_address_info", {**exp, **carried}, 1.0)
        self._add(
            "perfwatch-host",
            "ceph_perfwatch_network_address_info",
            {**exp, "address": "127.0.0.1", "device": "lo", "carrier": "lo"},
            1.0,
        )
        kinds = [(disk_name(k + 1), "hdd", "1", "sas") for k in range(len(osds))]  # each OSD's block disk
        if any(o in has_db for o in osds):
            kinds.append(("nvme0n1", "nvme", "0", "nvme"))  # the shared DB device
        for dev, kind, rotational, transport in kinds:
            labels = {**exp, "device": dev, "kind": kind, "rotational": rotational, "transport": transport}
            self._add("perfwatch-host", "ceph_perfwatch_device_info", labels, 1.0)
        for nic in NICS:
            self._add(
                "perfwatch-host",
                "ceph_perfwatch_network_link_capacity_bytes",
                {**exp, "device": nic, "source": "speed"},
                NIC_CAPACITY,
            )
        if node_down:
            return
        busy = 0.95 if cpu else (rng.uniform(0.5, 0.8) if limited else rng.uniform(0.2, 0.6))
        iowait = (1 - busy) * rng.uniform(0.01, 0.1)
        split = {"user": 0.6, "system": 0.3, "nice": 0.01, "irq": 0.02, "softirq": 0.06, "steal": 0.01}
        for cpu_id in range(CPUS):
            jitter = rng.uniform(0.97, 1.03)
            b = min(busy * jitter, 0.999)
            for mode in CPU_MODES:
                slope = {"iowait": iowait, "idle": 1 - b - iowait}.get(mode, b * split.get(mode, 0.0))
                self._counter("node", "node_cpu_seconds_total", {**node, "cpu": str(cpu_id), "mode": mode}, slope)
        load = 2.0 if cpu == "saturated" else 0.8 if cpu == "busy" else rng.uniform(0.2, 1.0)
        self._add("node", "node_procs_running", node, load * CPUS)
        for nic in (*NICS, "lo"):
            for direction in ("transmit", "receive"):
                share = 0.95 if net_sat and nic == "ens1f1" and direction == "transmit" else rng.uniform(0.05, 0.5)
                rate = share * NIC_CAPACITY if nic != "lo" else rng.uniform(1e6, 1e8)
                labels = {**node, "device": nic}
                self._counter("node", f"node_network_{direction}_bytes_total", labels, rate)
                self._counter("node", f"node_network_{direction}_drop_total", labels, rng.choice((0.0, 0.0, 0.01)))
        disks = {"sda": (0.02, 0.03, 20.0)}
        if any(o in has_db for o in osds):
            healthy = (rng.uniform(0.1, 0.4), rng.uniform(0.2, 1.0), rng.uniform(2000, 20000))
            disks["nvme0n1"] = (0.97, 12.0, 3000.0) if nvme_sat else healthy
        for dev, (busy_s, queue, iops) in disks.items():
            self._disk({**node, "device": dev}, busy_s, queue, iops)

    def _osd_exporter(self, osd: int, h: str, k: int, db: bool, limited: bool, cgroup: int) -> None:
        """The host exporter's rows for one OSD: its devices (a block disk; a partition of the shared NVMe for
        every 4th OSD's DB), its CPU seconds, and its cgroup's limit and CFS periods where it has a limit."""
        rng = self._rng
        labels = {
            "job": "perfwatch-host",
            "instance": f"{h}:9285",
            "cluster": self.cluster,
            "hostname": h,
            "ceph_daemon": f"osd.{osd}",
        }
        info = "ceph_perfwatch_osd_device_info"
        self._add(
            "perfwatch-host",
            info,
            {**labels, "role": "block", "device": disk_name(k + 1), "partition": "", "via": "direct"},
            1.0,
        )
        if db:
            self._add(
                "perfwatch-host",
                info,
                {**labels, "role": "db", "device": "nvme0n1", "partition": f"nvme0n1p{k // 4 + 1}", "via": "direct"},
                1.0,
            )
        cores = {2: 0.95, 1: 0.93}.get(cgroup, 0.0) * OSD_CPU_LIMIT or rng.uniform(0.3, 1.8)
        for mode, share in (("user", 0.7), ("system", 0.3)):
            self._counter(
                "perfwatch-host", "ceph_perfwatch_daemon_cpu_seconds_total", {**labels, "mode": mode}, cores * share
            )
        if limited:
            self._add("perfwatch-host", "ceph_perfwatch_daemon_cgroup_cpu_limit_cores", labels, OSD_CPU_LIMIT)
        throttled = {2: 0.35, 1: 0.05}.get(cgroup, rng.uniform(0.0, 0.05)) if limited else 0.0
        periods = 10.0 if limited else 0.0  # 100 ms CFS periods; none counted without a quota
        self._counter("perfwatch-host", "ceph_perfwatch_daemon_cgroup_cpu_periods_total", labels, periods)
        self._counter(
            "perfwatch-host", "ceph_perfwatch_daemon_cgroup_cpu_throttled_periods_total", labels, periods * throttled
        )

    def _osd_node(self, h: str, k: int, media: int) -> None:
        """node_exporter's counters of the OSD's block disk (an HDD). media: 0 healthy; 1 saturated (slow per
        I/O, and the OSD's commits slow); 2 busy but hardly queued, 3 busy and queued but fast per I/O (both as
        multi-queue flash); 4 busy, queued and slow per I/O (its commits fast: the await condition)."""
        rng = self._rng
        healthy = (rng.uniform(0.05, 0.6), rng.uniform(0.1, 2.0), rng.uniform(60, 200))  # await under 35 ms
        profiles = {1: (0.98, 9.0, 150.0), 2: (0.99, 1.5, 3000.0), 3: (0.95, 6.0, 3000.0), 4: (0.97, 8.0, 100.0)}
        busy, queue, iops = profiles.get(media, healthy)
        labels = {
            "job": "node",
            "instance": f"{h}:9100",
            "cluster": self.cluster,
            "hostname": h,
            "device": disk_name(k + 1),
        }
        self._disk(labels, busy, queue, iops)

    def _disk(self, labels: dict[str, str], busy: float, queue: float, iops: float) -> None:
        """node_exporter's counters of one disk: busy and weighted io time; reads, writes and their time
        (each I/O waits queue / iops seconds: the await)."""
        reads = iops * self._rng.uniform(0.2, 0.8)
        self._counter("node", "node_disk_io_time_seconds_total", labels, busy)
        self._counter("node", "node_disk_io_time_weighted_seconds_total", labels, queue)
        self._counter("node", "node_disk_reads_completed_total", labels, reads)
        self._counter("node", "node_disk_writes_completed_total", labels, iops - reads)
        self._counter("node", "node_disk_read_time_seconds_total", labels, queue * reads / iops)
        self._counter("node", "node_disk_write_time_seconds_total", labels, queue * (iops - reads) / iops)

    def _osd_module(self, osd: int, h: str, db: bool, commit: float, flags: dict[str, bool], failure: str) -> None:
        """The module's series for one OSD on host h. commit: its mean RocksDB sync submit latency (0: a healthy
        one). failure: "timeout" or "down" (in the OSD map: the module gives no address for it) when its
        counters cannot be read (then only its benchmark results remain)."""
        rng = self._rng
        module = {
            "job": "perfwatch",
            "instance": f"{MGRS[0]}:9284",
            "cluster": self.cluster,
            "ceph_daemon": f"osd.{osd}",
        }
        if failure != "down":
            for network, address in zip(("public", "cluster"), self.addresses(h), strict=True):
                where = {"network": network, "address": address, "iface": ""}
                self._add("perfwatch", "ceph_perfwatch_osd_network_info", {**module, **where}, 1.0)
        # The daemon counters, from the module or from the OSD's host exporter (--daemon-counters), which
        # sees only its host's running OSDs: one down in the OSD map has no process, so no series there.
        if self.counters_from == "exporters":
            src = "perfwatch-host"
            labels = {"job": src, "instance": f"{h}:9285", "ceph_daemon": f"osd.{osd}", "cluster": self.cluster,
                      "hostname": h}  # fmt: skip
            if failure != "down":
                self._add(src, "ceph_perfwatch_daemon_up", labels, 0.0 if failure else 1.0)
        else:
            src, labels = "perfwatch", module
            self._add(src, "ceph_perfwatch_daemon_up", labels, 0.0 if failure else 1.0)
        if failure:
            if failure != "down" or src == "perfwatch":
                self._counter(src, "ceph_perfwatch_fetch_errors_total", {**labels, "reason": failure}, 1 / 30)
        else:
            submits = rng.uniform(100, 400)
            mean = commit or rng.uniform(0.001, 0.02)
            self._counter(src, "ceph_perfwatch_rocksdb_submit_sync_latency_seconds_sum", labels, submits * mean)
            self._counter(src, "ceph_perfwatch_rocksdb_submit_sync_latency_seconds_count", labels, submits)
            lookups = 800.0 if flags["onode"] else 20.0 if flags["onode_idle"] else rng.uniform(100, 2000)
            miss = 0.85 if flags["onode"] else 0.9 if flags["onode_idle"] else rng.uniform(0.02, 0.3)
            self._counter(src, "ceph_perfwatch_bluestore_onode_hits_total", labels, lookups * (1 - miss))
            self._counter(src, "ceph_perfwatch_bluestore_onode_misses_total", labels, lookups * miss)
            # a full cache (it holds as many onodes as it did): the onode alert's OSD misses on client reads
            self._add(src, "ceph_perfwatch_bluestore_onodes", labels, rng.uniform(2e5, 1e6))
            reads = 300.0 if flags["onode"] else rng.uniform(20, 200)
            ops = (("read", reads), ("write", rng.uniform(10, 30)), ("replica_write", rng.uniform(10, 30)))
            for op, rate in ops:
                self._counter(src, "ceph_perfwatch_osd_ops_total", {**labels, "op": op}, rate)
            queue = 8.0 if flags["compaction"] else rng.choice((0.0, 0.0, 0.0, 1.0))
            self._add(src, "ceph_perfwatch_rocksdb_compaction_queue_length", labels, queue)
            stall = 0.05 if flags["stall"] else rng.choice((0.0, 0.0, 0.0001))
            self._counter(src, "ceph_perfwatch_rocksdb_write_delay_seconds_total", labels, stall)
            self._add(src, "ceph_perfwatch_bluefs_slow_used_bytes", labels, 2e9 if flags["spill"] else 0.0)
            total = 300e9 if db else 8e12  # without a DB device, BlueFS's DB is the main device
            used = total * (rng.uniform(0.3, 0.7) if db else rng.uniform(0.005, 0.02))
            self._add(src, "ceph_perfwatch_bluefs_db_total_bytes", labels, total)
            self._add(src, "ceph_perfwatch_bluefs_db_used_bytes", labels, used)
            hit = rng.uniform(1e6, 5e7)
            self._counter(src, "ceph_perfwatch_bluestore_buffer_hit_bytes_total", labels, hit)
            self._counter(src, "ceph_perfwatch_bluestore_buffer_miss_bytes_total", labels, hit * rng.uniform(0.05, 1))
            for trigger in COMPACTION_TRIGGERS:
                rate = rng.uniform(0.001, 0.01) if trigger == "background" else rng.choice((0.0, 0.0, 0.001))
                self._counter(src, "ceph_perfwatch_rocksdb_compactions_total", {**labels, "trigger": trigger}, rate)
            self._counter(src, "ceph_perfwatch_rocksdb_compactions_completed_total", labels, rng.uniform(0.01, 0.1))
        self._osd_results(osd, module, flags["regressed"])

    def _osd_results(self, osd: int, labels: dict[str, str], regressed_write: bool) -> None:
        """The module's benchmark results of one OSD, and their baselines unless they are off."""
        rng, src = self._rng, "perfwatch"
        lat, base = "ceph_perfwatch_bench_latency_seconds", "ceph_perfwatch_bench_baseline_latency_seconds"
        for metric, low, high in (("write_latency", 0.004, 0.02), ("read_latency", 0.002, 0.01)):
            usual = rng.uniform(low, high)
            regressed = regressed_write and metric == "write_latency"
            now = usual * (3 if regressed else rng.uniform(0.8, 1.2))
            rados = {**labels, "kind": "rados", "metric": metric}
            self._add(src, lat, rados, now)
            if self.baselines:
                self._add(src, base, rados, usual)
            if regressed:  # the module exports a regression flag only while it is one
                self._add(src, "ceph_perfwatch_bench_regression", rados, 1.0)
            self._probe_latencies.setdefault(("rados", metric), []).append(usual)
        for metric in ("ping_back", "ping_front"):
            net = {**labels, "kind": "net", "metric": metric}
            ping = rng.uniform(0.0003, 0.002)
            self._add(src, lat, net, ping)
            if self.baselines:
                self._add(src, base, net, ping * rng.uniform(0.9, 1.1))
            self._probe_latencies.setdefault(("net", metric), []).append(ping)
        for metric, name, low, high in (
            ("write_iops_4k", "iops", 200, 400),
            ("write_throughput_4m", "throughput_bytes_per_second", 100e6, 200e6),
        ):
            osd_bench, usual = {**labels, "kind": "osd", "metric": metric}, rng.uniform(low, high)
            self._add(src, f"ceph_perfwatch_bench_{name}", osd_bench, usual * rng.uniform(0.9, 1.1))
            if self.baselines:
                self._add(src, f"ceph_perfwatch_bench_baseline_{name}", osd_bench, usual)

    def _histogram(self, labels: dict[str, str], latency: float, osds: int = 1) -> None:
        """The module's latency histogram of one light probe metric (of `osds` OSDs of one device class, or
        of a probe that measures no OSD): PROBE_RUNS results a second for each, spread evenly in log scale
        from a quarter to four times `latency`."""
        name, runs = "ceph_perfwatch_bench_probe_latency_seconds", PROBE_RUNS * osds
        low, high, before = math.log(latency / 4), math.log(latency * 4), 86400 * self._rng.uniform(1, 5)
        for bound in PROBE_BUCKETS:
            share = min(1.0, max(0.0, (math.log(bound) - low) / (high - low)))
            self._add("perfwatch", f"{name}_bucket", {**labels, "le": repr(bound)}, share * runs * before, share * runs)
        self._add("perfwatch", f"{name}_bucket", {**labels, "le": "+Inf"}, runs * before, runs)
        self._add("perfwatch", f"{name}_sum", labels, latency * runs * before, latency * runs)
        self._add("perfwatch", f"{name}_count", labels, runs * before, runs)

    def _osd_ceph(self, osd: int, commit: float) -> None:
        """Ceph's own prometheus module's OSD op counters for one OSD (its write latency follows its commits)."""
        rng = self._rng
        labels = {"job": "ceph", "instance": f"{MGRS[0]}:9283", "cluster": self.cluster, "ceph_daemon": f"osd.{osd}"}
        for op, ops, latency in (
            ("r", rng.uniform(20, 200), rng.uniform(0.002, 0.02)),
            ("w", rng.uniform(50, 300), 2 * commit or rng.uniform(0.005, 0.03)),
        ):
            self._counter("ceph", f"ceph_osd_op_{op}", labels, ops)
            moved = "ceph_osd_op_r_out_bytes" if op == "r" else "ceph_osd_op_w_in_bytes"
            self._counter("ceph", moved, labels, ops * rng.uniform(4096, 65536))
            self._counter("ceph", f"ceph_osd_op_{op}_latency_sum", labels, ops * latency)
            self._counter("ceph", f"ceph_osd_op_{op}_latency_count", labels, ops)

    def _rgw(self, h: str) -> None:
        """An RGW on host h: its requests (the module) and its bucket-index RADOS ops (the host exporter)."""
        rng, name = self._rng, f"rgw.{h}"
        mod = {"job": "perfwatch", "instance": f"{MGRS[0]}:9284", "cluster": self.cluster, "ceph_daemon": name}
        requests = rng.uniform(100, 1000)
        self._counter("perfwatch", "ceph_perfwatch_rgw_requests_total", mod, requests)
        self._counter("perfwatch", "ceph_perfwatch_rgw_failed_requests_total", mod, requests * rng.uniform(0, 0.01))
        exp = {"job": "perfwatch-host", "instance": f"{h}:9285", "cluster": self.cluster, "hostname": h,
               "ceph_daemon": name}  # fmt: skip
        for op in OBJECTER_OPS:
            self._counter("perfwatch-host", "ceph_perfwatch_rgw_objecter_ops_total", {**exp, "op": op},
                          requests * rng.uniform(0.5, 3))  # fmt: skip

    def _cluster_level(self) -> None:
        rng, c = self._rng, self.cluster
        mod = {"job": "perfwatch", "instance": f"{MGRS[0]}:9284", "cluster": c}
        for mgr in MGRS:  # both mgrs are scraped; the standby answers empty
            self._add("perfwatch", "up", {**mod, "instance": f"{mgr}:9284"}, 1.0)
        self._add("perfwatch", "ceph_perfwatch_last_collection_timestamp_seconds", mod, self.t_ref - 10, 1.0)
        for metric in RGW_METRICS:
            rgw = {**mod, "kind": "rgw", "metric": metric}
            latency = 0.15 if metric == "omap_get_latency" else rng.uniform(0.01, 0.04)
            self._add("perfwatch", "ceph_perfwatch_bench_latency_seconds", rgw, latency)
            if self.baselines:
                self._add("perfwatch", "ceph_perfwatch_bench_baseline_latency_seconds", rgw, latency)
            self._histogram(rgw, 0.03)
        for (kind, metric), latencies in sorted(self._probe_latencies.items()):  # every synthetic OSD is an hdd
            probe = {**mod, "kind": kind, "metric": metric, "device_class": "hdd"}
            self._histogram(probe, statistics.median(latencies), len(latencies))
        ceph = {"job": "ceph", "instance": f"{MGRS[0]}:9283", "cluster": c}
        self._add("ceph", "up", ceph, 1.0)
        weights = [rng.uniform(0.1, 1.0) for _ in range(POOLS)]
        stored = self.osds * 0.8e12  # 4 TB disks 60 % full, 3 replicas
        for pool, weight in enumerate(weights, start=1):
            labels = {**ceph, "pool_id": str(pool)}
            self._add("ceph", "ceph_pool_stored", labels, stored * weight / sum(weights))
            self._add("ceph", "ceph_pool_stored_raw", labels, 3 * stored * weight / sum(weights))

    def _load(self, loaded: list[int], left_out: int) -> None:
        """The module's load series (load_attribution on, its defaults): per pool and per busiest client
        cluster-wide, and for each OSD of `loaded` its totals and its busiest pools and clients; `left_out`
        OSDs with client I/O got none (load_osd_series_max reached)."""
        rng = self._rng
        mod = {"job": "perfwatch", "instance": f"{MGRS[0]}:9284", "cluster": self.cluster}
        pools = [f"pool-{p}" for p in range(1, POOLS + 1)]
        clients = [f"client.{4100 + c}" for c in range(LOAD_TOP_CLIENTS)]
        for key, name in [("pool", p) for p in pools] + [("client", c) for c in clients]:
            for op in LOAD_OPS:
                labels = {**mod, key: name, "op": op}
                self._add("perfwatch", f"ceph_perfwatch_load_{key}_ops", labels, rng.uniform(100, 5000))
                self._add("perfwatch", f"ceph_perfwatch_load_{key}_bytes", labels, rng.uniform(1e6, 5e8))
                self._add("perfwatch", f"ceph_perfwatch_load_{key}_latency_seconds", labels, rng.uniform(0.001, 0.05))
        for osd in loaded:
            daemon = {**mod, "ceph_daemon": f"osd.{osd}"}
            parts: list[tuple[str, dict[str, str]]] = [("osd", {})]
            parts += [("osd_pool", {"pool": p}) for p in rng.sample(pools, LOAD_TOP_PER_OSD)]
            parts += [("osd_client", {"client": c}) for c in rng.sample(clients, LOAD_TOP_PER_OSD)]
            for family, extra in parts:
                for op in LOAD_OPS:
                    labels = {**daemon, **extra, "op": op}
                    self._add("perfwatch", f"ceph_perfwatch_load_{family}_ops", labels, rng.uniform(10, 500))
                    self._add("perfwatch", f"ceph_perfwatch_load_{family}_bytes", labels, rng.uniform(1e5, 5e7))
        self._add("perfwatch", "ceph_perfwatch_load_window_seconds", mod, 30.0)
        self._add("perfwatch", "ceph_perfwatch_load_osds_without_series", mod, float(left_out))
        self._add("perfwatch", "ceph_perfwatch_load_clients_sampled_osds", mod, 0.0)
        for query in (POOLS_QUERY, CLIENTS):
            self._add("perfwatch", "ceph_perfwatch_load_queries", {**mod, "query": query}, 1.0)

    # ----- output --------------------------------------------------------------------------------------
    def exposition(self, source: str) -> Callable[[float], Iterator[bytes]]:
        """A renderer of one source's text exposition at time t: its gauges rendered once, its counters at
        each call, with t as their timestamp. Without it Prometheus stamps them with the scrape's start, and
        the render of a large page starts up to seconds later, by a different delay at each scrape, so rates
        stray by a few per cent; at 10,000 OSDs (scrapes of 8 s, groups evaluating for seconds while scrapes
        append) the onode check found 39 OSDs for 33, likely miss ratios just under 0.3 read over the line."""
        lines = self.by_source[source]
        static = "".join(f"{text} {base:.12g}\n" for text, base, slope in lines if not slope).encode()
        moving = [(text, base, slope) for text, base, slope in lines if slope]

        def render(t: float) -> Iterator[bytes]:
            yield static
            ms = int(t * 1000)
            d = ms / 1000 - self.t_ref
            for i in range(0, len(moving), 50_000):
                yield "".join(
                    f"{text} {base + slope * d:.12g} {ms}\n" for text, base, slope in moving[i : i + 50_000]
                ).encode()

        return render

    def metric_names(self) -> set[str]:
        return {text.split("{", 1)[0] for lines in self.by_source.values() for text, _, _ in lines}
