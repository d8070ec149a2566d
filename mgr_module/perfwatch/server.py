"""A small threaded HTTP server for the module's endpoint (standard library; Python 3.6 has no
ThreadingHTTPServer, so the mixin is spelled out)."""

import errno
import http.server
import logging
import socket
import socketserver
import threading
from typing import Any, Optional

from .web import App

MAX_CONNECTIONS = 16  # handler threads at once; more connections are closed at once
SOCKET_TIMEOUT = 30.0  # a client that sends nothing for this long is dropped


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self.shutdown_request(request)  # busy: drop the connection rather than grow threads
            return
        try:
            super().process_request(request, client_address)
        except Exception:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


def _handler(app: App, log: logging.Logger) -> Any:
    class Handler(http.server.BaseHTTPRequestHandler):
        server_version = "ceph-perfwatch"
        timeout = SOCKET_TIMEOUT

        def do_GET(self) -> None:
            accepts_gzip = "gzip" in self.headers.get("Accept-Encoding", "")
            try:
                resp = app(self.path, accepts_gzip)
            except Exception:
                log.exception("error answering %s", self.path)
                self.send_error(500)
                return
            self.send_response(resp.status)
            self.send_header("Content-Type", resp.content_type)
            self.send_header("Content-Length", str(len(resp.body)))
            for key, value in resp.headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(resp.body)

        def log_message(self, format: str, *args: Any) -> None:
            log.debug("http: " + format, *args)

    return Handler


class HttpServer:
    def __init__(self, app: App, addr: str, port: int, log: logging.Logger) -> None:
        self.app = app
        self.addr = addr
        self.port = port
        self.log = log
        self._server: Optional[_Server] = None
        self._thread: Optional[threading.Thread] = None

    def start(self) -> None:
        """Bind and serve in a thread. Raises OSError when the address cannot be bound."""
        addr = self.addr
        family = socket.AF_INET6 if ":" in addr else socket.AF_INET
        server_cls = type("PerfwatchServer", (_Server,), {"address_family": family})
        try:
            server = server_cls((addr, self.port), _handler(self.app, self.log))
        except OSError as exc:
            if addr != "::" or exc.errno not in (errno.EAFNOSUPPORT, errno.EADDRNOTAVAIL):
                raise
            self.log.info("IPv6 is not available here; binding 0.0.0.0 instead of ::")
            addr = "0.0.0.0"
            server_cls = type("PerfwatchServer", (_Server,), {"address_family": socket.AF_INET})
            server = server_cls((addr, self.port), _handler(self.app, self.log))
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name="perfwatch-http", daemon=True)
        self._thread.start()
        self.log.info("serving on %s:%d", addr, self.port)

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
