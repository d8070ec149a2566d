"""The shared core: what serves /metrics, for the mgr module and the host exporter alike.

server/ is the HTTP server (TLS, basic auth, bounded connections and workers); exposition.py renders
samples as Prometheus text; metrics_model.py holds the families, their samples and the Registry they are
declared in; metrics_cache.py the last rendered body, which a collection puts and a scrape reads.

The core imports nothing of perfwatch outside it: the module's web app (web.py), its collection and the
daemon counters import the core, never the other way (tests/unit/test_layout.py checks it). The host
exporter ships this package, daemon_counters/ and version.py, not the module
(`python3 packaging/exporter_tree.py --why` shows who imports what).
"""
