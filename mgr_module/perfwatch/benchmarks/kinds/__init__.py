"""The benchmark kinds, one file each (osd.py, rados.py, rbd.py, rgw.py, net.py), the registry of them
(registry.py), and the I/O helpers the kinds run with beside them: librados calls with a timeout
(rados_io.py), the queue-depth loop (qd_loop.py), object placement (placement.py), the light rados probe's
phases, coverage, commit evidence and scratch PG count, and the rgw probe's S3 client (s3_client.py).

This file imports nothing: importing one helper (mgr_adapter needs RadosIO) does not load every kind."""
