"""The active mgr's metrics endpoint: the HttpServer, the address it listens on, its URL (https:// with TLS)
and the PERFWATCH_ENDPOINT health check that says why it cannot listen where configured. module.py calls
ensure() on each pass of its loop with the address the options name.

An address that cannot be bound here never takes the endpoint down: the new address is bound before the old
server stops (when the old one had to stop first, same port, it listens on the old address again), so
scrapes of the old address go on and the health check says the new one failed. TLS and basic auth come with
each ensure() (security.Wanted): a change restarts the server where it listens; settings that cannot be
served stop it rather than serve plain HTTP, and the health check says why.
"""

import errno
import logging
from typing import Any, Callable, Dict, Optional, Tuple

from ..common.server import HttpServer
from ..common.server.responses import App
from ..common.server.security import Security
from ..options import validation
from .tls_auth import Wanted

# ----- health check ------------------------------------------------------------------------------

ENDPOINT = "PERFWATCH_ENDPOINT"
ENDPOINT_SUMMARY = "perfwatch cannot listen on {addr}:{port}: {error}"
ENDPOINT_STILL_SERVING = (
    "the metrics endpoint of mgr.{mgr} still serves on {old} ({url}), where it listened before; "
    "scrapes of {addr}:{port} fail until it can listen there"
)
ENDPOINT_NOWHERE = "the metrics endpoint of mgr.{mgr} serves nowhere: every scrape of this mgr fails"
# What `perfwatch status` says beside the error.
STATUS_STILL_SERVING = "still serving on {old} ({url})"
STATUS_NOWHERE = "serving nowhere"

Address = Tuple[str, int]
ServerFactory = Callable[..., Any]  # HttpServer(app, addr, port, log, security=...)
PLAIN = Wanted(Security(), "", None)  # no TLS, no auth: what ensure() serves when told nothing


def url_of(address: Address, mgr_ip: Callable[[], str], scheme: str = "http") -> str:
    """The URL scrapers use: the mgr's own IP for a wildcard address."""
    addr, port = address
    host = mgr_ip() if addr in ("::", "0.0.0.0") else addr
    return "{}://{}:{}/".format(scheme, host if ":" not in host else "[" + host + "]", port)


def _text(address: Address) -> str:
    return "{}:{}".format(*address)


