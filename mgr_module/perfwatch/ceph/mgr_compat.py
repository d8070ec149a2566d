"""The parts of ceph-mgr's Python API that differ between the releases perfwatch runs on, found by
feature detection (what `mgr_module` has), never by version strings.

Commands: Pacific and Reef have one registry for the whole mgr, `mgr_module.CLICommand`, filled by
`CLIReadCommand` / `CLIWriteCommand`; Tentacle has neither, and each module sets its own registry
(`CLICommandBase.make_registry_subtype(name)`) as its `CLICommand` class attribute. Here `CLICommand` is
whichever this mgr has; `read_command` and `write_command` declare a command in it.
Why: docs/decisions/release-counters.md#beyond-counters-the-mgrs-python-api.
"""

from typing import Any, Callable, Tuple, TypeVar

import mgr_module

F = TypeVar("F", bound=Callable[..., Any])
Decorator = Callable[[F], F]

REGISTRY_NAME = "PerfwatchCLICommand"


def _registry(mgr: Any) -> Any:
    """The command registry class perfwatch declares its commands in, for this mgr_module."""
    if hasattr(mgr, "CLIReadCommand") and hasattr(mgr, "CLICommand"):
        return mgr.CLICommand  # Pacific .. Squid: the mgr-wide registry
    base = getattr(mgr, "CLICommandBase", None)
    if base is not None and hasattr(base, "make_registry_subtype"):
        return base.make_registry_subtype(REGISTRY_NAME)  # Tentacle: one registry per module
    raise ImportError("mgr_module has neither CLIReadCommand nor CLICommandBase.make_registry_subtype")


def decorators(mgr: Any, registry: Any) -> Tuple[Callable[[str], Any], Callable[[str], Any]]:
    """(read, write): the decorator factories that declare a command in `registry`."""
    if registry is getattr(mgr, "CLICommand", None) and hasattr(mgr, "CLIWriteCommand"):
        return mgr.CLIReadCommand, mgr.CLIWriteCommand
    return registry.Read, registry.Write


CLICommand = _registry(mgr_module)
_read, _write = decorators(mgr_module, CLICommand)


def read_command(prefix: str) -> Decorator:
    """Declare a read-only (`r`) command of the module."""
    return _read(prefix)  # type: ignore[no-any-return]


def write_command(prefix: str) -> Decorator:
    """Declare a command that changes state (`w`)."""
    return _write(prefix)  # type: ignore[no-any-return]
