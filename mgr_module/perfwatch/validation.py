"""Option values the mgr cannot check: validators, the values the module uses when one is refused, and
the health check that reports them. Pure: no Ceph imports, no I/O (names are resolved by the S3 client).

Ceph checks a module option's type, min/max and enum_allowed at `ceph config set` time and nothing
more (Pacific's `MgrMap::ModuleOption` carries no other constraint), so a malformed string is stored
with rc 0. The module therefore checks each value in `config_notify`, never uses a refused one, and
says so in the log, in `ceph perfwatch status` (`config_errors`) and in `ceph health detail`.
"""

import ipaddress
import re
import socket
import unicodedata
import urllib.parse
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from .benchmarks.schedule import parse_window

IPAddress = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]

# ----- health check ------------------------------------------------------------------------------

CONFIG_INVALID = "PERFWATCH_CONFIG_INVALID"
CONFIG_INVALID_SUMMARY = "perfwatch option(s) invalid and not used: {names}"
CONFIG_INVALID_DETAIL = "{name}: {message}"

# ----- addresses the S3 probe never talks to -----------------------------------------------------

# Cloud instance-metadata services: a signed request there could leak the S3 access key, and an
# answer could leak the instance's own credentials into a log line.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, ...
        "fd00:ec2::254",  # AWS over IPv6
        "100.100.100.200",  # Alibaba Cloud
    )
)
METADATA_HOSTNAMES = frozenset(("metadata.google.internal", "metadata"))
_BROADCAST = ipaddress.IPv4Address("255.255.255.255")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # well-known NAT64 prefix: an IPv4 address in disguise

MAX_URL_LENGTH = 1024
MAX_NAME_LENGTH = 128
_DNS_LABEL = re.compile(r"[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?")  # "_": container names
_REGION = re.compile(r"[a-z0-9-]{1,32}")
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")

ENDPOINT_ACCEPTED = (
    "accepted: empty (S3 probe off), or http:// or https:// with a host name or IP address, an optional "
    "port 1-65535 and an optional path; no user:password@, no ?query, no #fragment; never a link-local, "
    "cloud-metadata, unspecified, multicast or broadcast address"
)


def refused_address(addr: IPAddress) -> Optional[str]:
    """Why the S3 probe must not send to this address, or None when it may."""
    if isinstance(addr, ipaddress.IPv6Address):
        embedded = addr.ipv4_mapped or (ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF) if addr in _NAT64 else None)
        if embedded is not None:
            why = refused_address(embedded)
            return "{} (as {})".format(why, addr) if why else None
    if addr in METADATA_ADDRESSES:
        return "{} is a cloud metadata address".format(addr)
    if addr.is_link_local:
        return "{} is a link-local address".format(addr)
    if addr.is_unspecified:
        return "{} is the unspecified address".format(addr)
    if addr.is_multicast:
        return "{} is a multicast address".format(addr)
    if addr == _BROADCAST:
        return "{} is the broadcast address".format(addr)
    return None


def _ip(text: str) -> Optional[IPAddress]:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _looks_numeric(host: str) -> bool:
    """A name that resolvers would read as an IPv4 address in another spelling (2130706433, 0x7f.1,
    0251.0376.0251.0376): refused, as the address it stands for is not what the operator reads."""
    last = host.rstrip(".").rsplit(".", 1)[-1]
    if last.isdigit() or re.fullmatch(r"0x[0-9a-f]*", last):
        return True
    try:
        socket.inet_aton(host)  # parses only; never resolves
    except (OSError, ValueError):
        return False
    return True


def host_error(host: str) -> Optional[str]:
    """Why this URL host (name or IP address, no brackets) is refused, or None."""
    address, _, zone = host.partition("%")
    addr = _ip(address)
    if addr is not None:
        why = refused_address(addr)
        if why is None and zone:
            why = "{!r} has a zone id, which only link-local addresses need".format(host)
        return why
    if ":" in host or "%" in host:
        return "{!r} is not an IP address or a host name".format(host)
    name = host.lower().rstrip(".")
    if name in METADATA_HOSTNAMES:
        return "{} is a cloud metadata host name".format(host)
    if _looks_numeric(name):
        return "{!r} is a numeric host that is not a dotted-quad IPv4 address".format(host)
    labels = name.split(".")
    if len(name) > 253 or not all(_DNS_LABEL.fullmatch(label) for label in labels):
        return "{!r} is not a valid host name (letters, digits, '-', '_' and '.')".format(host)
    return None


