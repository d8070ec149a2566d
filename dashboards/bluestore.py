"""BlueStore and RocksDB: onode and buffer cache misses, cache targets against committed bytes, mempools,
RocksDB compactions, their queue and write stalls, BlueFS DB/WAL/slow use and spill-over."""

from __future__ import annotations

from grafana_foundation_sdk.models import dashboard as dm

from .common import (
    CLUSTER,
    COUNTERS,
    OSDS,
    Row,
    Steps,
    board,
    graph,
    limit,
    osd_variable,
    over,
    q,
    runbook,
)

NAME = "bluestore"
WHERE = (CLUSTER, OSDS)
PER_OSD = "{{ceph_daemon}}"
# Panels of counters only some Ceph releases have (dashboards/queries.py RELEASE_DEPENDENT_PANELS)
COMPACTIONS_FINISHED = "Compactions finished and running (Reef 18.2 and later)"
LAST_COMPACTION = "Last compaction duration (Reef 18.2 and later)"


def caches() -> Row:
    return Row(
        "BlueStore caches",
        [
            graph(
                "Onode cache misses",
                "Share of onode (object metadata) lookups that missed the cache and went to RocksDB; hit ratio = 1 - "
                f"this. From the dashed line ({limit('onode_miss_ratio'):.0%}) under load, when the client reads "
                "miss too and the cache no longer grows, the cache is too small for the working set: random small "
                "reads slow down (a bigger cache, or more of it for metadata, helped in the campaigns). An ingest "
                "misses by design (new objects): high here, no alert.",
                "percentunit",
                [q("osd:ceph_perfwatch_onode_miss:ratio", *WHERE, legend=PER_OSD)],
                steps=over("onode_miss_ratio"),
                links=[runbook("PerfwatchOnodeCacheMisses")],
            ),
            graph(
                "Onode lookups",
                "Onode cache lookups per second (hits and misses). The miss alert counts only from the dashed line "
                f"({limit('onode_min_lookups_per_second'):g}/s) up: an idle OSD's few misses are noise.",
                "ops",
                [q("osd:ceph_perfwatch_onode_lookups:rate", *WHERE, legend=PER_OSD)],
                steps=over("onode_min_lookups_per_second", "orange"),
                links=[runbook("PerfwatchOnodeCacheMisses")],
            ),
            graph(
                "Buffer cache misses",
                "Share of bytes read that missed BlueStore's buffer (data) cache and came from the device; hit ratio "
                "= 1 - this. High while the data cache's target below is small: data reads go to the media.",
                "percentunit",
                [q("osd:ceph_perfwatch_buffer_miss:ratio", *WHERE, legend=PER_OSD)],
            ),
            graph(
                "Cache targets and committed bytes",
                "Bytes the cache autotuner gives each cache (data, meta, kv, kv_onode: target) and what it has "
                "committed. A cache whose target stays small while its misses are high starves: raise "
                "osd_memory_target or change the cache ratios.",
                "bytes",
                [
                    q(
                        "ceph_perfwatch_bluestore_cache_target_bytes",
                        COUNTERS,
                        *WHERE,
                        legend="{{ceph_daemon}} {{cache}} target",
                    ),
                    q(
                        "ceph_perfwatch_bluestore_cache_committed_bytes",
                        COUNTERS,
                        *WHERE,
                        legend="{{ceph_daemon}} {{cache}} committed",
                    ),
                ],
            ),
            graph(
                "Memory target and cache budget",
                "The OSD's memory target (osd_memory_target) and the part the autotuner gives to all BlueStore "
                "caches. A budget far below the target: the OSD's other memory (PG logs, buffers) crowds the caches.",
                "bytes",
                [
                    q(
                        "ceph_perfwatch_bluestore_memory_target_bytes",
                        COUNTERS,
                        *WHERE,
                        legend="{{ceph_daemon}} target",
                    ),
                    q("ceph_perfwatch_bluestore_cache_budget_bytes", COUNTERS, *WHERE, legend="{{ceph_daemon}} caches"),
                ],
            ),
            graph(
                "BlueStore cache mempools",
                "Bytes held in the bluestore_cache_* mempools (onode, meta, data, other): what the caches actually "
                "hold, next to their targets.",
                "bytes",
                [q("ceph_perfwatch_bluestore_mempool_bytes", COUNTERS, *WHERE, legend="{{ceph_daemon}} {{pool}}")],
            ),
        ],
    )


