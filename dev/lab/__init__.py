"""A real Ceph cluster on one machine, for the demo and the tests (`python3 -m lab --help`)."""
