"""Readiness probes: is the lab's cluster, or one of its services, ready yet; and waiting until it is.

Each probe asks once and answers. A probe through `ceph` raises CephCommandError when the command fails;
wait_for takes that (or an OSError) as "not yet" and asks again until its deadline. An HTTP probe answers
False while nothing answers.
"""

from __future__ import annotations

import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .cephcli import Ceph, CephCommandError
from .config import LabError
from .procs import ProcRef, is_alive
from .security import HttpClient


def wait_for(check: Callable[[], Any], timeout: float, what: str, interval: float = 1.0) -> Any:
    """Poll check() until it returns something truthy; LabError naming `what` after timeout seconds."""
    deadline = time.monotonic() + timeout
    last_error = ""
    while True:
        try:
            result = check()
            if result:
                return result
        except (CephCommandError, OSError) as exc:
            last_error = f" (last error: {exc})"
        if time.monotonic() >= deadline:
            raise LabError(f"timed out after {timeout:.0f} s waiting for {what}{last_error}")
        time.sleep(interval)


def mon_answers(ceph: Ceph) -> bool:
    return bool(ceph("mon", "stat", timeout=5))


def active_mgr(ceph: Ceph) -> str | None:
    """The active mgr's name, once one is active and available."""
    stat = ceph("mgr", "stat", timeout=5)
    return stat.get("active_name") if stat and stat.get("available") else None


def module_runs(ceph: Ceph, module: str) -> bool:
    """The active mgr has `module` (among the available modules its beacon reported) and the mgr map has it
    enabled; LabError if the mgr says it cannot run it. A forced `mgr module enable` is taken for a module
    no mgr has (the mon has not heard of it), so the map alone does not show that it runs."""
    dump = ceph("mgr", "dump", timeout=10)
    if not dump.get("available") or module not in dump.get("modules", []):
        return False
    for mod in dump.get("available_modules", []):
        if mod.get("name") == module:
            if not mod.get("can_run", True):
                raise LabError(f"the mgr cannot run {module}: {mod.get('error_string')}")
            return True
    return False


def osds_up_in(ceph: Ceph, want: int) -> bool:
    stat = ceph("osd", "stat", timeout=10)
    return stat.get("num_up_osds") == want and stat.get("num_in_osds") == want


def pgs_clean(ceph: Ceph) -> bool:
    summary = ceph("pg", "stat", timeout=10)["pg_summary"]
    clean = sum(s["num"] for s in summary.get("num_pg_by_state", []) if s["name"] == "active+clean")
    return summary.get("num_pgs", 0) > 0 and clean == summary["num_pgs"]


def health_ok(ceph: Ceph) -> bool:
    return ceph("health", timeout=10).get("status") == "HEALTH_OK"


def rgw_answers(url: str) -> bool:
    """RGW answers an anonymous S3 ListAllMyBuckets at `url`."""
    try:
        with urllib.request.urlopen(url, timeout=3) as resp:
            return resp.status == 200 and b"ListAllMyBucketsResult" in resp.read()
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def _get(url: str, client: HttpClient | None, timeout: float = 3) -> Any:
    client = client or HttpClient()
    request = urllib.request.Request(url, headers=dict(client.headers))
    return urllib.request.urlopen(request, timeout=timeout, context=client.context)


def http_answers(url: str, client: HttpClient | None = None) -> bool:
    """A GET of `url` (an exporter's metrics) is answered with 200 (over TLS with `client`'s certificate
    and password for a secure lab's perfwatch endpoints)."""
    try:
        with _get(url, client) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


_COLLECTIONS = re.compile(r"^ceph_perfwatch_exporter_collections_total\{[^}]*\} (\S+)$", re.MULTILINE)


def exporter_collected(url: str, client: HttpClient | None = None) -> bool:
    """The perfwatch host exporter at `url` (its /metrics) serves a finished collection: it answers from
    a cache that its background collection fills, with nothing of the daemons before the first one."""
    try:
        with _get(url, client) as resp:
            text = resp.read().decode("utf-8", "replace")
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False
    match = _COLLECTIONS.search(text)
    return match is not None and float(match.group(1)) >= 1


def http_ready(ref: ProcRef, url: str, name: str, log: Path) -> bool:
    """Daemon `name` (the process `ref`) answers 200 at `url` (a /-/ready page); LabError naming its log
    once it has exited."""
    if not is_alive(ref):
        raise LabError(f"{name} (pid {ref.pid}) exited before it was ready on {url}; see {log}")
    return http_answers(url)
