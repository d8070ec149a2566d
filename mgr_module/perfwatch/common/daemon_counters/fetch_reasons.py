"""Why a daemon's counters could not be read: a bounded set, used as the `reason` label of
ceph_perfwatch_fetch_errors_total by the module (ceph/seam.py) and the host exporters alike. Pure."""

REASON_TIMEOUT = "timeout"  # no answer within request_timeout
REASON_ERROR = "error"  # the daemon or the mgr answered with an error
REASON_BUSY = "busy"  # an earlier request to it is still unanswered: not piling up another
REASON_DOWN = "down"  # the map says it is down: not asked
REASON_DECODE = "decode"  # the answer was not the JSON we expected
REASONS = (REASON_TIMEOUT, REASON_ERROR, REASON_BUSY, REASON_DOWN, REASON_DECODE)
