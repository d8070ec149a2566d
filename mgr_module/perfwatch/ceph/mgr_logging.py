"""Keep the module's log handlers attached across a failover (Pacific's mgr_module.py logging mixin).

Both classes of a module, the standby and the active one, run in the same Python sub-interpreter of
a mgr and log through its one root logger. `MgrModuleLoggingMixin._configure_logging` adds the
instance's own CPlusPlusHandler (and, when enabled, FileHandler and ClusterLogHandler) to that root
logger; `_unconfigure_logging` removes *every* handler of those classes from it, whoever added them.
Each handler keeps a reference to its instance and the instance to its handlers, so an instance is
freed only by Python's cyclic garbage collector, at a moment nobody chooses.

On promotion the mgr shuts the standby instance down and drops it, then builds the active instance,
whose `_configure_logging` takes the standby's handlers off the root logger. From then on the
standby instance is unreachable garbage, and when the collector gets to it (seconds or many minutes
later) `MgrStandbyModule.__del__` runs `_unconfigure_logging` and removes the active instance's
handlers: the new active mgr logs nothing more from the module.

`retire_standby_logging` (from `StandbyModule.__init__`, once the mixin has set logging up) points
the standby instance's teardown at a logger of its own, so its `__del__` can no longer touch the
shared root logger. A standby instance uses `_root_logger` for nothing else (it never reconfigures
its logging), so it logs as before.
`ensure_logging` (from the active `Module.serve` loop) puts back the active instance's handlers if
anything took them off anyway, and says so.
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
