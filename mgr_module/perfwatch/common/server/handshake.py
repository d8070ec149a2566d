"""The TLS start of a connection, one non-blocking step at a time, for connections.py: what its first
byte says, the next handshake step, whether a verified client may in. No selector or state here."""

import socket
import ssl
from typing import Any, Optional, Tuple

from .security import PLAIN_HTTP_TO_TLS, TLS_HANDSHAKE_FAILED, client_names, normal_name

WAIT = (BlockingIOError, InterruptedError, ssl.SSLWantReadError, ssl.SSLWantWriteError)  # not now: later
TLS = "tls"  # the first byte starts a TLS handshake
READ, WRITE, DONE = "read", "write", "done"  # what a handshake step needs next
_HANDSHAKE_RECORD = b"\x16"  # the first byte of every TLS ClientHello
PLAIN_TO_TLS_TEXT = "This endpoint speaks HTTPS: the client sent an HTTP request to it; use https://\n"


class Failed(Exception):
    """The handshake failed; str() says why (no client certificate, an unknown CA, ...)."""


def first_byte(sock: socket.socket) -> bytes:
    """The connection's first byte, left in the socket; b"" when the client closed. Raises WAIT's
    exceptions when nothing has arrived yet, OSError when the connection broke."""
    return sock.recv(1, socket.MSG_PEEK)


def classify(first: bytes) -> str:
    """TLS for a handshake; PLAIN_HTTP_TO_TLS for what starts an HTTP request (a letter, as GET does),
    answered 400 in plain text so the client sees why; TLS_HANDSHAKE_FAILED for anything else."""
    if first == _HANDSHAKE_RECORD:
        return TLS
    return PLAIN_HTTP_TO_TLS if first.isalpha() else TLS_HANDSHAKE_FAILED


def step(sock: ssl.SSLSocket) -> str:
    """One non-blocking handshake step: READ or WRITE (wait for that, then step again) or DONE. Raises
    Failed."""
    try:
        sock.do_handshake()
    except ssl.SSLWantReadError:
        return READ
    except ssl.SSLWantWriteError:
        return WRITE
    except (ssl.SSLError, OSError) as exc:
        reason = getattr(exc, "reason", None)
        raise Failed(str(reason).lower().replace("_", " ") if reason else str(exc)) from None
    return DONE


def not_allowed(cert: Optional[dict], allowed: Tuple[str, ...]) -> Optional[str]:  # type: ignore[type-arg]
    """Why a client whose verified certificate is `cert` may not in (its names, and those allowed); None
    when it may (or when no names are required)."""
    if not allowed:
        return None
    names = client_names(cert)
    if set(names) & {normal_name(name) for name in allowed}:
        return None
    return "{} (allowed: {})".format(", ".join(names) if names else "no client certificate", ", ".join(allowed))


def peer_text(peer: Any) -> str:
    if isinstance(peer, tuple) and len(peer) >= 2:
        return "{}:{}".format(peer[0], peer[1])
    return str(peer)
