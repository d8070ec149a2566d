"""The listening socket: bound and listening, on both IP stacks for "::", or on 0.0.0.0 without IPv6."""

import contextlib
import errno
import logging
import socket
from typing import Tuple


def _listen(addr: str, port: int, backlog: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if addr == "::":
            with contextlib.suppress(OSError):  # both stacks on "::", whatever net.ipv6.bindv6only says
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.bind((addr, port))
        sock.listen(backlog)
    except BaseException:
        sock.close()
        raise
    return sock


def listen(addr: str, port: int, backlog: int, log: logging.Logger) -> Tuple[socket.socket, str]:
    """A socket listening on addr:port, and the address bound. Raises OSError when it cannot be bound."""
    try:
        return _listen(addr, port, backlog), addr
    except OSError as exc:
        if addr != "::" or exc.errno not in (errno.EAFNOSUPPORT, errno.EADDRNOTAVAIL):
            raise
    log.info("IPv6 is not available here; binding 0.0.0.0 instead of ::")
    return _listen("0.0.0.0", port, backlog), "0.0.0.0"
