"""The HTTP server of the module's endpoint and of the host exporter: one that idle or slow clients cannot
starve. Nothing here imports the mgr module's code: the host exporter ships this package.

One selectors loop (loop.py) does all the socket I/O without blocking: accepts, reads request heads and
writes responses, each within a deadline and a size cap; only complete requests reach the few worker
threads (workers.py) that call the app. A client that sends nothing, half a head, or never reads holds a
socket until its deadline, never a thread. Open connections and responses being written are capped
(limits.py); every response closes its connection (Prometheus opens one per scrape: cheap).
What clients must show: security.py, tls.py, basic_auth.py, passwords.py.
"""

from .httpserver import HttpServer
from .limits import Limits, connection_cap
from .responses import SERVER_NAME, App, Response, encode

__all__ = ["SERVER_NAME", "App", "HttpServer", "Limits", "Response", "connection_cap", "encode"]
