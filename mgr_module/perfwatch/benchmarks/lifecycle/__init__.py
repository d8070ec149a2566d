"""The run lifecycle: starting, running, cancelling and waiting for runs (run_control.py), the context a
kind is handed (context.py), what may run and how much it may write (guard.py, capacity.py,
planning.py), when a kind is due (due.py) and starting what is due (schedule.py), the scratch pool and
its PG count (scratch_pool.py, scratch_pgs.py) and removing scratch data (cleanup.py)."""
