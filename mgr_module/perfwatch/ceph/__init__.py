"""The seam to Ceph: the one interface the logic talks to (seam.py: CephAdapter and its plain data), its
implementation inside ceph-mgr (mgr_adapter.py, mgr_pools.py), what differs between the mgr's releases
(mgr_compat.py, mgr_logging.py), views of Ceph's maps (osd_map_view.py, osd_networks.py,
capacity_view.py, commit_latency.py) and blocking calls with a bound (call_pool.py, cpu_clock.py).

It imports nothing of the benchmarks, the collection or the commands: they import it.
"""
