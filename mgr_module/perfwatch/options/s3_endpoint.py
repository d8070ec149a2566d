"""The rgw_s3_endpoint option's check, and the addresses the S3 probe never talks to (also when a name
resolves to one). Pure: no Ceph imports, no I/O (the S3 client resolves names and hands the answers in)."""

import ipaddress
import re
import socket
import urllib.parse
from typing import Callable, List, Optional, Union

from .shown import shown

IPAddress = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]

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
# IPv6 addresses that carry an IPv4 one, which the packets end up at (through a translator or tunnel).
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")  # deprecated IPv4-compatible (RFC 4291): ::a.b.c.d
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # well-known NAT64 prefix (RFC 6052): IPv4 in the last 32 bits
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")  # local-use NAT64 (RFC 8215): any prefix /48../96 in it
# Where RFC 6052 (section 2.2) puts the IPv4 address, as octets of the IPv6 one, for the prefix lengths a
# local-use NAT64 prefix may have: /48, /56, /64, /96 (octet 8, bits 64-71, is always skipped).
_RFC6052_OCTETS = ((6, 7, 9, 10), (7, 9, 10, 11), (9, 10, 11, 12), (12, 13, 14, 15))

MAX_URL_LENGTH = 1024
_DNS_LABEL = re.compile(r"[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?")  # "_": container names

ENDPOINT_ACCEPTED = (
    "accepted: empty (S3 probe off), or http:// or https:// with a host name or IP address, an optional "
    "port 1-65535 and an optional path; no user:password@, no ?query, no #fragment; never a link-local, "
    "cloud-metadata, unspecified, multicast or broadcast address"
)


def parse_ip(text: str) -> Optional[IPAddress]:
    """The IP address `text` spells, or None when it spells none."""
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def embedded_ipv4(addr: ipaddress.IPv6Address) -> Optional[ipaddress.IPv4Address]:
    """The IPv4 address an IPv6 one carries where its form says where: IPv4-mapped (::ffff:a.b.c.d),
    IPv4-compatible (::a.b.c.d, not :: or ::1), well-known NAT64 (64:ff9b::a.b.c.d), 6to4 (2002:AABB:CCDD::)."""
    if addr.ipv4_mapped is not None:
        return addr.ipv4_mapped
    if addr in _NAT64 or (addr in _IPV4_COMPATIBLE and not (addr.is_unspecified or addr.is_loopback)):
        return ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)
    return addr.sixtofour


def possibly_embedded_ipv4(addr: ipaddress.IPv6Address) -> List[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 one may carry where its form allows several readings or hides it: a
    local-use NAT64 address read at each prefix length, a Teredo address's client (its last 32 bits
    inverted). Only a metadata or link-local one among them is refused: the others may be chance bits."""
    if addr in _NAT64_LOCAL:
        packed = addr.packed
        return [ipaddress.IPv4Address(bytes(packed[i] for i in octets)) for octets in _RFC6052_OCTETS]
    if addr.teredo is not None:
        return [addr.teredo[1]]  # (server, client): packets go to the client, through a Teredo relay
    return []


def _metadata_or_link_local(addr: IPAddress) -> Optional[str]:
    if addr in METADATA_ADDRESSES:
        return "{} is a cloud metadata address".format(addr)
    if addr.is_link_local:
        return "{} is a link-local address".format(addr)
    return None


def refused_address(addr: IPAddress) -> Optional[str]:
    """Why the S3 probe must not send to this address, or None when it may. An IPv6 address that carries
    an IPv4 one is refused for what that IPv4 address is refused for, too."""
    if isinstance(addr, ipaddress.IPv6Address):
        embedded = embedded_ipv4(addr)
        why = refused_address(embedded) if embedded is not None else None
        for candidate in possibly_embedded_ipv4(addr):
            why = why or _metadata_or_link_local(candidate)
        if why:
            return "{} (as {})".format(why, addr)
    why = _metadata_or_link_local(addr)
    if why:
        return why
    if addr.is_unspecified:
        return "{} is the unspecified address".format(addr)
    if addr.is_multicast:
        return "{} is a multicast address".format(addr)
    if addr == _BROADCAST:
        return "{} is the broadcast address".format(addr)
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
    addr = parse_ip(address)
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


# ----- the endpoint URL --------------------------------------------------------------------------


def check_s3_endpoint(value: str) -> Optional[str]:
    if value == "":
        return None
    text = shown(_without_userinfo(value))
    if len(value) > MAX_URL_LENGTH:
        return "{}... is longer than {} characters; {}".format(text[:40], MAX_URL_LENGTH, ENDPOINT_ACCEPTED)
    if any(ch.isspace() or not (" " < ch < "\x7f") for ch in value) or "\\" in value:
        return "{} has spaces, control, non-ASCII or backslash characters; {}".format(text, ENDPOINT_ACCEPTED)
    if "@" in value:  # checked before parsing: a password may hold '/' and hide the '@' from urlsplit
        return "{} has user information (user:password@) or an '@'; {}".format(text, ENDPOINT_ACCEPTED)
    parts = urllib.parse.urlsplit(value)
    if parts.scheme not in ("http", "https"):
        return "{} is not an http:// or https:// URL; {}".format(text, ENDPOINT_ACCEPTED)
    if "?" in value or "#" in value:
        return "{} has a query or a fragment; {}".format(text, ENDPOINT_ACCEPTED)
    host = parts.hostname or ""
    if not host:
        return "{} has no host; {}".format(text, ENDPOINT_ACCEPTED)
    try:
        port = parts.port
    except ValueError:
        port = 0
    if parts.netloc.endswith(":") or port == 0:
        return "{} has a port that is not 1-65535; {}".format(text, ENDPOINT_ACCEPTED)
    if ":" in host and not parts.netloc.startswith("["):
        return "{} has an IPv6 address without [brackets]; {}".format(text, ENDPOINT_ACCEPTED)
    why = host_error(host)
    if why:
        return "{}: {}; {}".format(text, why, ENDPOINT_ACCEPTED)
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
        addr = parse_ip(text.split("%", 1)[0])
        if addr is None:
            raise ValueError("{} resolves to {!r}, not an IP address".format(host, text))
        why = refused_address(addr)
        if why:
            raise ValueError("{} resolves to {}".format(host, why))
    return addresses[0]


def _without_userinfo(url: str) -> str:
    """The URL fit to log: all before its last '@' masked (a password may hold '/', ':' or '?')."""
    if "@" not in url:
        return url
    scheme, sep, rest = url.partition("://")
    return (scheme + sep if sep else "") + "<userinfo>@" + (rest or url).rsplit("@", 1)[1]
