"""Judging results: per-OSD baselines and the verdict (baseline.py), whose regression a slow write is
(attribution.py), the streaks and regressions of a finished run (regressions.py), and the health
check raised from them (health.py)."""
