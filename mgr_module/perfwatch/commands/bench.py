"""The guard of the bench commands: they need the runner that serve() builds."""

import functools
import inspect
from typing import Any, Callable

from mgr_module import HandleCommandResult

from ..benchmarks import replies as commands

CommandMethod = Callable[..., HandleCommandResult]


def with_runner(method: CommandMethod) -> CommandMethod:
    """A bench command: answers EAGAIN until serve() has built the runner, and is handed the runner after
    `self`. The mgr (CLICommand, through inspect.getfullargspec) reads a command's arguments and their
    types from its __signature__: that of `method`, less `runner`."""

    @functools.wraps(method)
    def guarded(self: Any, *args: Any, **kwargs: Any) -> HandleCommandResult:
        runner = self.runner
        if runner is None:
            return HandleCommandResult(*commands.not_ready())
        return method(self, runner, *args, **kwargs)

    signature = inspect.signature(method)
    params = [p for p in signature.parameters.values() if p.name != "runner"]
    guarded.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    guarded.__annotations__ = {k: v for k, v in method.__annotations__.items() if k != "runner"}
    # Reef and later unwrap decorated commands through __wrapped__ (mgr_module._extract_target_func) and
    # would read `runner` from `method`: without it they read `guarded`, as Pacific does.
    del guarded.__wrapped__  # type: ignore[attr-defined]
    return guarded
