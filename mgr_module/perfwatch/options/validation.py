"""Option values the mgr cannot check: their validators, the values the module uses when one is refused,
and the PERFWATCH_CONFIG_INVALID health check that reports them. Pure: no Ceph imports, no I/O.

Ceph checks a module option's type, min/max and enum_allowed at `ceph config set` and nothing more (Pacific's
`MgrMap::ModuleOption` has no other constraint), so a malformed string is stored with rc 0. The module checks
each value in `config_notify`, never uses a refused one, and says so in the log, in `ceph perfwatch status`
(`config_errors`) and in `ceph health detail`. A value of another type than its option's ("abc", "nan",
"inf") is refused the same way (config.read), not raised. s3_endpoint.py checks the rgw_s3_endpoint URL.
"""

import re
import unicodedata
from typing import Any, Callable, Dict, Optional, Tuple

from .s3_endpoint import check_s3_endpoint, parse_ip
from .shown import shown
from .window import EmptyWindowError, parse_window

# ----- health check ------------------------------------------------------------------------------

CONFIG_INVALID = "PERFWATCH_CONFIG_INVALID"
CONFIG_INVALID_SUMMARY = "perfwatch option(s) invalid and not used: {names}"
CONFIG_INVALID_DETAIL = "{name}: {message}"

# ----- the option checks -------------------------------------------------------------------------

MAX_NAME_LENGTH = 128
_REGION = re.compile(r"[a-z0-9-]{1,32}")
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")


def check_window(value: str) -> Optional[str]:
    try:
        parse_window(value)
    except EmptyWindowError:
        return (
            "{} starts and ends at the same time: leave the option empty for any time, or give HH:MM-HH:MM "
            "with two different times".format(shown(value))
        )
    except ValueError:
        return "{} is not a time window; accepted: empty (any time) or HH:MM-HH:MM, hours 00-23, minutes 00-59".format(
            shown(value)
        )
    return None


def check_name(value: str) -> Optional[str]:
    """A pool or namespace name: non-empty, bounded, no '/', no whitespace or control characters."""
    accepted = "accepted: 1-{} characters, no '/', no spaces or control characters".format(MAX_NAME_LENGTH)
    if not value or len(value) > MAX_NAME_LENGTH:
        return "{} has {} characters; {}".format(shown(value[:MAX_NAME_LENGTH]), len(value), accepted)
    if "/" in value or any(ch.isspace() or unicodedata.category(ch).startswith("C") for ch in value):
        return "{} has '/', spaces or control characters; {}".format(shown(value), accepted)
    return None


def check_bucket(value: str) -> Optional[str]:
    accepted = (
        "accepted: an S3 bucket name, 3-63 characters of lowercase letters, digits, '.' and '-', starting "
        "and ending with a letter or digit, no '..', not an IP address"
    )
    if not _BUCKET.fullmatch(value) or ".." in value or parse_ip(value) is not None:
        return "{} is not a valid bucket name; {}".format(shown(value), accepted)
    return None


def check_region(value: str) -> Optional[str]:
    if not _REGION.fullmatch(value):
        return "{} is not a region name; accepted: 1-32 lowercase letters, digits and '-'".format(shown(value))
    return None


def check_server_addr(value: str) -> Optional[str]:
    if parse_ip(value) is None:
        return "{} is not an IP address; accepted: an IPv4 or IPv6 address, '::' for every address".format(shown(value))
    return None


def check_power_of_two(value: str) -> Optional[str]:
    """A PG count: a power of two (its type and range are checked where the option is declared)."""
    try:
        number = int(value)
    except ValueError:
        return None
    if number >= 1 and number & (number - 1) == 0:
        return None
    lower = 1 << (number.bit_length() - 1) if number >= 1 else 1
    return (
        "{} is not a power of two: Ceph warns of a pool whose PG count is not one (POOL_PG_NUM_NOT_POWER_OF_TWO), "
        "and the scratch pool grows only while the cluster is healthy; e.g. {} or {}".format(number, lower, 2 * lower)
    )


CHECKS: Dict[str, Callable[[str], Optional[str]]] = {
    "server_addr": check_server_addr,
    "scratch_pool": check_name,
    "scratch_namespace": check_name,
    "scratch_pool_pg_num": check_power_of_two,
    "heavy_bench_window": check_window,
    "rgw_s3_endpoint": check_s3_endpoint,
    "rgw_s3_bucket": check_bucket,
    "rgw_s3_region": check_region,
}

# What a refused value turns off, beyond the value itself falling back to its default.
S3_OPTIONS = ("rgw_s3_endpoint", "rgw_s3_bucket", "rgw_s3_region")
# Must name the interval options of the kinds whose scheduled runs are heavy
# (benchmarks.lifecycle.schedule.heavy_interval_options; a test compares them).
HEAVY_INTERVAL_OPTIONS = ("osd_bench_interval", "rbd_bench_interval")


def check(name: str, value: Any) -> Optional[str]:
    """Why this value of option `name` is refused, or None (also for options without a validator)."""
    validator = CHECKS.get(name)
    return validator(str(value)) if validator else None


def errors(values: Dict[str, Any]) -> Dict[str, str]:
    """option -> message, for every refused value."""
    out = {}
    for name, value in values.items():
        message = check(name, value)
        if message:
            out[name] = message
    return out


def effective(
    values: Dict[str, Any], defaults: Dict[str, Any], not_typed: Optional[Dict[str, str]] = None
) -> Tuple[Dict[str, Any], Dict[str, str]]:
    """(the values the module uses, option -> message of each refused value). not_typed: the options whose
    values were not of their type (config.read put the default in their place), refused with the rest.

    A refused value is replaced by its default, never by an earlier one (every mgr, also after a failover,
    behaves the same), and what it drives is turned off where its default would start or write unasked:
    - rgw_s3_endpoint, rgw_s3_bucket or rgw_s3_region refused: no S3 requests (endpoint empty);
    - heavy_bench_window refused: no scheduled heavy rounds (their intervals 0; `bench run` still works);
    - scratch_pool refused: the default pool is used only if it exists (scratch_pool_create off).
    """
    refused = errors(values)
    refused.update(not_typed or {})
    out = dict(values)
    for name in refused:
        out[name] = defaults[name]
    if any(name in refused for name in S3_OPTIONS):
        out["rgw_s3_endpoint"] = ""
    if "heavy_bench_window" in refused:
        for name in HEAVY_INTERVAL_OPTIONS:
            out[name] = 0
    if "scratch_pool" in refused:
        out["scratch_pool_create"] = False
    return out, refused


def newly_refused(before: Dict[str, str], now: Dict[str, str]) -> Dict[str, str]:
    """The errors to log: those that are new or changed since the last check (logged once per change)."""
    return {name: message for name, message in now.items() if before.get(name) != message}


def health_checks(refused: Dict[str, str]) -> Dict[str, Dict[str, Any]]:
    """The PERFWATCH_CONFIG_INVALID check for set_health_checks, or nothing when every value is valid."""
    if not refused:
        return {}
    names = sorted(refused)
    return {
        CONFIG_INVALID: {
            "severity": "warning",
            "summary": CONFIG_INVALID_SUMMARY.format(names=", ".join(names)),
            "count": len(names),
            "detail": [CONFIG_INVALID_DETAIL.format(name=name, message=refused[name]) for name in names],
        }
    }
