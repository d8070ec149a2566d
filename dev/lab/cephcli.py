"""The `ceph` command line (and the other Ceph tools: `rbd`, `rados`) against the lab, with a timeout on
every call. A lab that runs its Ceph from a rootfs has wrappers of these tools in `<lab>/bin` (mountns.py):
`tool` picks the lab's own when it has them, so the CLI is always the release the cluster runs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, Protocol


class CephCommandError(Exception):
    def __init__(self, argv: list[str], returncode: int, stderr: str) -> None:
        super().__init__(f"`{' '.join(argv)}` exited {returncode}: {stderr.strip()[-500:]}")
        self.returncode = returncode
        self.stderr = stderr


class Ceph(Protocol):
    """The `ceph` command against one cluster, as `run` with its conf bound (Lab.ceph is one)."""

    def __call__(self, *args: str, timeout: float = ..., as_json: bool = ...) -> Any: ...


def tool(conf: Path, name: str) -> str:
    """The lab's own wrapper of Ceph tool `name` (beside ceph.conf, in bin/) when it has one, else the
    machine's."""
    wrapper = conf.parent / "bin" / name
    return str(wrapper) if wrapper.exists() else name


def run(conf: Path, *args: str, timeout: float = 30.0, as_json: bool = True, inbuf: str | None = None) -> Any:
    argv = [tool(conf, "ceph"), "-c", str(conf), "--connect-timeout", str(max(1, int(timeout))), *args]
    if as_json:
        argv += ["--format", "json"]
    return _call(argv, timeout, as_json, inbuf)


def run_tool(name: str, conf: Path, *args: str, timeout: float = 60.0, as_json: bool = True) -> Any:
    """Another Ceph command line tool (`rbd`, `rados`) against the lab; JSON when it was asked for."""
    return _call([tool(conf, name), "-c", str(conf), *args], timeout, as_json, None)


def _call(argv: list[str], timeout: float, as_json: bool, inbuf: str | None) -> Any:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout + 5, input=inbuf)
    except subprocess.TimeoutExpired as exc:
        raise CephCommandError(argv, -1, f"timed out after {timeout:.0f} s") from exc
    if proc.returncode != 0:
        raise CephCommandError(argv, proc.returncode, proc.stderr)
    if not as_json:
        return proc.stdout
    out = proc.stdout.strip()
    return json.loads(out) if out else None
