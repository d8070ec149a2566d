"""The HTTP server of the module's endpoint and of the host exporter: one that idle or slow clients
cannot starve.

One thread runs a selectors loop that does all the socket I/O without blocking: it accepts, reads
request heads (each within a deadline and a size cap), and writes responses (each within a deadline).
Only complete requests reach the small pool of worker threads, which call the app and hand the bytes
back to the loop. So a client that connects and sends nothing, sends half a head, or never reads its
response holds a socket and a few kilobytes until its deadline, never a thread. Open connections are
capped (the oldest idle ones are dropped to make room), and so are responses being written.
Every response closes its connection (Prometheus opens a new one per scrape; that is cheap).

httpserver.py holds HttpServer; limits.py the bounds; listener.py binds; loop.py is the loop thread;
connections.py each connection's states (handshake.py the TLS start); workers.py the pool; responses.py
what an app answers and its bytes, httpwire.py HTTP's syntax; security.py, tls.py, basic_auth.py and
passwords.py what clients must show. Nothing here imports the mgr module's code: the host exporter
ships this package with the few pure modules it uses.
"""

from .httpserver import HttpServer
from .limits import Limits, connection_cap
from .responses import SERVER_NAME, App, Response, encode

__all__ = ["SERVER_NAME", "App", "HttpServer", "Limits", "Response", "connection_cap", "encode"]
