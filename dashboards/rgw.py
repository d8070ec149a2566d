"""RGW bucket index: the rgw probe's omap and S3 latencies, the RGWs' bucket-index op rates (host exporter),
their requests, queue and active requests (the mgr's RGW counters)."""

from __future__ import annotations

from grafana_foundation_sdk.models import dashboard as dm

from .common import CLUSTER, MODULE, Row, board, graph, limit, over, q, runbook

NAME = "rgw-bucket-index"
PER_RGW = "{{ceph_daemon}}"


def latency() -> Row:
    return Row(
        "Bucket-index latency: the rgw probe",
        [
            graph(
                "Bucket-index op latency",
                "The rgw probe's last timings of omap work on a probe object in each bucket-index pool (set, get, "
                "list, remove) and of listing real index shards. From the dashed line "
                f"({limit('bucket_index_latency_seconds') * 1000:g} ms) every PUT, DELETE and listing waits on the "
                "index (moving the index from HDD to NVMe cut average GET latency from 142 to 57 ms in the campaigns).",
                "s",
                [q("cluster:ceph_perfwatch_bucket_index_latency:seconds", CLUSTER, legend="{{metric}}")],
                steps=over("bucket_index_latency_seconds"),
                links=[runbook("PerfwatchBucketIndexLatencyHigh")],
                width=12,
            ),
            graph(
                "S3 PUT and LIST latency",
                "The rgw probe's 4 KiB S3 PUT and its one-key LIST through an RGW, end to end. Far above the "
                "bucket-index latencies beside it: the RGW or the network, not the index, is slow. Set "
                "mgr/perfwatch/rgw_s3_endpoint and the probe user's keys to have it.",
                "s",
                [
                    q(
                        "ceph_perfwatch_bench_latency_seconds",
                        MODULE,
                        CLUSTER,
                        'kind="rgw"',
                        'metric=~"s3_.*"',
                        legend="{{metric}}",
                    )
                ],
                width=12,
            ),
        ],
    )


def load() -> Row:
    return Row(
        "Index operations and requests",
        [
            graph(
                "Bucket-index ops",
                "Operations the RGWs send to bucket-index objects per second, from their objecters (host exporter): "
                "call (cls_rgw index calls: prepare and complete of every PUT and DELETE, listings), omap reads, "
                "writes and deletes. Many calls per request with high index latency: the index is the bottleneck.",
                "ops",
                [
                    q(
                        "cluster:ceph_perfwatch_rgw_objecter_ops:rate",
                        CLUSTER,
                        legend="{{hostname}} {{ceph_daemon}} {{op}}",
                    )
                ],
            ),
            graph(
                "RGW requests",
                "Requests each RGW serves per second, and those it fails. Read beside the index op rate: index calls "
                "per request show how much of each request is index work.",
                "reqps",
                [
                    q("cluster:ceph_perfwatch_rgw_requests:rate", CLUSTER, legend=PER_RGW),
                    q("cluster:ceph_perfwatch_rgw_failed_requests:rate", CLUSTER, legend="{{ceph_daemon}} failed"),
                ],
            ),
            graph(
                "RGW queue and active requests",
                "Requests each RGW is working on (active) and those waiting for a worker thread (queued). A queue "
                "that grows while the index latency is high: requests wait on the index; while it is low: the RGW "
                "itself (threads, CPU) is short.",
                "short",
                [
                    q("ceph_perfwatch_rgw_active_requests", MODULE, CLUSTER, legend="{{ceph_daemon}} active"),
                    q("ceph_perfwatch_rgw_queue_length", MODULE, CLUSTER, legend="{{ceph_daemon}} queued"),
                ],
            ),
        ],
    )


def build() -> dm.Dashboard:
    return board(
        NAME,
        "perfwatch / RGW bucket index",
        "Is the bucket index what slows RGW: the probe's omap and S3 latencies beside the index op and request rates.",
        [],
        [latency(), load()],
    )
