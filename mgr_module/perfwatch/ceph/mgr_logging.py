"""Keep the module's log handlers attached across a failover (Pacific's mgr_module.py logging mixin).

The standby and the active instance log through one root logger, and the mixin's `_unconfigure_logging`
removes every mgr handler from it, whoever added them; a dropped standby instance runs it from `__del__`
when the garbage collector gets to it, long after the active instance set up its own handlers.
`retire_standby_logging` (from `StandbyModule.__init__`) points that teardown at a private logger;
`ensure_logging` (from the active `Module.serve` loop) puts back whatever was taken off anyway.
Why: docs/decisions/failover-logging.md.
"""

import logging
from typing import Any, List

RETIRED_LOGGER = "perfwatch.retired-standby"  # never a parent of any logger the module writes to


def retire_standby_logging(module: Any) -> None:
    """Make `module`'s later `_unconfigure_logging` (its `__del__`) act on a private logger only.

    Its handlers stay on the root logger, so everything it logs is still written; the active
    instance's `_configure_logging` removes them when it starts.
    """
    if getattr(module, "_root_logger", None) is None:
        return  # not a Pacific-style logging mixin: nothing shared to protect
    retired = logging.Logger(RETIRED_LOGGER)  # not registered with logging: nothing else reaches it
    retired.propagate = False
    module._root_logger = retired


def _wanted_handlers(module: Any) -> List[logging.Handler]:
    wanted = []  # type: List[logging.Handler]
    for attr, enabled in (
        ("_mgr_log_handler", True),
        ("_file_log_handler", bool(getattr(module, "log_to_file", False))),
        ("_cluster_log_handler", bool(getattr(module, "log_to_cluster", False))),
    ):
        handler = getattr(module, attr, None)
        if enabled and isinstance(handler, logging.Handler):
            wanted.append(handler)
    return wanted


def ensure_logging(module: Any) -> List[str]:
    """Re-attach the handlers `module` configured that are missing from its root logger.

    Returns the class names of the handlers put back (empty when all were in place), so the caller
    can log that it happened once they are back.
    """
    root = getattr(module, "_root_logger", None)
    if not isinstance(root, logging.Logger):
        return []
    restored = []  # type: List[str]
    for handler in _wanted_handlers(module):
        if handler not in root.handlers:
            root.addHandler(handler)
            restored.append(type(handler).__name__)
    return restored
