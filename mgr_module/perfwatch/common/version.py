"""The module's version, reported by `ceph perfwatch status` and on /metrics."""

__version__ = "0.1.0"
