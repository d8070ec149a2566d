"""One client connection of the server and the states it goes through (connections.py moves it along)."""

import socket
import ssl
from typing import Any, List, Optional

# connection states
SNIFF = "sniff"  # TLS port: waiting for the first byte
HANDSHAKE = "handshake"  # TLS handshake under way
HEAD = "head"  # reading the request head (idle or slow clients wait here, in the loop only)
WORK = "work"  # a worker owns the request; the loop leaves the socket alone
WRITE = "write"  # the loop writes the response
LINGER = "linger"  # response sent and write side shut; draining until the client closes


class Conn:
    __slots__ = ("deadline", "head", "out", "peer", "sock", "state", "tls")

    def __init__(self, sock: socket.socket, peer: Any, deadline: float, tls: Optional[ssl.SSLContext]) -> None:
        self.sock = sock
        self.peer = peer
        self.tls = tls
        self.state = SNIFF if tls is not None else HEAD
        self.head = bytearray()
        self.out: List[memoryview] = []
        self.deadline = deadline
