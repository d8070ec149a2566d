"""The standby mgr's entry point: it answers the metrics endpoint so scrapes of every mgr see who is active."""

import threading
from typing import Any, List, Optional, Tuple

from mgr_module import MgrStandbyModule, Option

from .ceph import mgr_logging
from .common.server import HttpServer
from .common.server.security import Security
from .endpoint import tls_auth
from .endpoint.pages import standby_app
from .module import MODULE_OPTIONS
from .options import config, validation
from .options import declared as options

RECHECK = 30.0  # seconds between looks at the stored certificate, key and users


class StandbyModule(MgrStandbyModule):
    """On a standby mgr: answer the endpoint so scrapes of every mgr see who is active."""

    MODULE_OPTIONS: List[Option] = MODULE_OPTIONS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Its __del__ (run by the garbage collector after a promotion) must not strip the handlers of the
        # active instance that replaces it: both share the interpreter's root logger (mgr_logging.py).
        mgr_logging.retire_standby_logging(self)
        self._stop = threading.Event()

    def _behaviour(self) -> Tuple[str, int]:
        mode = str(self.get_module_option("standby_behaviour"))
        code = options.coerce("standby_error_status_code", self.get_module_option("standby_error_status_code"))
        return mode, code

    def _security(self) -> tls_auth.Wanted:
        ssl_on = bool(options.coerce("ssl", self.get_module_option("ssl")))
        return tls_auth.build(tls_auth.inputs(ssl_on, self.get_localized_store, self.get_store))

    def serve(self) -> None:
        endpoint = config.listen_endpoint(self.get_localized_module_option)
        refused = validation.check("server_addr", endpoint["addr"])
        if refused:
            self.log.error("standby does not listen: option server_addr refused: %s", refused)
            return
        app = standby_app(self.get_mgr_id(), self._behaviour, self.get_active_uri)
        server: Optional[HttpServer] = None
        serving = ""  # the fingerprint of the security it serves with
        while True:  # as the active one: TLS and users as stored, looked at again every RECHECK seconds
            try:
                wanted = self._security()
            except Exception:  # build() does not raise; reading the store might
                self.log.exception("standby: cannot read the TLS and auth settings")
                wanted = tls_auth.Wanted(Security(), "", "settings unreadable")
            if wanted.fingerprint != serving or (server is None and wanted.error is None):
                if server is not None:
                    server.stop()
                    server = None
                serving = wanted.fingerprint
                if wanted.error is not None:  # nothing rather than plain HTTP
                    self.log.error("standby does not listen: %s", wanted.error)
                else:
                    server = HttpServer(app, endpoint["addr"], endpoint["port"], self.log, security=wanted.security)
                    try:
                        server.start()
                    except OSError as exc:  # tried again at the next look
                        self.log.error("standby cannot listen on %s:%s: %s", endpoint["addr"], endpoint["port"], exc)
                        server = None
            if self._stop.wait(RECHECK):
                break
        if server is not None:
            server.stop()

    def shutdown(self) -> None:
        self._stop.set()
