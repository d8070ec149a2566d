"""The real Module.serve() starting on a mgr store left by an older perfwatch, and on a garbled one: the
start-up survives, the serve loop runs, the good records are kept. ceph-mgr's `mgr_module` is the minimal
stand-in of test_module_config; the cluster behind `get` is empty."""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any

from tests.unit.perfwatch.benchmarks.records.test_store import KINDS, PREFIX, old_kv, old_records
from tests.unit.perfwatch.test_module_config import make, module_class  # noqa: F401  (module_class is a fixture)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve_one_pass(module_class: Any, kv: dict[str, str]) -> tuple[Any, list[BaseException]]:  # noqa: F811
    mod = make(module_class, server_addr="127.0.0.1", server_port=free_port(), collect_interval=3600)
    mod.get = lambda what: {}  # an empty cluster: no OSDs, no pools, no PG stats
    mod.get_store = kv.get
    mod.set_store = lambda key, value: kv.__setitem__(key, value) if value is not None else kv.pop(key, None)
    mod.get_mgr_ip = lambda: "127.0.0.1"
    mod.set_uri = lambda uri: None
    mod.remote = lambda *args: None
    mod.get_all_perf_counters = lambda **kwargs: {}
    errors: list[BaseException] = []

    def serve() -> None:
        try:
            mod.serve()
        except BaseException as exc:  # what must never happen: serve() dying at start-up
            errors.append(exc)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while mod.serve_passes < 1 and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    passes = mod.serve_passes
    mod.shutdown()
    thread.join(20)
    assert not thread.is_alive(), "serve() did not stop"
    assert passes >= 1, f"serve() made no pass of its loop: {errors or mod.records.lines[-5:]}"
    return mod, errors


def test_serve_starts_on_a_store_an_older_perfwatch_wrote(module_class: Any) -> None:  # noqa: F811
    kv = dict(old_kv())
    mod, errors = serve_one_pass(module_class, kv)
    assert errors == []
    assert (
        json.loads(kv[PREFIX + "history/osd"])["data"][: len(old_records()["history/osd"])]
        == old_records()["history/osd"]
    )
    last = mod.board.last_results()
    assert last["osd/write_iops_4k/osd.0"] == (1000.0, "iops") and len(last) >= 2 * len(KINDS) - 2


def test_serve_starts_on_a_garbled_history_and_keeps_the_rest(module_class: Any) -> None:  # noqa: F811
    kv = dict(old_kv())
    osd_runs = old_records()["history/osd"]
    osd_runs.append(dict(osd_runs[0], run_id="osd-20240501T130000-0bad", results=[{"value": "x"}, 7]))
    kv[PREFIX + "history/osd"] = json.dumps(osd_runs)
    kv[PREFIX + "history/rados"] = "{]"
    mod, errors = serve_one_pass(module_class, kv)
    assert errors == []
    kept = json.loads(kv[PREFIX + "history/osd"])["data"]
    assert [r["run_id"] for r in kept[: len(osd_runs)]] == [r["run_id"] for r in osd_runs]
    assert kept[len(osd_runs) - 1]["results"] == [], "the bad results dropped, their run kept"
    assert "osd/write_iops_4k/osd.0" not in mod.board.last_results(), "the last osd run has no results left"
    for kind in ("rbd", "rgw", "net"):  # the other records are kept as they were
        old = old_records()["history/" + kind]
        assert json.loads(kv[PREFIX + "history/" + kind])["data"][: len(old)] == old
    aside = [k for k in kv if k.startswith(PREFIX + "aside/history/rados/")]
    assert len(aside) == 1 and kv[aside[0]] == "{]"
    problems = [line for line in mod.records.lines if line.startswith(("WARNING", "ERROR"))]
    assert any("history/rados" in line for line in problems), problems
