"""The peer baseline (median of the other OSDs' baselines of the same device class, kind and metric), found
by index from groups sorted once per round, equals its definition computed by scanning every baseline."""

from __future__ import annotations

import random
import statistics

from perfwatch.benchmarks.judging.baseline import Baselines, judge
from perfwatch.benchmarks.measurement import Measurement, split_key


def by_definition(m: Measurement, baselines: Baselines, device_class: dict[int, str], min_results: int) -> float | None:
    peers = []
    for key in baselines.history:
        kind, metric, osd = split_key(key)
        if (kind, metric) != (m.kind, m.metric) or osd is None or osd == m.osd:
            continue
        if device_class.get(osd) != device_class.get(m.osd):  # type: ignore[arg-type]
            continue
        value = baselines.baseline(key, min_results)
        if value is not None:
            peers.append(value)
    return statistics.median(peers) if len(peers) >= 2 else None


def test_peer_baselines_equal_their_definition_over_random_clusters() -> None:
    for seed in range(60):
        rng = random.Random(seed)
        n = rng.randint(1, 30)
        classes = {osd: rng.choice(["hdd", "ssd", "nvme"]) for osd in range(n) if rng.random() < 0.9}
        history = {
            f"{kind}/{metric}/osd.{osd}": [
                rng.choice([1.0, 2.0, rng.uniform(0.5, 3)]) for _ in range(rng.randint(1, 4))
            ]
            for kind, metric in (("rados", "write_latency"), ("osd", "write_iops_4k"))
            for osd in range(n)
            if rng.random() < 0.8
        }
        min_results = rng.randint(1, 3)
        results = [Measurement("rados", "write_latency", osd, rng.uniform(0.5, 3), "seconds") for osd in range(n + 2)]
        results.append(Measurement("rgw", "omap_get_latency", None, 0.01, "seconds"))
        expected = [by_definition(m, Baselines(10, history), classes, min_results) for m in results]
        verdicts = judge(results, Baselines(10, history), classes, 0.5, min_results)
        assert [v.peer_baseline for v in verdicts] == expected, seed
