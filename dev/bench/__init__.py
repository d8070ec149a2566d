"""Benchmarks of perfwatch's own code: scripts that print figures (run as `python3 -m bench.NAME`)."""