def rocksdb() -> Row:
    return Row(
        "RocksDB",
        [
            graph(
                "Compactions",
                "Compactions Ceph asks RocksDB for, per second, by the module's trigger label: background (Ceph's "
                "`compact` counter: whole-DB compactions, e.g. `ceph tell osd.N compact`), range (ranges queued "
                "after deletions such as PG removal; Pacific only) and queue merges. RocksDB's own level "
                "compactions are counted only from Reef 18.2 on (the panels below); on Pacific the queue and "
                "stalls beside show whether they keep up.",
                "cps",
                [q("osd:ceph_perfwatch_rocksdb_compactions:rate", *WHERE, legend="{{ceph_daemon}} {{trigger}}")],
                width=6,
            ),
            graph(
                "Compaction queue",
                "Ranges waiting in the OSD's compaction queue. Staying at or above the dashed line "
                f"({limit('compaction_queue_length'):g}) for long: compaction does not keep up.",
                "short",
                [q("osd:ceph_perfwatch_compaction_queue:length", *WHERE, legend=PER_OSD)],
                steps=over("compaction_queue_length"),
                links=[runbook("PerfwatchRocksDBCompactionBacklog")],
                width=6,
            ),
            graph(
                "Write stalls",
                "Share of the time RocksDB delayed writes (memtables or L0 full). From the dashed line "
                f"({limit('write_stall_ratio'):.0%}) clients feel it. Moves only with rocksdb_perf on: 0 may mean "
                "off.",
                "percentunit",
                [q("osd:ceph_perfwatch_rocksdb_write_stall:ratio", *WHERE, legend=PER_OSD)],
                steps=over("write_stall_ratio"),
                links=[runbook("PerfwatchRocksDBWriteStalls")],
                width=6,
            ),
            graph(
                "Commit latency",
                "Mean RocksDB synchronous submit (BlueStore kv commit) latency. Above the media verdict's limit "
                "for the kind of the device holding the OSD's WAL (HDD, SSD, NVMe: the OSD detail dashboard "
                "draws it) that device is slow or saturated (a faster WAL device cut tail latency by half or "
                "more in the campaigns).",
                "s",
                [q("osd:ceph_perfwatch_commit_latency:seconds", *WHERE, legend=PER_OSD)],
                links=[runbook("PerfwatchDeviceSaturated")],
                width=6,
            ),
            graph(
                COMPACTIONS_FINISHED,
                "Compactions RocksDB finished per second, whatever started them (its own level compactions "
                "too), and how many run now. Ceph counts these from Reef 18.2 on (RocksDB's compaction events); "
                "Pacific has no such counter and this panel stays empty there. Compactions running most of the "
                "time while writes stall (above): compaction is the OSD's bottleneck.",
                "short",
                [
                    q("osd:ceph_perfwatch_rocksdb_compactions_completed:rate", *WHERE, legend=f"{PER_OSD} finished/s"),
                    q("ceph_perfwatch_rocksdb_compactions_running", COUNTERS, *WHERE, legend=f"{PER_OSD} running"),
                ],
                width=12,
            ),
            graph(
                LAST_COMPACTION,
                "How long the last compaction RocksDB finished took (Reef 18.2 and later; empty on Pacific). "
                "Compactions that grow longer over days: the DB grows, or the device holding it slows down.",
                "s",
                [q("ceph_perfwatch_rocksdb_last_compaction_duration_seconds", COUNTERS, *WHERE, legend=PER_OSD)],
                width=12,
            ),
        ],
    )


def bluefs() -> Row:
    return Row(
        "BlueFS: DB, WAL and spill-over",
        [
            graph(
                "DB device used",
                "Share of the BlueFS DB device RocksDB uses. Near 100 %, RocksDB's next level spills onto the slow "
                "device (spill-over, beside).",
                "percentunit",
                [q("osd:ceph_perfwatch_bluefs_db_used:ratio", *WHERE, legend=PER_OSD)],
            ),
            graph(
                "BlueFS bytes: DB, WAL, slow",
                "Bytes BlueFS uses on each of its devices. With a single device per OSD, all of it is the DB's and "
                "WAL and slow stay at 0.",
                "bytes",
                [
                    q("ceph_perfwatch_bluefs_db_used_bytes", COUNTERS, *WHERE, legend="{{ceph_daemon}} db"),
                    q("ceph_perfwatch_bluefs_wal_used_bytes", COUNTERS, *WHERE, legend="{{ceph_daemon}} wal"),
                    q("ceph_perfwatch_bluefs_slow_used_bytes", COUNTERS, *WHERE, legend="{{ceph_daemon}} slow"),
                ],
            ),
            graph(
                "Spill-over onto the slow device",
                "Bytes of RocksDB on the main (slow) device because the DB device is full. Anything above "
                f"{limit('spillover_bytes'):g} bytes (red) is spill-over: metadata reads and compactions hit the "
                "slow media. 0 is healthy.",
                "bytes",
                [q("osd:ceph_perfwatch_bluefs_spillover:bytes", *WHERE, legend=PER_OSD)],
                # thresholds start at a value (>=): one byte more than the alert's `> spillover_bytes`
                steps=Steps("green", ((limit("spillover_bytes") + 1, "red"),)),
                links=[runbook("PerfwatchBlueFSSpillover")],
            ),
        ],
    )


def build() -> dm.Dashboard:
    return board(
        NAME,
        "perfwatch / BlueStore and RocksDB",
        "Why an OSD is slow inside: its caches, RocksDB compaction and stalls, and where BlueFS keeps RocksDB.",
        [osd_variable(True, "osd:ceph_perfwatch_daemon_up:bool")],
        [caches(), rocksdb(), bluefs()],
    )
