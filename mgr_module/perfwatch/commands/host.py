"""CommandHost: the part of Module a command may read. Each command group's class inherits it, so the
commands are typed against what Module hands them, not against its privates."""

from typing import TYPE_CHECKING, Any, Dict, Optional

if TYPE_CHECKING:  # pragma: no cover - names for the type checker only
    from ..benchmarks.runner import Runner
    from ..collection.collector import Collector
    from ..endpoint.serving import Endpoint
    from ..load.attribution import LoadAttribution
    from ..options.config import Config


class CommandHost:
    """Mixed into Module before MgrModule. Module sets each attribute in __init__ (serve() replaces the
    None ones on the active mgr); the methods are MgrModule's or Module's, declared for the type checker
    only so that none shadows the real one."""

    config_in_force: "Config"  # the options in force: refused values replaced (options/validation.py)
    config_errors: Dict[str, str]  # option -> why its value is refused
    serve_started_at: float
    serve_passes: int
    serve_last_pass_at: Optional[float]
    collector: "Optional[Collector]"
    metrics_endpoint: "Optional[Endpoint]"
    runner: "Optional[Runner]"
    load: "Optional[LoadAttribution]"

    if TYPE_CHECKING:  # pragma: no cover
        log: Any
        version: str

        def get_mgr_id(self) -> str: ...
        def get_store(self, key: str, default: Optional[str] = None) -> Optional[str]: ...
        def set_store(self, key: str, val: Optional[str]) -> None: ...
        def is_active_mgr(self) -> bool: ...
        def update_health(self) -> None: ...
        def secrets_changed(self) -> None: ...
