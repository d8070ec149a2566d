"""The media verdict's recording rules: which devices are judged, their kind and limits, and the verdict
per device (host_device) and per OSD device (osd_device).

A device is judged, once, when it lies beneath an OSD (its block, block.db or block.wal): busy *and*
queued *and* slow for its kind (profiles.py). Slow is its own await, or the commits of the OSDs whose
RocksDB WAL it holds (block.wal, else block.db, else block): an HDD whose DB sits on a shared flash device
is judged by its await alone, and that flash device by its await and its OSDs' commits. Several OSDs on
one device (partitions, LVM volumes) and many OSDs on one DB device give one device verdict that names
them all; the per-OSD series follow it for the dashboards.
"""

from __future__ import annotations

from .profiles import MEDIA_KINDS, Profile, media_limits
from .promql import OSD_DEVICE, Rule, by, rule, sel, with_label

DEVICE = "cluster, hostname, device"
DEVICE_KIND = "cluster, hostname, device, kind"
ON_DEVICE = "on (cluster, hostname, device)"
INFO = "osd_device:ceph_perfwatch_osd_device:info"
KIND_INFO = "host_device:ceph_perfwatch_device:info"
# each OSD device's verdict: its device's
OSD_DEVICE_VERDICT = f"{INFO}\n* {ON_DEVICE} group_left ()\nhost_device:ceph_perfwatch_media_saturated:bool"


def _per_kind(p: Profile, which: int) -> str:
    """The devices' limit (0: await, 1: commit) for their kind: one branch per group of kinds judged alike."""
    groups: dict[str, list[str]] = {}
    for kind, judged in MEDIA_KINDS.items():
        groups.setdefault(judged, []).append(kind)
    branches = []
    for judged, kinds in groups.items():
        matcher = f'kind="{kinds[0]}"' if len(kinds) == 1 else f'kind=~"{"|".join(kinds)}"'
        branches.append(f"{KIND_INFO}{{{matcher}}} * {media_limits(p, judged)[which]:g}")
    return "\nor\n".join(branches)


def media_topology_rules(p: Profile) -> list[Rule]:
    """Which devices are judged, of which kind, with which limits; which device holds each OSD's WAL. Only
    the exporter's info series: they change when the hardware does, not with the load (group
    perfwatch-topology: the media verdict's group reads them as the last evaluation left them)."""
    exp = p.exporter_selector
    device_info = sel("ceph_perfwatch_device_info", exp)
    stacked = by(DEVICE, "max", sel("ceph_perfwatch_device_info", exp, p.stacked_device_selector))
    # One kind per device even when two exporters of a host disagree (a version skew, one without /sys):
    # the most conservative, the kind with the largest limits, first. Each kind's rows get its rank as
    # their value and topk keeps the first per device: device_info read once (an `unless` chain of the
    # kinds before each read it 4 times: 0.50 s of CPU at 10,000 OSDs), then back to 1.
    order = ("unknown", "hdd", "ssd", "nvme")
    ranked = "\nor\n".join(
        by(DEVICE_KIND, "max", sel("ceph_perfwatch_device_info", exp, f'kind="{kind}"')) + f" + {len(order) - i}"
        for i, kind in enumerate(order)
    )
    known = f"clamp(topk by ({DEVICE}) (1,\n{ranked}\n), 1, 1)"
    osd_role = "on (cluster, hostname, ceph_daemon)"
    return [
        # which OSD sits on which device (the devices the media verdict judges), and on which host
        rule(
            INFO,
            by(OSD_DEVICE, "max", sel("ceph_perfwatch_osd_device_info", exp, p.media_device_selector))
            + f"\nunless {ON_DEVICE}\n{stacked}",
        ),
        # each judged device's kind; unknown where the exporter does not say (an older exporter)
        rule(
            KIND_INFO,
            f"{known}\nand {ON_DEVICE}\n{INFO}\nor\n"
            + with_label(f"{by(DEVICE, 'max', INFO)}\nunless {ON_DEVICE}\n{device_info}", "kind", "unknown"),
        ),
        rule("host_device:ceph_perfwatch_media_await_limit:seconds", _per_kind(p, 0)),
        rule("host_device:ceph_perfwatch_media_commit_limit:seconds", _per_kind(p, 1)),
        # the device holding each OSD's RocksDB WAL, whose speed its commits wait on
        rule(
            "osd_device:ceph_perfwatch_kv_device:info",
            f'{INFO}{{role="wal"}}\nor\n'
            f'({INFO}{{role="db"}} unless {osd_role} {INFO}{{role="wal"}})\nor\n'
            f'({INFO}{{role="block"}} unless {osd_role} {INFO}{{role=~"db|wal"}})',
        ),
        # the queue from which a device counts as queued: media_queue_depth, or for a device holding only
        # DB/WAL partitions, media_wal_queue_per_osd per OSD whose WAL it holds (profiles.py says why)
        rule(
            "host_device:ceph_perfwatch_media_queue_limit:avg",
            f"clamp_max(\n{p.media_wal_queue_per_osd:g} * "
            + by(DEVICE, "count", 'osd_device:ceph_perfwatch_kv_device:info{role=~"db|wal"}')
            + f'\nunless {ON_DEVICE}\n{INFO}{{role="block"}},\n{p.media_queue_depth:g})\nor\n'
            + by(DEVICE, "max", INFO)
            + f" * {p.media_queue_depth:g}",
        ),
        # how many OSDs each judged device holds (two per NVMe split in partitions, 14 on a shared DB device)
        rule(
            "host_device:ceph_perfwatch_device_osds:count",
            by(DEVICE, "count", by(f"{DEVICE}, ceph_daemon", "max", INFO)),
        ),
    ]


