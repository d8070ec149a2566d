"""Every `ceph perfwatch ...` command, one file per group (bench.py, status.py, top.py, secrets.py): each
group is a class that Module inherits, its methods declared with mgr_compat's decorators and typed
against CommandHost (host.py), the part of Module a command may read. To add a command: a method in its
group's file (a new group: a new file, and its class among Module's bases). What a command computes
lives in pure modules beside them (status_report.py, metrics_table.py, secret_store.py) or in the
subsystem it belongs to (load/top_rows.py); bench_replies.py is what the bench commands do with the runner."""
