"""The standby mgr's entry point: it answers the metrics endpoint so scrapes of every mgr see who is active."""

import threading
from typing import Any, List, Tuple

from mgr_module import MgrStandbyModule, Option

from . import config, mgr_logging, options, validation
from .module import MODULE_OPTIONS
from .server import HttpServer
from .web import standby_app


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

    def serve(self) -> None:
        endpoint = config.listen_endpoint(self.get_localized_module_option)
        refused = validation.check("server_addr", endpoint["addr"])
        if refused:
            self.log.error("standby does not listen: option server_addr refused: %s", refused)
            return
        app = standby_app(self.get_mgr_id(), self._behaviour, self.get_active_uri)
        server = HttpServer(app, endpoint["addr"], endpoint["port"], self.log)
        try:
            server.start()
        except OSError as exc:
            self.log.error("standby cannot listen on %s:%s: %s", endpoint["addr"], endpoint["port"], exc)
            return
        self._stop.wait()
        server.stop()

    def shutdown(self) -> None:
        self._stop.set()
