"""The real Module.serve() when server_addr is changed to an address this host cannot bind (192.0.2.1,
TEST-NET-1): /metrics keeps answering on the old address, `perfwatch status` says why and where, and
PERFWATCH_ENDPOINT sits beside the other checks until the endpoint listens where configured. Only
127.0.0.1 is ever sent to. ceph-mgr's `mgr_module` is the minimal stand-in of test_module_config."""

from __future__ import annotations

import contextlib
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.unit.perfwatch.test_module_config import make, module_class, status  # noqa: F401  (module_class is a fixture)
from tests.unit.perfwatch.test_module_serve_startup import free_port


def wait_for(what: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 20
    while not what():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def scrape(port: int) -> int:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
        return int(resp.status)


@contextlib.contextmanager
def serving_module(mod: Any) -> Iterator[Any]:
    """mod (test_module_config.make's) running serve() in a thread on an empty cluster, stopped after."""
    mod.get = lambda what: {}  # an empty cluster
    mod.get_mgr_ip = lambda: "127.0.0.1"
    mod.uris = []
    mod.set_uri = mod.uris.append
    mod.remote = lambda *args: None
    mod.get_all_perf_counters = lambda **kwargs: {}
    thread = threading.Thread(target=mod.serve, daemon=True)
    thread.start()
    wait_for(lambda: mod.serve_passes >= 1)
    try:
        yield mod
    finally:
        mod.shutdown()
        thread.join(20)
        assert not thread.is_alive(), "serve() did not stop"


@pytest.fixture
def serving(module_class: Any) -> Iterator[tuple[Any, int]]:  # noqa: F811
    port = free_port()
    mod = make(module_class, server_addr="127.0.0.1", server_port=port, collect_interval=3600)
    mod.get_store = {}.get
    mod.set_store = lambda key, value: None
    with serving_module(mod):
        yield mod, port


def next_pass(mod: Any) -> None:
    passes = mod.serve_passes
    mod.config_notify()  # as the mgr calls it after `ceph config set`; wakes the loop
    wait_for(lambda: mod.serve_passes > passes)


def test_an_unbindable_server_addr_keeps_metrics_served_and_raises_a_check(serving: tuple[Any, int]) -> None:
    mod, port = serving
    assert scrape(port) == 200 and mod.uris == [f"http://127.0.0.1:{port}/"]
    mod.values["server_addr"] = "192.0.2.1"
    mod.values["rgw_s3_region"] = "US EAST"  # another check, to see both side by side
    next_pass(mod)
    assert scrape(port) == 200, "the old address still answers"
    endpoint = status(mod)["endpoint"]
    assert endpoint["url"] == f"http://127.0.0.1:{port}/"
    assert endpoint["error"].startswith(f"cannot listen on 192.0.2.1:{port}: ")
    assert endpoint["error"].endswith(f"still serving on 127.0.0.1:{port} (http://127.0.0.1:{port}/)")
    checks = mod.health[-1]
    assert set(checks) == {"PERFWATCH_CONFIG_INVALID", "PERFWATCH_ENDPOINT"}
    assert checks["PERFWATCH_ENDPOINT"]["summary"].startswith(f"perfwatch cannot listen on 192.0.2.1:{port}: ")
    assert f"still serves on 127.0.0.1:{port}" in checks["PERFWATCH_ENDPOINT"]["detail"][0]
    mod.values["server_addr"] = "127.0.0.1"
    next_pass(mod)
    assert set(mod.health[-1]) == {"PERFWATCH_CONFIG_INVALID"}
    assert status(mod)["endpoint"] == {
        "url": f"http://127.0.0.1:{port}/",
        "error": None,
        "security": "plain HTTP, no auth",
    }
    assert scrape(port) == 200
