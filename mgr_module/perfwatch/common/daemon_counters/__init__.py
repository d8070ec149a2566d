"""A Ceph daemon's counters, read the same way by the mgr module (from the mgr and `perf dump` tells) and by
the host exporter (from its OSDs' admin sockets, `--daemon-counters`): the table of counters and how to
read them (counters.py, counter_rows.py), their families (counter_families.py) and why a read failed
(fetch_reasons.py). Collection, not the core: it imports the core (the metric model and the renderer's
columns) and nothing else of perfwatch."""
