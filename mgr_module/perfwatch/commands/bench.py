"""`ceph perfwatch bench ...`: run, status, cancel, history, reset-baseline and schedule. What each does
with the Runner is in bench_replies.py."""

import functools
import inspect
from typing import Any, Callable, List, Optional

from mgr_module import HandleCommandResult

from ..benchmarks.runner import Runner
from ..ceph import mgr_compat
from . import bench_replies
from .host import CommandHost
from .output import OutputFormat

CommandMethod = Callable[..., HandleCommandResult]


def with_runner(method: CommandMethod) -> CommandMethod:
    """A bench command: answers EAGAIN until serve() has built the runner, and is handed the runner after
    `self`. The mgr (CLICommand, through inspect.getfullargspec) reads a command's arguments and their
    types from its __signature__: that of `method`, less `runner`."""

    @functools.wraps(method)
    def guarded(self: Any, *args: Any, **kwargs: Any) -> HandleCommandResult:
        runner = self.runner
        if runner is None:
            return HandleCommandResult(*bench_replies.not_ready())
        return method(self, runner, *args, **kwargs)

    signature = inspect.signature(method)
    params = [p for p in signature.parameters.values() if p.name != "runner"]
    guarded.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    guarded.__annotations__ = {k: v for k, v in method.__annotations__.items() if k != "runner"}
    # Reef and later unwrap decorated commands through __wrapped__ (mgr_module._extract_target_func) and
    # would read `runner` from `method`: without it they read `guarded`, as Pacific does.
    del guarded.__wrapped__  # type: ignore[attr-defined]
    return guarded


class BenchCommands(CommandHost):
    @mgr_compat.write_command("perfwatch bench run")
    @with_runner
    def cmd_bench_run(
        self,
        runner: Runner,
        kind: str = "osd",
        osd: Optional[List[int]] = None,
        seconds: Optional[int] = None,
        queue_depth: Optional[int] = None,
        writes_4k: Optional[int] = None,
        mib_4m: Optional[int] = None,
        keys: Optional[int] = None,
        shards: Optional[int] = None,
        image_mib: Optional[int] = None,
        format: OutputFormat = OutputFormat.plain,
    ) -> HandleCommandResult:
        """Start a benchmark run now (kinds: osd, rados, rbd, rgw, net); returns its run id at once"""
        params = dict(seconds=seconds, queue_depth=queue_depth, writes_4k=writes_4k, mib_4m=mib_4m, keys=keys)
        params.update(shards=shards, image_mib=image_mib)
        return HandleCommandResult(*bench_replies.run(runner, kind, osd, params, format))

    @mgr_compat.read_command("perfwatch bench status")
    @with_runner
    def cmd_bench_status(self, runner: Runner, format: OutputFormat = OutputFormat.plain) -> HandleCommandResult:
        """Show running and recent benchmark runs, regressions and scratch data awaiting cleanup"""
        return HandleCommandResult(*bench_replies.status(runner, format))

    @mgr_compat.write_command("perfwatch bench cancel")
    @with_runner
    def cmd_bench_cancel(
        self, runner: Runner, run_id: Optional[str] = None, format: OutputFormat = OutputFormat.plain
    ) -> HandleCommandResult:
        """Cancel one running benchmark, or all of them; their scratch data is removed"""
        return HandleCommandResult(*bench_replies.cancel(runner, run_id, format))

    @mgr_compat.read_command("perfwatch bench history")
    @with_runner
    def cmd_bench_history(
        self,
        runner: Runner,
        kind: Optional[str] = None,
        osd: Optional[int] = None,
        limit: int = 10,
        format: OutputFormat = OutputFormat.plain,
    ) -> HandleCommandResult:
        """Show past benchmark runs and their results, newest last"""
        return HandleCommandResult(*bench_replies.history(runner, kind, osd, limit, format))

    @mgr_compat.write_command("perfwatch bench reset-baseline")
    @with_runner
    def cmd_bench_reset_baseline(
        self,
        runner: Runner,
        kind: Optional[str] = None,
        osd: Optional[int] = None,
        format: OutputFormat = OutputFormat.plain,
    ) -> HandleCommandResult:
        """Forget baselines and regressions (all, or of a kind and/or OSD), e.g. after replacing a device"""
        result = bench_replies.reset_baseline(runner, kind, osd, format)
        self.update_health()
        return HandleCommandResult(*result)

    @mgr_compat.read_command("perfwatch bench schedule")
    @with_runner
    def cmd_bench_schedule(self, runner: Runner, format: OutputFormat = OutputFormat.plain) -> HandleCommandResult:
        """Show each benchmark kind, its interval option, window and last run"""
        return HandleCommandResult(*bench_replies.schedule(runner, format))
