"""`osd`: the OSD's own `bench` tell command. Local media, no network: 4 KiB IOPS and 4 MiB throughput.

What it writes is bounded twice: by the OSD's own osd_bench_* limits, and by its free space
(capacity.plan_osd_bench): sizes the user did not ask for are cut to the OSD's budget, sizes the user
asked for that do not fit are refused, naming the OSD, its free bytes and the limit.
"""

import concurrent.futures
from typing import Any, Dict, List, Optional

from ...ceph.capacity_view import CapacityView
from ...ceph.seam import FetchError, OsdInfo
from ..base import BenchError, Benchmark, Context, ParamSpec
from ..lifecycle.capacity import (
    MIN_OSD_BENCH_4K_WRITES,
    MIN_OSD_BENCH_4M_MIB,
    CapacityError,
    crossed_margin,
    plan_osd_bench,
    space_of,
)
from ..lifecycle.planning import MIB, BenchLimits, batches, clamp_osd_bench
from ..measurement import Measurement

LIMIT_KEYS = (
    "osd_bench_small_size_max_iops",
    "osd_bench_large_size_max_throughput",
    "osd_bench_duration",
    "osd_bench_max_block_size",
)
BLOCK_4K, BLOCK_4M = 4096, 4 * MIB


def read_limits(ctx: Context, osd_id: int) -> BenchLimits:
    values = []
    for key in LIMIT_KEYS:
        answer = ctx.adapter.tell_osd(
            osd_id, {"prefix": "config get", "var": key, "format": "json"}, ctx.step_timeout(10)
        )
        values.append(int(float(answer[key])))
    return BenchLimits(*values)


class OsdBench(Benchmark):
    name = "osd"
    heavy = True
    description = "the OSD's own bench: 4 KiB write IOPS and 4 MiB write throughput on its local media"
    interval_option = "osd_bench_interval"
    params = (
        ParamSpec(
            "writes_4k",
            3000,
            MIN_OSD_BENCH_4K_WRITES,
            1000000,
            "4 KiB writes in the IOPS round (cut to the OSD's limit)",
        ),
        ParamSpec(
            "mib_4m",
            100,
            MIN_OSD_BENCH_4M_MIB,
            10240,
            "MiB written in the 4 MiB throughput round (cut to the OSD's limit)",
        ),
    )

    def _sizes(
        self, view: CapacityView, osd_id: int, params: Dict[str, int], requested: Optional[Dict[str, Optional[int]]]
    ) -> List[int]:
        """[bytes of the 4 KiB round, bytes of the 4 MiB round] within the OSD's free-space budget."""
        return list(
            plan_osd_bench(
                space_of(view, osd_id),
                view.nearfull_ratio,
                params["writes_4k"] * BLOCK_4K,
                self.explicit("writes_4k", params, requested),
                params["mib_4m"] * MIB,
                self.explicit("mib_4m", params, requested),
                BLOCK_4M,
            )
        )

    def check_capacity(
        self,
        plan: List[OsdInfo],
        requested: Optional[Dict[str, Optional[int]]],
        params: Dict[str, int],
        options: Dict[str, Any],
        view: CapacityView,
    ) -> None:
        for osd in plan:
            if osd.up:
                self._sizes(view, osd.id, params, requested)

    def _bench(self, ctx: Context, osd_id: int) -> List[Measurement]:
        limits = read_limits(ctx, osd_id)
        try:
            sizes = self._sizes(ctx.capacity_view(), osd_id, ctx.params, ctx.requested)  # fresh figures
        except CapacityError as exc:
            raise BenchError(str(exc)) from exc
        out = []
        for (block, metric, unit, field), planned in zip(
            (
                (BLOCK_4K, "write_iops_4k", "iops", "iops"),
                (BLOCK_4M, "write_throughput_4m", "bytes_per_second", "bytes_per_sec"),
            ),
            sizes,
        ):
            ctx.check()
            why = crossed_margin(ctx.capacity_view(), [osd_id])
            if why:
                raise BenchError("aborted before the {} round: {}".format(metric, why))
            total, block = clamp_osd_bench(planned, block, limits)
            cmd = {"prefix": "bench", "count": total, "size": block, "format": "json"}
            answer = ctx.adapter.tell_osd(osd_id, cmd, ctx.step_timeout(limits.duration + 60))
            out.append(Measurement(self.name, metric, osd_id, float(answer[field]), unit))
        return out

    def run(self, ctx: Context) -> List[Measurement]:
        ctx.check_capacity(self)  # before anything is written; per OSD again in _bench, on fresh figures
        up = [o for o in ctx.osds if o.up]
        rounds = batches(up, None, ctx.per_host)
        results: List[Measurement] = []
        for index, batch in enumerate(rounds):
            ctx.check()
            ctx.progress(index / len(rounds), "osd bench on {}".format(", ".join("osd.{}".format(o) for o in batch)))
            with concurrent.futures.ThreadPoolExecutor(max_workers=len(batch)) as pool:
                futures = {pool.submit(self._bench, ctx, osd_id): osd_id for osd_id in batch}
                for future in concurrent.futures.as_completed(futures):
                    try:
                        results.extend(future.result())
                    except FetchError as exc:
                        raise BenchError("osd.{}: {}".format(futures[future], exc)) from exc
            why = ctx.osd_latency_guard(batch) or crossed_margin(ctx.capacity_view(), batch)
            if why:
                raise BenchError("aborted: {}".format(why))
        return results

    def cleanup(
        self, adapter: Any, io_factory: Any, scratch: Dict[str, Any], log: Any, options: Dict[str, Any]
    ) -> None:
        """osd bench removes its own objects; nothing to clean."""