class Endpoint:
    """Endpoint(app, mgr_id, mgr_ip, publish, log): ensure(addr, port) each loop pass, stop() at the end.
    `publish(url)` is told each new URL (the mgr's set_uri)."""

    def __init__(
        self,
        app: App,
        mgr_id: str,
        mgr_ip: Callable[[], str],
        publish: Callable[[str], None],
        log: logging.Logger,
        server_factory: ServerFactory = HttpServer,
    ) -> None:
        self._app = app
        self._mgr_id = mgr_id
        self._mgr_ip = mgr_ip
        self._publish = publish
        self._log = log
        self._make = server_factory
        self._server: Optional[Any] = None
        self._listening: Optional[Address] = None  # where _server listens
        self._previous: Optional[Address] = None  # the last address it listened on: the fallback
        self._failed: Optional[Tuple[Address, str]] = None  # the address wanted, why it cannot be listened on
        self._wanted = PLAIN  # the security it is to serve with
        self._serving_fingerprint: Optional[str] = None  # of the security the listening server has
        self._serving_security: Security = PLAIN.security
        self.url: Optional[str] = None
        self.error: Optional[str] = None  # for `perfwatch status`

    @property
    def listening(self) -> Optional[Address]:
        return self._listening

    @property
    def security(self) -> Security:
        """What the server that listens now asks of its clients (plain when nothing listens)."""
        return self._serving_security

    def refusals(self) -> Dict[str, int]:
        """The serving server's counts of refused connections and requests (security.REASONS)."""
        return self._server.refusals() if self._server is not None else {}

    def ensure(self, addr: str, port: int, security: Wanted = PLAIN) -> bool:
        """Listen on addr:port with `security`, or say why not and listen where it did before, with that
        security too: never with an older one, and nowhere when it cannot be served (never plain HTTP
        where TLS or auth is asked for). Never raises. True when the PERFWATCH_ENDPOINT check changed
        (the caller sets the health checks again)."""
        before = self._failed
        wanted = (addr, port)
        self._wanted = security
        refused = validation.check("server_addr", addr)
        if security.error is not None:
            self.stop()
            self._failed = (wanted, security.error)
            self._report("{}; {}".format(security.error, self._where()))
        elif refused:  # never listened on; PERFWATCH_CONFIG_INVALID reports it
            self._failed = None
            self._secure_where_listening()
            self._report("server_addr refused: {}; {}".format(refused, self._where()))
        elif wanted == self._listening and security.fingerprint == self._serving_fingerprint:
            self._failed = None
            self._report(None)
        else:
            self._move_to(wanted)
        return self._failed != before

    def _move_to(self, wanted: Address) -> None:
        try:
            self._listen_on(wanted)
        except OSError as exc:
            self._failed = (wanted, str(exc))
        else:
            self._failed = None
            self._report(None)
            return
        if self._server is None and self._previous is not None and self._previous != wanted:
            try:
                self._listen_on(self._previous)
            except OSError as exc:
                self._log.error("cannot listen again on %s either: %s", _text(self._previous), exc)
        self._secure_where_listening()
        self._report("cannot listen on {}: {}; {}".format(_text(wanted), self._failed[1], self._where()))

    def _secure_where_listening(self) -> None:
        """The server that still listens where it did, restarted there with the wanted security when it
        has another; stopped when that cannot be done."""
        if self._listening is None or self._serving_fingerprint == self._wanted.fingerprint:
            return
        try:
            self._listen_on(self._listening)
        except OSError as exc:
            self._log.error("cannot listen with the new TLS or auth settings on %s: %s", _text(self._listening), exc)
            self.stop()

    def _listen_on(self, address: Address) -> None:
        """Serve on address instead of where it serves now. OSError when address cannot be bound; then
        the old server still serves, unless it had to stop to free the port (nothing serves then)."""
        new = self._make(self._app, address[0], address[1], self._log, security=self._wanted.security)
        try:
            new.start()
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE or self._listening is None or self._listening[1] != address[1]:
                raise
            self.stop()  # the old server may be what holds the port (0.0.0.0:9284 -> 10.0.0.1:9284)
            new.start()
        self.stop()
        self._server, self._listening, self._previous = new, address, address
        self._serving_fingerprint = self._wanted.fingerprint
        self._serving_security = self._wanted.security
        self.url = url_of(address, self._mgr_ip, "https" if self._wanted.security.tls() is not None else "http")
        self._publish(self.url)

    def _where(self) -> str:
        if self._listening is None:
            return STATUS_NOWHERE
        return STATUS_STILL_SERVING.format(old=_text(self._listening), url=self.url)

    def _report(self, error: Optional[str]) -> None:
        if error and error != self.error:
            self._log.error("metrics endpoint: %s", error)
        elif error is None and self.error is not None:
            self._log.info("metrics endpoint: listening where configured again, %s", self.url)
        self.error = error

    def health_checks(self) -> Dict[str, Dict[str, Any]]:
        """The PERFWATCH_ENDPOINT check for set_health_checks, or nothing when it listens where configured."""
        if self._failed is None:
            return {}
        (addr, port), error = self._failed
        if self._listening is None:
            detail = ENDPOINT_NOWHERE.format(mgr=self._mgr_id)
        else:
            old = _text(self._listening)
            detail = ENDPOINT_STILL_SERVING.format(mgr=self._mgr_id, old=old, url=self.url, addr=addr, port=port)
        return {
            ENDPOINT: {
                "severity": "warning",
                "summary": ENDPOINT_SUMMARY.format(addr=addr, port=port, error=error),
                "count": 1,
                "detail": [detail],
            }
        }

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
        self._server = None
        self._listening = None
        self._serving_fingerprint = None
        self._serving_security = PLAIN.security
        self.url = None
