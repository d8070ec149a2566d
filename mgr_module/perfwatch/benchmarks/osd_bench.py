"""`osd`: the OSD's own `bench` tell command. Local media, no network: 4 KiB IOPS and 4 MiB throughput."""

import concurrent.futures
from typing import Any, Dict, List

from ..adapter import FetchError
from .base import BenchError, Benchmark, Context, ParamSpec
from .planning import MIB, BenchLimits, batches, clamp_osd_bench
from .results import Measurement

LIMIT_KEYS = (
    "osd_bench_small_size_max_iops",
    "osd_bench_large_size_max_throughput",
    "osd_bench_duration",
    "osd_bench_max_block_size",
)


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
    params = (
        ParamSpec("writes_4k", 3000, 100, 1000000, "4 KiB writes in the IOPS round (cut to the OSD's limit)"),
        ParamSpec("mib_4m", 100, 4, 10240, "MiB written in the 4 MiB throughput round (cut to the OSD's limit)"),
    )

    def _bench(self, ctx: Context, osd_id: int) -> List[Measurement]:
        limits = read_limits(ctx, osd_id)
        out = []
        for block, total, metric, unit, field in (
            (4096, ctx.params["writes_4k"] * 4096, "write_iops_4k", "iops", "iops"),
            (4 * MIB, ctx.params["mib_4m"] * MIB, "write_throughput_4m", "bytes_per_second", "bytes_per_sec"),
        ):
            ctx.check()
            total, block = clamp_osd_bench(total, block, limits)
            cmd = {"prefix": "bench", "count": total, "size": block, "format": "json"}
            answer = ctx.adapter.tell_osd(osd_id, cmd, ctx.step_timeout(limits.duration + 60))
            out.append(Measurement(self.name, metric, osd_id, float(answer[field]), unit))
        return out

    def run(self, ctx: Context) -> List[Measurement]:
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
            why = ctx.osd_latency_guard(batch)
            if why:
                raise BenchError("aborted: {}".format(why))
        return results

    def cleanup(self, adapter: Any, io_factory: Any, scratch: Dict[str, Any], log: Any) -> None:
        """osd bench removes its own objects; nothing to clean."""