def check_s3_endpoint(value: str) -> Optional[str]:
    if value == "":
        return None
    shown = _shown(_without_userinfo(value))
    if len(value) > MAX_URL_LENGTH:
        return "{}... is longer than {} characters; {}".format(shown[:40], MAX_URL_LENGTH, ENDPOINT_ACCEPTED)
    if any(ch.isspace() or not (" " < ch < "\x7f") for ch in value) or "\\" in value:
        return "{} has spaces, control, non-ASCII or backslash characters; {}".format(shown, ENDPOINT_ACCEPTED)
    if "@" in value:  # checked before parsing: a password may hold '/' and hide the '@' from urlsplit
        return "{} has user information (user:password@) or an '@'; {}".format(shown, ENDPOINT_ACCEPTED)
    parts = urllib.parse.urlsplit(value)
    if parts.scheme not in ("http", "https"):
        return "{} is not an http:// or https:// URL; {}".format(shown, ENDPOINT_ACCEPTED)
    if "?" in value or "#" in value:
        return "{} has a query or a fragment; {}".format(shown, ENDPOINT_ACCEPTED)
    host = parts.hostname or ""
    if not host:
        return "{} has no host; {}".format(shown, ENDPOINT_ACCEPTED)
    try:
        port = parts.port
    except ValueError:
        port = 0
    if parts.netloc.endswith(":") or port == 0:
        return "{} has a port that is not 1-65535; {}".format(shown, ENDPOINT_ACCEPTED)
    if ":" in host and not parts.netloc.startswith("["):
        return "{} has an IPv6 address without [brackets]; {}".format(shown, ENDPOINT_ACCEPTED)
    why = host_error(host)
    if why:
        return "{}: {}; {}".format(shown, why, ENDPOINT_ACCEPTED)
    return None


def resolved_address(host: str, port: int, resolve: Callable[[str, int], List[str]]) -> str:
    """The one address to connect to for host: every address it resolves to must be allowed (a name
    that resolves to a metadata or link-local address is refused). ValueError says why not."""
    why = host_error(host)
    if why:
        raise ValueError(why)
    addresses = resolve(host, port)
    if not addresses:
        raise ValueError("{} resolves to no address".format(host))
    for text in addresses:
        addr = _ip(text.split("%", 1)[0])
        if addr is None:
            raise ValueError("{} resolves to {!r}, not an IP address".format(host, text))
        why = refused_address(addr)
        if why:
            raise ValueError("{} resolves to {}".format(host, why))
    return addresses[0]


# ----- the other options -------------------------------------------------------------------------


def check_window(value: str) -> Optional[str]:
    try:
        parse_window(value)
    except ValueError:
        return "{} is not a time window; accepted: empty (any time) or HH:MM-HH:MM, hours 00-23, minutes 00-59".format(
            _shown(value)
        )
    return None


def check_name(value: str) -> Optional[str]:
    """A pool or namespace name: non-empty, bounded, no '/', no whitespace or control characters."""
    accepted = "accepted: 1-{} characters, no '/', no spaces or control characters".format(MAX_NAME_LENGTH)
    if not value or len(value) > MAX_NAME_LENGTH:
        return "{} has {} characters; {}".format(_shown(value[:MAX_NAME_LENGTH]), len(value), accepted)
    if "/" in value or any(ch.isspace() or unicodedata.category(ch).startswith("C") for ch in value):
        return "{} has '/', spaces or control characters; {}".format(_shown(value), accepted)
    return None


def check_bucket(value: str) -> Optional[str]:
    accepted = (
        "accepted: an S3 bucket name, 3-63 characters of lowercase letters, digits, '.' and '-', starting "
        "and ending with a letter or digit, no '..', not an IP address"
    )
    if not _BUCKET.fullmatch(value) or ".." in value or _ip(value) is not None:
        return "{} is not a valid bucket name; {}".format(_shown(value), accepted)
    return None


def check_region(value: str) -> Optional[str]:
    if not _REGION.fullmatch(value):
        return "{} is not a region name; accepted: 1-32 lowercase letters, digits and '-'".format(_shown(value))
    return None


def check_server_addr(value: str) -> Optional[str]:
    if _ip(value) is None:
        return "{} is not an IP address; accepted: an IPv4 or IPv6 address, '::' for every address".format(
            _shown(value)
        )
    return None


CHECKS: Dict[str, Callable[[str], Optional[str]]] = {
    "server_addr": check_server_addr,
    "scratch_pool": check_name,
    "scratch_namespace": check_name,
    "heavy_bench_window": check_window,
    "rgw_s3_endpoint": check_s3_endpoint,
    "rgw_s3_bucket": check_bucket,
    "rgw_s3_region": check_region,
}

# What a refused value turns off, beyond the value itself falling back to its default.
S3_OPTIONS = ("rgw_s3_endpoint", "rgw_s3_bucket", "rgw_s3_region")
# Must name the interval options of the kinds whose scheduled runs are heavy
# (benchmarks.scheduling.heavy_interval_options; a test compares them).
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


def effective(values: Dict[str, Any], defaults: Dict[str, Any]) -> Tuple[Dict[str, Any], Dict[str, str]]:
    """(the values the module uses, option -> message of each refused value).

    A refused value is replaced by its default, never by an earlier value (every mgr, also after a
    failover, behaves the same), and what it drives is turned off where the default would turn
    something on or write somewhere the operator did not name:
    - rgw_s3_endpoint, rgw_s3_bucket or rgw_s3_region refused: no S3 requests (endpoint empty);
    - heavy_bench_window refused: no scheduled heavy rounds (their intervals 0; `bench run` still works);
    - scratch_pool refused: the default pool is used only if it exists (scratch_pool_create off).
    """
    refused = errors(values)
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


def _without_userinfo(url: str) -> str:
    """The URL fit to log: all before its last '@' masked (a password may hold '/', ':' or '?')."""
    if "@" not in url:
        return url
    scheme, sep, rest = url.partition("://")
    return (scheme + sep if sep else "") + "<userinfo>@" + (rest or url).rsplit("@", 1)[1]


def _shown(value: str) -> str:
    """The given value as it is safe to show: quoted, control characters escaped, bounded."""
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."
