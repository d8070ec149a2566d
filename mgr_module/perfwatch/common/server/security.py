"""What an endpoint asks of its clients: TLS (a server certificate, optionally a client certificate) and
basic auth. Off by default, as node_exporter and Ceph's modules are.

The server asks its Security for the TLS context at each new connection and for the users at each
request, so an owner that reloads (the exporter's --web.config.file, when a file changes) takes effect
for the next connection without a restart. What is refused is counted by one of REASONS.
"""

import ipaddress
import ssl
from typing import Optional, Tuple

from .basic_auth import AUTH_FAILED, AUTH_MISSING, AUTH_THROTTLED, BasicAuth

PLAIN_HTTP_TO_TLS = "plain_http_to_tls"  # an http:// request to a port that speaks TLS (answered 400)
TLS_HANDSHAKE_FAILED = "tls_handshake_failed"  # no client certificate when one is required, a bad one, ...
CLIENT_NOT_ALLOWED = "client_cert_not_allowed"  # a verified client certificate without an allowed name
REASONS: Tuple[str, ...] = (
    PLAIN_HTTP_TO_TLS,
    TLS_HANDSHAKE_FAILED,
    CLIENT_NOT_ALLOWED,
    AUTH_MISSING,
    AUTH_FAILED,
    AUTH_THROTTLED,
)

# Paths served without basic auth: a liveness probe (kubelet, systemd) has no password to give. It says
# only whether collections keep coming. TLS, and a required client certificate, still apply.
OPEN_PATHS = ("/healthz",)


class Security:
    """No TLS, no auth: plain HTTP, as by default."""

    def tls(self) -> Optional[ssl.SSLContext]:
        return None

    def auth(self) -> Optional[BasicAuth]:
        return None

    def allowed_client_names(self) -> Tuple[str, ...]:
        """With a verified client certificate: the subject alternative names one of which it must carry
        (exporter-toolkit's client_allowed_sans); () allows every certificate the CA signed."""
        return ()

    def describe(self) -> str:
        tls, auth = self.tls(), self.auth()
        users = "basic auth ({} user{})".format(len(auth.users), "" if len(auth.users) == 1 else "s") if auth else ""
        scheme = "plain HTTP"
        if tls is not None:
            scheme = {
                ssl.CERT_REQUIRED: "TLS with client certificates",
                ssl.CERT_OPTIONAL: "TLS, client certificates if given",
            }.get(tls.verify_mode, "TLS")
        return "{}, {}".format(scheme, users or "no auth")


class FixedSecurity(Security):
    def __init__(
        self,
        tls: Optional[ssl.SSLContext] = None,
        auth: Optional[BasicAuth] = None,
        allowed_client_names: Tuple[str, ...] = (),
    ) -> None:
        self._tls = tls
        self._auth = auth
        self._names = allowed_client_names

    def tls(self) -> Optional[ssl.SSLContext]:
        return self._tls

    def auth(self) -> Optional[BasicAuth]:
        return self._auth

    def allowed_client_names(self) -> Tuple[str, ...]:
        return self._names


def client_names(cert: Optional[dict]) -> Tuple[str, ...]:  # type: ignore[type-arg]
    """The subject alternative names (DNS, IP, URI, email values) of a peer certificate as
    SSLSocket.getpeercert() gives it, IP addresses in their canonical form (normal_name)."""
    if not cert:
        return ()
    return tuple(normal_name(str(value)) for _kind, value in cert.get("subjectAltName", ()))


def normal_name(name: str) -> str:
    """An IP address in one spelling (Python gives IPv6 names as 2001:DB8:0:0:0:0:0:1, configs say
    2001:db8::1); any other name as it is."""
    try:
        return str(ipaddress.ip_address(name.strip()))
    except ValueError:
        return name
