"""Micro-benchmarks: one interface (plan -> run under a deadline -> measurements), several kinds."""
