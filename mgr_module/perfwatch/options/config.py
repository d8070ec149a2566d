"""The options in force, read once: one typed, immutable Config built from the values set (declared.py
declares them) with the refused ones replaced (validation.py says how). Pure: no Ceph imports."""

from typing import Any, Callable, Dict, NamedTuple, Tuple

from . import declared as options
from . import validation
from .shown import shown


class Config(NamedTuple):
    """One field per option of options.OPTIONS, in their order, typed as options.coerce returns them."""

    server_addr: str
    server_port: int
    ssl: bool
    request_timeout: int
    max_requests_in_flight: int
    standby_behaviour: str
    standby_error_status_code: int
    collect_interval: int
    collect_cpu_budget_percent: float
    daemon_counters_source: str
    scratch_pool: str
    scratch_namespace: str
    scratch_pool_create: bool
    scratch_pool_pg_num: int
    scratch_pool_pgs_per_osd: int
    rados_probe_interval: int
    rados_probe_osds_per_round: int
    rgw_probe_interval: int
    net_probe_interval: int
    osd_bench_interval: int
    rbd_bench_interval: int
    heavy_bench_window: str
    max_osds_per_host: int
    bench_deadline: int
    abort_client_latency_ms: int
    regression_fraction: float
    baseline_window: int
    baseline_min_results: int
    bench_export_baselines: bool
    probe_regression_runs: int
    history_limit: int
    rgw_s3_endpoint: str
    rgw_s3_access_key: str
    rgw_s3_secret_key: str
    rgw_s3_bucket: str
    rgw_s3_region: str
    load_attribution: bool
    load_client_sample: int
    load_top_clients: int
    load_top_per_osd: int
    load_osd_series_max: int

    def as_dict(self) -> Dict[str, Any]:
        """Option name -> value: for the benchmarks, whose kinds name the options they read."""
        return dict(zip(self._fields, self))

    def redacted(self) -> Dict[str, Any]:
        """Option name -> value fit to show or log: the secrets replaced by whether they are set."""
        return options.redacted(self.as_dict())

    def __repr__(self) -> str:  # never the secrets, wherever a Config is logged
        return "Config({})".format(", ".join("{}={!r}".format(k, v) for k, v in self.redacted().items()))


def defaults() -> Config:
    return Config(**options.defaults())


def read(get: Callable[[str], Any], get_localized: Callable[[str, Any], Any]) -> Tuple[Config, Dict[str, str]]:
    """(the Config in force, option -> why its value is refused) from the mgr's option getters:
    get(name) for the module's values, get_localized(name, default) for this mgr's own server_addr."""
    defaults = options.defaults()
    raw: Dict[str, Any] = {}
    not_typed: Dict[str, str] = {}  # values of another type than the option's, should one pass Ceph's check
    for name, default in defaults.items():
        value = get(name)
        try:
            raw[name] = options.coerce(name, value)
        except (TypeError, ValueError, OverflowError):
            raw[name] = default
            not_typed[name] = "{} is not {}".format(
                shown(str(value)), _TYPE_WORDS.get(options.spec(name)["type"], "valid")
            )
    raw["server_addr"] = str(get_localized("server_addr", raw["server_addr"]))  # may be set per mgr
    values, refused = validation.effective(raw, defaults, not_typed)
    return Config(**values), refused


_TYPE_WORDS = {
    "int": "a whole number",
    "uint": "a whole number",
    "secs": "a whole number of seconds",
    "size": "a whole number of bytes",
    "float": "a finite number",
}


def listen_endpoint(get_localized: Callable[[str, Any], Any]) -> Dict[str, Any]:
    """{"addr", "port"} the metrics endpoint of this mgr listens on, from get_localized(name, default),
    which honours per-mgr values (mgr/perfwatch/<id>/server_port); not validated here."""
    return {
        "addr": str(get_localized("server_addr", options.defaults()["server_addr"])),
        "port": options.coerce("server_port", get_localized("server_port", None)),
    }
