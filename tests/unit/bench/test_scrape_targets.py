"""dev/bench/scrape_targets.py: the synthetic cluster split into the scrape targets a real one has, which
dev/bench/vm_verdicts.py shares out between two vmagent shards."""

from __future__ import annotations

from bench.scrape_targets import TargetServer, split_targets
from bench.synthetic_cluster import SyntheticCluster


def test_targets_partition_the_series_one_per_source_and_instance() -> None:
    cluster = SyntheticCluster(100, 24)
    targets = split_targets(cluster)
    assert sum(t.series for t in targets) == cluster.series_count
    hosts = len(cluster.hosts)
    # each host's node_exporter and host exporter; the active mgr's two modules; the standby's perfwatch
    assert len(targets) == 2 * hosts + 3
    for t in targets:
        body = b"".join(t.render(cluster.t_ref + 60)).decode()
        assert body.count("\n") == t.series
        for line in body.splitlines():
            assert f'instance="{t.instance}"' in line
            assert line.endswith(f" {int((cluster.t_ref + 60) * 1000)}")  # stamped with the moment of its values


def test_every_target_has_its_own_labels_for_the_shards_to_hash() -> None:
    server = TargetServer(split_targets(SyntheticCluster(100, 24)))
    try:
        statics = [(job["job_name"], s) for job in server.scrape_configs() for s in job["static_configs"]]
        assert all(job["honor_labels"] for job in server.scrape_configs())
        keys = {(name, s["labels"]["instance"], s["labels"]["__metrics_path__"]) for name, s in statics}
        assert len(keys) == len(statics) == len(server.targets)
        assert {s["labels"]["__metrics_path__"] for _, s in statics} == set(server.targets)
    finally:
        server.server_close()
