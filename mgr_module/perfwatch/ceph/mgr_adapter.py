"""CephAdapter inside ceph-mgr: tell and mon commands through the module's librados handle, maps and
counters through get(); and MgrProgress, the benchmarks' heavy rounds shown in `ceph progress`.

Each command runs in a CallPool thread with a timeout; per OSD one request is outstanding (a second only
after three timeouts, at least 30 s), four to the mons. The handle connects on first use, in one pool
thread; commands asked meanwhile are refused at once (busy). Why: docs/decisions/why-librados-not-send-command.md.

Over 300 lines: one class, the whole seam between perfwatch and the mgr; split, each half would
re-import the other's helpers.
"""

import json
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from mgr_module import MgrModule

from ..common.daemon_counters import counters
from ..common.daemon_counters.fetch_reasons import REASON_BUSY, REASON_DECODE, REASON_ERROR, REASON_TIMEOUT
from .call_pool import Busy, CallPool, TimedOut
from .capacity_view import CapacityView, view_from_payloads
from .commit_latency import COMMIT_COMMAND, commit_reading
from .mgr_pools import PoolMaps
from .osd_map_view import OsdMapView
from .osd_networks import OsdNetwork
from .seam import CephAdapter, FetchError, OsdInfo


class MgrAdapter(PoolMaps, CephAdapter):
    def __init__(self, module: MgrModule, timeout: Callable[[], float]) -> None:
        self.module = module
        self.timeout = timeout  # the request_timeout option, read at each call
        self._lock = threading.Lock()
        self._rados: Any = None  # the module's librados handle, connected on first use
        self._connecting = False  # a thread is connecting it (under _lock to read or set)
        self._calls = CallPool("perfwatch-command")
        self._labeled_failed = False  # the last labeled-counter call failed (warned once, then debug)
        self._map_view = OsdMapView(lambda what: module.get(what), lambda: module.get_osdmap().get_epoch())

    def osds(self) -> List[Tuple[int, bool]]:
        return self._map_view.osds()

    def osd_networks(self) -> List[OsdNetwork]:
        return self._map_view.networks()

    def _librados(self) -> Any:
        with self._lock:  # MgrModule.rados connects on first use: by one thread, the others refused meanwhile
            if self._rados is not None:
                return self._rados
            if self._connecting:
                raise FetchError(REASON_BUSY, "the module's librados handle is still connecting")
            self._connecting = True
        rados = None
        try:
            rados = self.module.rados
        except Exception as exc:
            raise FetchError(REASON_ERROR, "the module's librados handle: {!r}".format(exc)) from exc
        finally:
            with self._lock:  # a failed connect leaves None: the next call connects again
                self._rados, self._connecting = rados, False
        return rados

    def _command(self, key: str, call: Callable[[], Any], timeout: float, what: str, limit: int, retry: bool) -> Any:
        """(r, outbuf bytes, outs) of a librados command call, or FetchError busy/timeout."""
        retry_after = self._retry_after(timeout) if retry else None
        retried = self._retried(what) if retry else None
        try:
            return self._calls.call(key, call, timeout, limit, retry_after, retried)
        except Busy as exc:
            raise FetchError(REASON_BUSY, exc.refusal(what)) from exc
        except FetchError:  # the librados handle could not be had (_librados)
            raise
        except TimedOut as exc:
            raise FetchError(REASON_TIMEOUT, "{}: no answer in {:.0f} s".format(what, timeout)) from exc
        except Exception as exc:  # librados itself failed (rados.Error): the answer is an error all the same
            raise FetchError(REASON_ERROR, "{}: {!r}".format(what, exc)) from exc

    @staticmethod
    def _retry_after(timeout: float) -> float:
        """A second request to an OSD that has not answered the first, once the first has waited this long."""
        return max(3 * timeout, 30.0)

    def _retried(self, what: str) -> Callable[[float], None]:
        def warn(waited: float) -> None:
            self.module.log.warning("%s never answered a request sent %.0f s ago; sending another", what, waited)

        return warn

    def tell_osd_text(self, osd_id: int, command: Dict[str, Any], timeout: float) -> str:
        what = "osd.{}".format(osd_id)
        text = json.dumps(command)
        answer = self._command(
            what, lambda: self._librados().osd_command(osd_id, text, b""), timeout, what, limit=2, retry=True
        )
        return self._osd_answer(what, answer)

    def command_cpu_seconds(self) -> float:
        return self._calls.cpu_seconds()

    def submit_osd_texts(
        self, osd_id: int, commands: Sequence[Dict[str, Any]], timeout: float, done: Callable[[Any], None]
    ) -> None:
        """The commands sent one after the other from one pool thread, which hands the answers to done: one
        hand-over per OSD, where tell_osd_text from a worker has two per command."""
        what = "osd.{}".format(osd_id)
        texts = [json.dumps(command) for command in commands]

        def ask() -> List[str]:
            rados = self._librados()  # in the pool's thread: the first use connects, which may block
            answers = []
            for text in texts:
                try:
                    answer = rados.osd_command(osd_id, text, b"")
                except Exception as exc:  # librados itself failed (rados.Error)
                    raise FetchError(REASON_ERROR, "{}: {!r}".format(what, exc)) from exc
                answers.append(self._osd_answer(what, answer))
            return answers

        try:
            self._calls.submit(what, ask, done, 2, self._retry_after(timeout), self._retried(what))
        except Busy as exc:
            raise FetchError(REASON_BUSY, exc.refusal(what)) from exc

    @staticmethod
    def _osd_answer(what: str, answer: Tuple[int, Any, Any]) -> str:
        """An OSD's answer as text from librados' (r, outbuf, outs), or FetchError."""
        r, outb, outs = answer
        outs = str(outs or "").strip()
        if r != 0:
            raise FetchError(REASON_ERROR, "{}: {} {}".format(what, r, outs))
        text = outb.decode("utf-8", "replace") if isinstance(outb, bytes) else str(outb or "")
        if not text.strip():
            # What a daemon that died (or restarted) while the command ran leaves behind: r 0, no output.
            # Every command perfwatch sends answers JSON, so this is never a real answer.
            raise FetchError(
                REASON_ERROR,
                "{} returned no answer (the daemon may have crashed or restarted){}".format(
                    what, ": " + outs if outs else ""
                ),
            )
        return text

    def tell_osd(self, osd_id: int, command: Dict[str, Any], timeout: float) -> Any:
        text = self.tell_osd_text(osd_id, command, timeout)
        try:
            return json.loads(text)
        except ValueError as exc:
            raise FetchError(REASON_DECODE, "osd.{}: {} in answer {!r}".format(osd_id, exc, text[:80])) from exc

    def rgw_counters(self) -> Dict[str, Dict[str, Dict[str, Any]]]:
        # Feature-detected, never by version:
        # - unlabeled counters: get_all_perf_counters on Pacific, get_unlabeled_perf_counters (same
        #   signature) on Reef 18.2.7 and Tentacle;
        # - labeled counters: get_perf_counters, where its answer is per logger a list of
        #   {"labels", "counters"} instances (Tentacle). Reef 18.2.7 has no labeled-counter call.
        #   Tentacle's RGW keeps list latency in its `rgw_op` logger (counters.py), whose unlabeled
        #   instance the unlabeled call gives too; the labeled call fills in only what that answer lacks,
        #   for releases that give `rgw_op` only as labeled counters (docs/decisions/release-counters.md).
        getter = getattr(self.module, "get_unlabeled_perf_counters", None) or self.module.get_all_perf_counters
        try:
            everything = getter(services=("rgw",))
        except Exception as exc:
            raise FetchError(REASON_ERROR, "mgr perf counters: {!r}".format(exc)) from exc
        out = {daemon: dict(values) for daemon, values in everything.items() if daemon.startswith("rgw.")}
        for daemon, values in self._labeled_counters(("rgw",)).items():
            if daemon.startswith("rgw."):
                merged = counters.flatten_labeled_counters(values)
                merged.update(out.get(daemon, {}))  # the unlabeled call's answer wins where both have it
                out[daemon] = merged
        return out

    def _labeled_counters(self, services: Tuple[str, ...]) -> Dict[str, Dict[str, Any]]:
        """The mgr's labeled counters per daemon where it has that call, else {}. A failure of this call
        only costs the counters it alone has: logged, and the unlabeled ones are still exported."""
        getter = getattr(self.module, "get_perf_counters", None)
        if getter is None or not callable(getter):
            return {}
        try:
            answer = getter(services=services)
        except Exception as exc:
            log = self.module.log.debug if self._labeled_failed else self.module.log.warning
            log("mgr labeled perf counters failed (RGW list latency not exported): %r", exc)
            self._labeled_failed = True
            return {}
        self._labeled_failed = False
        return dict(answer) if isinstance(answer, dict) else {}

    # --- what benchmarks need --------------------------------------------------------------------

    def mon_command(self, command: Dict[str, Any]) -> Any:
        text = json.dumps(dict(command, format="json"))
        what = "mon: {}".format(command["prefix"])
        call = lambda: self._librados().mon_command(text, b"")  # noqa: E731 - connects in the pool's thread
        r, outb, outs = self._command("mon", call, self.timeout(), what, 4, False)
        if r != 0:
            raise FetchError(REASON_ERROR, "{}: {} {}".format(what, r, str(outs or "").strip()))
        answer = outb.decode("utf-8", "replace") if isinstance(outb, bytes) else str(outb or "")
        return json.loads(answer) if answer.strip() else None

    def osd_infos(self) -> List[OsdInfo]:
        up = dict(self.osds())
        host_of: Dict[int, str] = {}
        device_class: Dict[int, str] = {}
        for node in (self.module.get("osd_map_tree") or {}).get("nodes", []):
            if node.get("type") == "host":
                for child in node.get("children", []):
                    if child >= 0:
                        host_of[child] = node["name"]
            elif node.get("type") == "osd":
                device_class[node["id"]] = node.get("device_class", "")
        return [
            OsdInfo(osd, host_of.get(osd, "osd.{}".format(osd)), is_up, device_class.get(osd, ""))
            for osd, is_up in sorted(up.items())
        ]

    def cluster_state(self) -> Tuple[str, Dict[str, int]]:
        health = json.loads(self.module.get("health")["json"])
        states: Dict[str, int] = {}
        for per_pool in (self.module.get("pg_summary") or {}).get("by_pool", {}).values():
            for state, count in per_pool.items():
                states[state] = states.get(state, 0) + count
        return health.get("status", "HEALTH_ERR"), states

    def ping_times(self) -> Dict[str, Any]:
        return self.module.get("osd_ping_times") or {}

    def pool(self, name: str) -> Optional[Tuple[int, int]]:
        for pool in self._pools():
            if pool.get("pool_name") == name:
                return int(pool["pool"]), int(pool["pg_num"])
        return None

    def pool_applications(self, name: str) -> Optional[Dict[str, Dict[str, str]]]:
        for pool in self._pools():
            if pool.get("pool_name") == name:
                return dict(pool.get("application_metadata") or {})
        return None

    def pool_names_ending(self, suffix: str) -> List[str]:
        return sorted(p["pool_name"] for p in self._pools() if p.get("pool_name", "").endswith(suffix))

    def store_entry_limit(self) -> Any:
        """mon_config_key_max_entry_size as the mons' configuration has it (as this mgr's has it when that
        cannot be read), or None when neither can."""
        command = {"prefix": "config get", "who": "mon", "key": "mon_config_key_max_entry_size", "format": "json"}
        try:
            return self.mon_command(command)
        except Exception:
            pass
        try:
            return self.module.get_ceph_option("mon_config_key_max_entry_size")
        except Exception:  # an option unknown to the release, or no such call
            return None

    def store_keys(self, prefix: str) -> Optional[List[str]]:
        """The module's store keys that start with prefix (None: this release cannot list them)."""
        lister = getattr(self.module, "get_store_prefix", None)
        return None if lister is None else list(lister(prefix))

    def pool_max(self) -> int:
        osd_map = self.module.get("osd_map") or {}
        ids = [int(p["pool"]) for p in osd_map.get("pools", [])]  # a lower mark, as sound, if pool_max is absent
        return max([int(osd_map.get("pool_max", 0)), *ids])

    def pool_objects(self, name: str) -> Optional[int]:
        for pool in (self.module.get("df") or {}).get("pools", []):
            if pool.get("name") == name:
                return int((pool.get("stats") or {}).get("objects", 0))
        return None

    def create_pool(self, name: str, pg_num: int) -> None:
        self.module.log.info("creating scratch pool %s with %d PGs", name, pg_num)
        self.mon_command({"prefix": "osd pool create", "pool": name, "pg_num": pg_num})

    def tag_pool(self, name: str, application: str) -> None:
        self.mon_command({"prefix": "osd pool application enable", "pool": name, "app": application})
        deadline = time.monotonic() + self.timeout()
        while application not in (self.pool_applications(name) or {}) and time.monotonic() < deadline:
            time.sleep(0.2)  # the mgr's copy of the OSD map catches up

    def pg_primaries(self, pool_id: int) -> Dict[int, int]:
        out: Dict[int, int] = {}
        prefix = "{}.".format(pool_id)
        for pg in (self.module.get("pg_stats") or {}).get("pg_stats", []):
            pgid = pg.get("pgid", "")
            if pgid.startswith(prefix) and pg.get("acting_primary", -1) >= 0:
                out[int(pgid[len(prefix) :], 16)] = int(pg["acting_primary"])
        return out

    def pg_acting(self, pool_id: int) -> Dict[int, List[int]]:
        """PG number -> its acting set (primary first where the stats say so), from the mgr's PG stats."""
        out: Dict[int, List[int]] = {}
        prefix = "{}.".format(pool_id)
        for pg in (self.module.get("pg_stats") or {}).get("pg_stats", []):
            pgid = pg.get("pgid", "")
            acting = pg.get("acting")
            if pgid.startswith(prefix) and isinstance(acting, list):
                out[int(pgid[len(prefix) :], 16)] = [int(o) for o in acting if isinstance(o, int) and o >= 0]
        return out

    def open_ioctx(self, pool: str) -> Any:
        return self.module.rados.open_ioctx(pool)

    def capacity_view(self) -> CapacityView:
        return view_from_payloads(
            self.module.get("osd_stats"), self.module.get("osd_map"), self.module.get("df"), self.module.get("pg_stats")
        )

    def osd_op_latency(self, osd_id: int) -> Dict[str, float]:
        dump = self.tell_osd(osd_id, {"prefix": "perf dump", "logger": "osd", "counter": "op_latency"}, self.timeout())
        latency = dump.get("osd", {}).get("op_latency", {})
        return {"sum": float(latency.get("sum", 0.0)), "avgcount": float(latency.get("avgcount", 0))}

    def osd_commit_latency(self, osd_id: int) -> Optional[Tuple[float, float]]:
        return commit_reading(self.tell_osd(osd_id, COMMIT_COMMAND, self.timeout()))


class MgrProgress:
    """Heavy rounds in `ceph progress`; a progress module that is off or failing never stops a run."""

    def __init__(self, module: MgrModule) -> None:
        self.module = module

    def _call(self, method: str, *args: Any) -> None:
        try:
            self.module.remote("progress", method, *args)
        except Exception as exc:
            self.module.log.debug("progress %s failed: %s", method, exc)

    def update(self, ev_id: str, message: str, fraction: float) -> None:
        self._call("update", ev_id, message, fraction)

    def complete(self, ev_id: str) -> None:
        self._call("complete", ev_id)

    def fail(self, ev_id: str, message: str) -> None:
        self._call("fail", ev_id, message)
