"""What the benchmarks keep in the mgr's store: BenchStore (store.py) over versioned records (versioned.py)
written in parts when longer than one entry (parts.py) and fitted into entries (fit.py); the checks of
each record read back (runs.py, scratch.py, state.py) and what they share (common.py). Pure but store.py
and versioned.py, which talk to the store through the functions they are handed."""
