"""The module's metrics endpoint: where it listens and its health check (serving.py), what it answers
(pages.py), and its TLS and basic auth from the mgr store (tls_auth.py)."""
