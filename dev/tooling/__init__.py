"""Development tools that ship nowhere: the Prometheus 3 fetch for the promtool tests, the README options table."""
