"""The code both daemons ship: the mgr module and the host exporter import it, and packaging copies this
folder whole into the exporter's package and image.

server/ is the HTTP server (TLS, basic auth, bounded connections and workers); exposition.py renders
samples as Prometheus text; metrics_model.py holds the families, their samples and the Registry they are
declared in; metrics_cache.py the last rendered body a collection puts and a scrape reads;
daemon_counters/ reads a Ceph daemon's perf counters into rows; version.py is the one version number.

It imports nothing of perfwatch outside this folder (tests/unit/test_layout.py checks it).
"""
