"""The benchmark kinds, one file each (osd.py, rados.py, rbd.py, rgw.py, net.py), and the registry of them
(registry.py). What they run with is in ../engine/.

This file imports nothing: importing one kind does not load every kind."""
