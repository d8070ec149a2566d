"""What every record BenchStore keeps in the mgr store shares: the version, the size limits, the
run-id pattern, and the helpers the record checks (runs.py, scratch.py, state.py) are written with. Pure.

VERSION, one number for every record under "bench/": 1 was the bare JSON of the value, 2 puts it in an
envelope, {"version": 2, "data": <value>}. A reader migrates older versions and sets aside what is newer or
broken (versioned.py). Each clean_* function takes the decoded value and returns a Cleaned: the value as
kept (None when nothing of it can be used) and what was dropped, for one log line. Fields the code reads are
checked for presence and type; others are kept as they are, so a newer writer's extra fields pass through.
"""

import math
import re
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

VERSION = 2
MAX_KEYS = 10000  # last_run, scratch runs, recovered run ids, runs in progress
# Result keys (kind/metric/osd.N): baselines, regressions, streaks. Six per OSD today, so 60,000 at 10,000
# OSDs; a baseline of baseline_window values is about 0.5 KB of memory, so at most about 50 MB.
MAX_RESULT_KEYS = 100000
# One entry of the mgr's store is one config-key entry of the mons, refused above mon_config_key_max_entry_size
# (64 KiB by default; the mgr then logs the whole value and keeps it in memory only, so a failover would
# bring back an older one). A record is written within this many characters per entry (JSON is ASCII).
ENTRY_MAX_CHARS = 60000


def entry_max_for(limit: Any) -> int:
    """The characters to write per entry for the mons' mon_config_key_max_entry_size as the mgr sees it
    (None, or anything not a size, when it cannot tell): within it by 512, at most ENTRY_MAX_CHARS; half of it
    when it is under 2 KiB (at least 64)."""
    if isinstance(limit, str) and limit.strip().isdigit():
        limit = int(limit)
    if not is_int(limit):
        return ENTRY_MAX_CHARS
    return min(ENTRY_MAX_CHARS, limit - 512 if limit >= 2048 else max(64, limit // 2))


MAX_SCRATCH_ENTRIES = 100  # per run: a kind registers one or two
MAX_HISTORY = 1000  # per kind; the history_limit option's maximum

# "osd/write_iops_4k/osd.3", "rgw/s3_put_latency/-": what Measurement.key makes and split_key reads.
RESULT_KEY = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/(-|osd\.(0|[1-9][0-9]*))$")  # one spelling per OSD
NAME = re.compile(r"^[A-Za-z0-9_.-]+$")  # a kind or a metric name
# run.new_run_id: "<kind>-YYYYmmddTHHMMSS-xxxx"; also found inside "perfwatch.<run id>" image names.
RUN_ID = re.compile(r"(?<![A-Za-z0-9_])([a-z][a-z0-9_]{0,31})-([0-9]{8}T[0-9]{6})-([0-9a-f]{4})(?![A-Za-z0-9])")
SCRATCH_TEXT_FIELDS = ("pool", "namespace", "prefix", "image")  # what the kinds' cleanup reads


class Cleaned(NamedTuple):
    value: Any  # None: nothing usable
    dropped: List[str]  # one short note per thing dropped
    recovered: Dict[str, str]  # scratch only: run id -> kind, of runs named in broken material


def ok(value: Any, dropped: Optional[List[str]] = None, recovered: Optional[Dict[str, str]] = None) -> Cleaned:
    return Cleaned(value, dropped or [], recovered or {})


def unusable(why: str) -> Cleaned:
    return Cleaned(None, [why], {})


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def run_ids_in(text: str) -> Dict[str, str]:
    """Run ids (and the kind each names) found anywhere in a text, e.g. an unreadable scratch record."""
    return {m.group(0): m.group(1) for m in RUN_ID.finditer(text)}


def kind_of_run_id(run_id: str) -> str:
    m = RUN_ID.fullmatch(run_id)
    return m.group(1) if m else ""


def as_mapping(data: Any, what: str) -> Tuple[Optional[Dict[str, Any]], List[str]]:
    if not isinstance(data, dict):
        return None, ["a {} where {} should be".format(type_name(data), what)]
    return data, []


def has_type(value: Any, wanted: type) -> bool:
    if wanted is float:
        return is_number(value)
    if wanted is bool:
        return isinstance(value, bool)
    return isinstance(value, wanted)


def bound(mapping: Dict[str, Any], limit: Optional[int] = None) -> List[str]:
    """Trim a dict in place to `limit` (MAX_KEYS) keys, the first in sorted order staying; returns the keys dropped."""
    limit = MAX_KEYS if limit is None else limit
    if len(mapping) <= limit:
        return []
    extra = sorted(mapping)[limit:]
    for key in extra:
        del mapping[key]
    return extra


def clean_entries(
    data: Any, what: str, problem: Callable[[str, Any], Optional[str]], limit: Optional[int] = None
) -> Cleaned:
    """A record that maps keys to entries: the entries `problem` finds nothing wrong with are kept (at
    most `limit`, MAX_KEYS), the others dropped with its reason; anything but a mapping is unusable."""
    found, dropped = as_mapping(data, what)
    if found is None:
        return unusable(dropped[0])
    out = {}
    for key, value in found.items():
        why = problem(key, value)
        if why is None:
            out[key] = value
        else:
            dropped.append(why)
    return ok(out, bounded(out, dropped, limit))


def bounded(out: Dict[str, Any], dropped: List[str], limit: Optional[int] = None) -> List[str]:
    limit = MAX_KEYS if limit is None else limit
    extra = bound(out, limit)
    if extra:
        dropped.append("{} keys beyond {}".format(len(extra), limit))
    return dropped


def clean_key_list(data: Any) -> Cleaned:
    """bench/aside_index: the keys of records set aside, oldest first."""
    if not isinstance(data, list) or not all(isinstance(k, str) for k in data):
        return unusable("a {} where a list of keys should be".format(type_name(data)))
    return ok(list(data))
