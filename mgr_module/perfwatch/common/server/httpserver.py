"""HttpServer, what its users hold: start() binds and serves in background threads, stop() ends it."""

import logging
from typing import Dict, Optional

from .limits import Limits
from .listener import listen
from .loop import Loop
from .responses import App
from .security import REASONS, Security


class HttpServer:
    """Serves app on addr:port in background threads: HttpServer(app, addr, port, log).start() / .stop().
    `security` (TLS, basic auth) is asked at each connection and request; plain HTTP without it."""

    def __init__(
        self,
        app: App,
        addr: str,
        port: int,
        log: logging.Logger,
        limits: Optional[Limits] = None,
        backlog: int = 128,
        security: Optional[Security] = None,
    ) -> None:
        self.app = app
        self.addr = addr
        self.port = port
        self.log = log
        self.limits = limits or Limits()
        self.backlog = backlog
        self.security = security or Security()
        self._server: Optional[Loop] = None
        self._stats: Dict[str, int] = {}

    def start(self) -> None:
        """Bind and serve in threads. Raises OSError when the address cannot be bound."""
        sock, addr = listen(self.addr, self.port, self.backlog, self.log)
        server = Loop(sock, self.app, self.log, self.limits, self.security)
        server.start("perfwatch-http")
        self._server = server
        self.log.info("serving on %s:%d (%s)", addr, server.server_address[1], self.security.describe())

    def alive(self) -> bool:
        """Whether its loop thread still runs (False before start() and after stop())."""
        return self._server is not None and self._server.alive()

    @property
    def bound_port(self) -> int:
        """The port listened on (the one the kernel chose when port was 0); 0 before start()."""
        return int(self._server.server_address[1]) if self._server is not None else 0

    def stats(self) -> Dict[str, int]:
        """Counts since the last start(): accepted, served, refused, dropped_idle, head_timeouts, ..."""
        return dict(self._server.stats) if self._server is not None else dict(self._stats)

    def refusals(self) -> Dict[str, int]:
        """The security refusals (security.REASONS) since the last start(), every reason present."""
        counts = self.stats()
        return {reason: counts.get(reason, 0) for reason in REASONS}

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._stats = dict(self._server.stats)
            self._server = None
