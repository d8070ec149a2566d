"""Running the host's own tools (tc, ip) with a time limit: their stdout, or an error that says why."""

import functools
import shutil
import subprocess
from typing import Callable, List, Optional

ToolRunner = Callable[[List[str]], str]  # the tool's arguments -> its stdout; raises on failure


def run_tool(name: str, timeout: float, args: List[str]) -> str:
    proc = subprocess.run(
        [name, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        universal_newlines=True,
        timeout=timeout,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError("{} {}: {}".format(name, " ".join(args), proc.stderr.strip() or proc.returncode))
    return proc.stdout


def runner(name: str, timeout: float) -> Optional[ToolRunner]:
    """A runner of `name` when it is installed; None when it is not (the caller does without)."""
    return functools.partial(run_tool, name, timeout) if shutil.which(name) else None