def media_limit_rules(p: Profile) -> list[Rule]:
    """The limits per OSD, for its dashboards."""
    return [
        rule(
            "osd:ceph_perfwatch_commit_limit:seconds",
            by(
                "cluster, hostname, ceph_daemon",
                "max",
                f"osd_device:ceph_perfwatch_kv_device:info\n* {ON_DEVICE} group_left ()\n"
                "host_device:ceph_perfwatch_media_commit_limit:seconds",
            ),
        ),
        rule(
            "osd_device:ceph_perfwatch_media_await_limit:seconds",
            f"{INFO}\n* {ON_DEVICE} group_left ()\nhost_device:ceph_perfwatch_media_await_limit:seconds",
        ),
    ]


def media_commit_rules(p: Profile) -> list[Rule]:
    """The commits of the OSDs whose WAL each device holds."""
    return [
        # The commits of the OSDs whose RocksDB WAL the device holds: their median, as a device that queues
        # slows every one of them, while one OSD's own trouble (its CPU, its kv sync thread) slows only its
        # own (one of 14 OSDs behind a shared DB device must not mark the device and name all 14).
        rule(
            "host_device:ceph_perfwatch_media_commit_latency:seconds",
            f"quantile by ({DEVICE}) (\n  0.5,\n"
            "  osd_device:ceph_perfwatch_kv_device:info\n  * on (cluster, ceph_daemon) group_left ()\n"
            "  osd:ceph_perfwatch_commit_latency:seconds\n)",
        ),
    ]


def media_verdict_rules(p: Profile) -> list[Rule]:
    """Saturated per device, with its kind."""
    slow_await = (
        f"host_device:node_disk_await:seconds\n>= bool {ON_DEVICE} group_right ()\n"
        "host_device:ceph_perfwatch_media_await_limit:seconds"
    )
    slow_commit = (
        f"host_device:ceph_perfwatch_media_commit_latency:seconds\n>= bool {ON_DEVICE} group_right ()\n"
        "host_device:ceph_perfwatch_media_commit_limit:seconds"
    )
    # slow for its kind: its own await, or its OSDs' commits (the `slow` label keeps both branches apart
    # until the max); inline, not a rule of its own: no other rule reads it (0.02 s less at 10,000 OSDs)
    branches = with_label(slow_await, "slow", "await") + "\nor\n" + with_label(slow_commit, "slow", "commit")
    slow = by(DEVICE_KIND, "max", branches)
    return [
        # busy AND queued AND slow. Busy alone is not saturation; a deep queue served fast is not either.
        rule(
            "host_device:ceph_perfwatch_media_saturated:bool",
            f"(host_device:node_disk_busy:ratio >= bool {p.media_busy_ratio})\n* {ON_DEVICE}\n"
            f"(host_device:node_disk_queue:avg >= bool {ON_DEVICE} host_device:ceph_perfwatch_media_queue_limit:avg)\n"
            f"* {ON_DEVICE} group_right ()\n{slow}",
        ),
    ]


def media_detail_rules(p: Profile) -> list[Rule]:
    """Per OSD and device: the device's limits and verdict, for the dashboards."""
    return [
        *media_limit_rules(p),
        # per OSD and device: the device's verdict, for the OSD's dashboards (the per-OSD verdict of
        # perfwatch-media computes the same at once)
        rule("osd_device:ceph_perfwatch_media_saturated:bool", OSD_DEVICE_VERDICT),
        # per OSD and device, with the device's kind: the device -> OSDs table of the Bottlenecks dashboard
        rule(
            "osd_device:ceph_perfwatch_device_verdict:bool",
            f"{INFO}\n* {ON_DEVICE} group_left (kind)\nhost_device:ceph_perfwatch_media_saturated:bool",
        ),
    ]
