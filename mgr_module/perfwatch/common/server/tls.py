"""A server-side TLS context from a certificate, a key and optionally a CA for client certificates, with
exporter-toolkit's names for the client policy and the versions (so one web config serves
node_exporter and us alike)."""

import os
import ssl
import stat
from typing import List, NamedTuple, Optional

NO_CLIENT_CERT = "NoClientCert"
VERIFY_IF_GIVEN = "VerifyClientCertIfGiven"
REQUIRE_AND_VERIFY = "RequireAndVerifyClientCert"
CLIENT_AUTH = {NO_CLIENT_CERT: ssl.CERT_NONE, VERIFY_IF_GIVEN: ssl.CERT_OPTIONAL, REQUIRE_AND_VERIFY: ssl.CERT_REQUIRED}
# exporter-toolkit's other two policies ask for a certificate without verifying it, which Python's ssl
# cannot do; they are refused with this advice rather than silently made stricter or weaker.
UNSUPPORTED_CLIENT_AUTH = {
    "RequestClientCert": "use VerifyClientCertIfGiven with client_ca_file",
    "RequireAnyClientCert": "use RequireAndVerifyClientCert with client_ca_file",
}
# exporter-toolkit's version names, in order, each with the option that turns it off (Python 3.6 has no
# minimum_version; newer ones are used where they exist)
VERSIONS = ("TLS10", "TLS11", "TLS12", "TLS13")
_NO_VERSION = {"TLS10": "OP_NO_TLSv1", "TLS11": "OP_NO_TLSv1_1", "TLS12": "OP_NO_TLSv1_2", "TLS13": "OP_NO_TLSv1_3"}
_TLS_VERSION = {"TLS10": "TLSv1", "TLS11": "TLSv1_1", "TLS12": "TLSv1_2", "TLS13": "TLSv1_3"}


class TlsError(ValueError):
    pass


class TlsSettings(NamedTuple):
    cert_file: str
    key_file: str
    client_ca_file: Optional[str] = None
    client_auth: str = NO_CLIENT_CERT
    min_version: str = "TLS12"  # exporter-toolkit's default
    max_version: str = "TLS13"
    prefer_server_cipher_suites: bool = True


def check(settings: TlsSettings) -> None:
    """Raises TlsError for a policy or version that is not one of the names above, or a client CA
    without a policy that uses it (and the other way round), as exporter-toolkit does."""
    if settings.client_auth in UNSUPPORTED_CLIENT_AUTH:
        raise TlsError(
            "client_auth_type {}: not supported; {}".format(
                settings.client_auth, UNSUPPORTED_CLIENT_AUTH[settings.client_auth]
            )
        )
    if settings.client_auth not in CLIENT_AUTH:
        raise TlsError(
            "client_auth_type {!r}: not one of {}".format(settings.client_auth, ", ".join(sorted(CLIENT_AUTH)))
        )
    if settings.client_ca_file and settings.client_auth == NO_CLIENT_CERT:
        raise TlsError("client_ca_file is set but client_auth_type is NoClientCert: say which clients it checks")
    if not settings.client_ca_file and settings.client_auth != NO_CLIENT_CERT:
        raise TlsError("client_auth_type {} needs client_ca_file".format(settings.client_auth))
    for name in (settings.min_version, settings.max_version):
        if name not in VERSIONS:
            raise TlsError("TLS version {!r}: not one of {}".format(name, ", ".join(sorted(VERSIONS))))
    if VERSIONS.index(settings.min_version) > VERSIONS.index(settings.max_version):
        raise TlsError("min_version {} is above max_version {}".format(settings.min_version, settings.max_version))


def server_context(settings: TlsSettings) -> ssl.SSLContext:
    """The context, certificates loaded. Raises TlsError with what is wrong (a file missing, a key that
    does not match the certificate, a bad policy)."""
    check(settings)
    opened: List[int] = []
    try:
        cert, key = _open_regular(settings.cert_file, opened), _open_regular(settings.key_file, opened)
        ca = _open_regular(settings.client_ca_file, opened) if settings.client_ca_file else None
        return _context(settings, cert, key, ca)
    finally:
        for fd in opened:
            os.close(fd)


def _context(settings: TlsSettings, cert: str, key: str, ca: Optional[str]) -> ssl.SSLContext:
    """The context of files already checked and opened (cert, key, ca: /proc/self/fd/N paths)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _versions(context, settings.min_version, settings.max_version)
    if settings.prefer_server_cipher_suites:
        context.options |= ssl.OP_CIPHER_SERVER_PREFERENCE
    context.options |= getattr(ssl, "OP_NO_RENEGOTIATION", 0)
    try:
        context.load_cert_chain(cert, key, password=_no_passphrase)  # never a prompt on the terminal
    except TlsError:
        raise TlsError(
            "{}: an encrypted private key; store it without a passphrase".format(settings.key_file)
        ) from None
    except (OSError, ssl.SSLError) as exc:
        raise TlsError(
            "certificate {} with key {}: {}".format(settings.cert_file, settings.key_file, _why(exc))
        ) from None
    context.verify_mode = CLIENT_AUTH[settings.client_auth]
    if ca is not None:
        try:
            context.load_verify_locations(cafile=ca)
        except (OSError, ssl.SSLError) as exc:
            raise TlsError("client_ca_file {}: {}".format(settings.client_ca_file, _why(exc))) from None
    return context


def _no_passphrase() -> bytes:
    """OpenSSL asks for an encrypted key's passphrase on the terminal and waits: say no at once."""
    raise TlsError("encrypted key")


def _open_regular(name: str, opened: List[int]) -> str:
    """The file opened without blocking (OpenSSL would block on a FIFO), checked to be a regular file
    once open (no swap between a check and OpenSSL's open), as a /proc/self/fd path OpenSSL can read.
    Symlinks are followed (Kubernetes mounts secrets through them). Raises TlsError."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise TlsError("{}: {}".format(name, exc.strerror or exc)) from None
    opened.append(fd)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        raise TlsError("{}: not a regular file".format(name))
    return "/proc/self/fd/{}".format(fd)


def _versions(context: ssl.SSLContext, lowest: str, highest: str) -> None:
    tls_version = getattr(ssl, "TLSVersion", None)
    if tls_version is not None and hasattr(context, "minimum_version"):
        try:
            setattr(context, "minimum_version", getattr(tls_version, _TLS_VERSION[lowest]))  # noqa: B010 (3.6)
            setattr(context, "maximum_version", getattr(tls_version, _TLS_VERSION[highest]))  # noqa: B010
        except ValueError as exc:  # this OpenSSL cannot do that version
            raise TlsError("TLS versions {}-{}: {}".format(lowest, highest, exc)) from None
        return
    first, last = VERSIONS.index(lowest), VERSIONS.index(highest)
    for number, name in enumerate(VERSIONS):
        if number < first or number > last:
            context.options |= getattr(ssl, _NO_VERSION[name], 0)


def _why(exc: Exception) -> str:
    if isinstance(exc, ssl.SSLError) and exc.reason:
        return str(exc.reason).lower().replace("_", " ")
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc)
