"""What the kinds run with: librados calls with a timeout (rados_io.py), the queue-depth loop of the timed
rounds (qd_loop.py), the light rados probe's object placement, phases, coverage and commit evidence, and
the rgw probe's S3 client."""
