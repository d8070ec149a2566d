"""Renders the lab's ceph.conf. Pure: a LabConfig, a Topology and an fsid in, text out."""

from __future__ import annotations

from .config import LabConfig
from .topology import Topology

MON_ID = "a"

# RocksDB sized for the lab's few-GiB OSDs. Pacific's default gives each OSD 256 MiB memtables (up to 4)
# and 1 GiB of WAL before a flush is forced; the lab's loop devices report rotational=1, so BlueStore defers
# every small write through the RocksDB WAL, and BlueFS grew until it could fill a small OSD. With 16 MiB
# memtables and 64 MiB of WAL, compaction runs early (figures: docs/decisions/benchmark-capacity.md).
# Everything else is Pacific's default string.
ROCKSDB_OPTIONS = ",".join(
    [
        "compression=kNoCompression",
        "max_write_buffer_number=4",
        "min_write_buffer_number_to_merge=1",
        "recycle_log_file_num=4",
        "write_buffer_size=16777216",
        "writable_file_max_buffer_size=0",
        "compaction_readahead_size=2097152",
        "max_background_compactions=2",
        "max_total_wal_size=67108864",
    ]
)


def rgw_name(config: LabConfig) -> str:
    return f"client.rgw.{config.name}"


def mon_addr(config: LabConfig, topo: Topology) -> str:
    return f"[v2:{topo.core_address}:{config.mon_port}]"


def pool_size(config: LabConfig) -> int:
    return min(3, config.osds)


def render(config: LabConfig, topo: Topology, fsid: str) -> str:
    d = config.directory
    size = pool_size(config)
    network = "127.0.0.0/8" if not topo.namespaced else f"198.18.{config.subnet_index}.0/24"
    # Host failure domain only when there are enough hosts to hold every replica on its own host.
    chooseleaf = 1 if config.hosts >= size else 0
    sections: list[tuple[str, list[tuple[str, object]]]] = [
        (
            "global",
            [
                ("fsid", fsid),
                ("mon host", mon_addr(config, topo)),
                ("mon initial members", MON_ID),
                ("public network", network),
                *([("cluster network", topo.cluster_cidr)] if topo.cluster_cidr else []),
                ("auth cluster required", "cephx"),
                ("auth service required", "cephx"),
                ("auth client required", "cephx"),
                ("auth allow insecure global id reclaim", "false"),
                ("ms bind msgr1", "false"),
                ("run dir", d / "run"),
                ("crash dir", d / "crash"),
                ("log file", d / "log" / "$cluster-$name.log"),
                ("mon cluster log file", d / "log" / "$cluster.$channel.log"),
                ("keyring", d / "keyring"),
                ("osd pool default size", size),
                ("osd pool default min size", 1 if size < 3 else 2),
                ("osd pool default pg num", 8),
                ("osd pool default pgp num", 8),
                ("osd pool default pg autoscale mode", "off"),
                ("osd crush chooseleaf type", chooseleaf),
                ("mon allow pool size one", "true" if size == 1 else "false"),
                ("mon warn on pool no redundancy", "false" if size == 1 else "true"),
                ("mon allow pool delete", "true"),
                # The lab shares the machine's disk: warn only when it is really about to fill.
                ("mon data avail warn", 3),
                ("mon data avail crit", 1),
                # A killed active mgr is replaced after this many seconds (Ceph's default is 30). At 10 s a Reef
                # run had an active mgr replaced that nobody killed, just after an OSD benchmark had filled the
                # shared disk (the mon's commits, and so its reading of the beacons, wait behind it).
                ("mon mgr beacon grace", 20),
                # Ceph's default also enables `restful` (and `nfs`), which the lab does not use; on Reef
                # as Debian trixie ships it, restful's PyO3 dependency fails in the mgr (HEALTH_WARN).
                ("mgr initial modules", "iostat"),
                ("osd memory target", 1536 * 1024 * 1024),
            ],
        ),
        (
            "mon",
            [
                ("mon data", d / "mon" / "ceph-$id"),
                ("keyring", d / "mon" / "ceph-$id" / "keyring"),
                ("admin socket", d / "run" / "$cluster-$name.asok"),
            ],
        ),
        (
            "mgr",
            [
                ("mgr data", d / "mgr" / "ceph-$id"),
                ("keyring", d / "mgr" / "ceph-$id" / "keyring"),
                ("admin socket", d / "run" / "$cluster-$name.asok"),
                *([("mgr module path", d / "mgr-modules")] if config.module_from == "checkout" else []),
                ("public addr", topo.core_address),
            ],
        ),
        (
            "osd",
            [
                ("osd data", d / "osd" / "ceph-$id"),
                ("keyring", d / "osd" / "ceph-$id" / "keyring"),
                ("admin socket", d / "run" / "$cluster-$name.asok"),
                ("osd objectstore", "bluestore"),
                ("bluestore block create", "true" if config.osd_backing == "file" else "false"),
                ("bluestore block size", config.osd_size_bytes),
                ("bluestore rocksdb options", ROCKSDB_OPTIONS),
                # The lab's block.db partitions are small (--db-size): RocksDB's level sizing would put
                # its second level on the data device (BLUEFS_SPILLOVER) long before they are full.
                # fit_to_fast keeps it on the DB device while it fits, as a DB device sized for its OSDs does.
                *([("bluestore volume selection policy", "fit_to_fast")] if config.db_device != "none" else []),
            ],
        ),
    ]
    for osd in topo.osds:
        sections.append(
            (
                f"osd.{osd.id}",
                [
                    ("crush location", f"root=default host={osd.host.crush_name}"),
                    ("public addr", osd.host.address),
                    ("cluster addr", osd.host.cluster_address or osd.host.address),
                ],
            )
        )
    sections.append(
        (
            rgw_name(config),
            [
                ("rgw frontends", f"beast endpoint={topo.core_address}:{config.rgw_port}"),
                ("rgw data", d / "rgw"),
                ("keyring", d / "rgw" / "keyring"),
                ("admin socket", d / "run" / "$cluster-$name.asok"),
                ("public addr", topo.core_address),
            ],
        )
    )
    out = [f"# Written by `python3 -m lab up` for the lab in {d}. Remade on every `up`.\n"]
    for section, items in sections:
        out.append(f"[{section}]")
        out.extend(f"\t{key} = {value}" for key, value in items)
        out.append("")
    return "\n".join(out)
