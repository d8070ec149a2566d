"""The module's options as plain data: module.py turns them into MgrModule Options.

Kept free of Ceph imports so tests can check every option is typed, described and has a default
inside its own bounds.

Over 300 lines: one table, an entry per option with its type, bounds and description, and the few
functions that read it; the README's options table is generated from it.
"""

import math
from typing import Any, Dict, List

OptionSpec = Dict[str, Any]

OPTIONS: List[OptionSpec] = [
    {
        "name": "server_addr",
        "type": "str",
        "default": "::",
        "desc": "Address the metrics endpoint listens on ('::' is every address, IPv4 too)",
        "long_desc": "An IPv4 or IPv6 address. Set per mgr with `mgr/perfwatch/<mgr id>/server_addr`. "
        "Any other value is refused (PERFWATCH_CONFIG_INVALID) and the endpoint stays where it was.",
        "runtime": True,
    },
    {
        "name": "server_port",
        "type": "int",
        "default": 9284,
        "min": 1024,
        "max": 65535,
        "desc": "Port of the metrics endpoint (Ceph's prometheus module has 9283)",
        "long_desc": "Set per mgr with `mgr/perfwatch/<mgr id>/server_port`, e.g. when two mgrs share a host.",
        "runtime": True,
    },
    {
        "name": "ssl",
        "type": "bool",
        "default": False,
        "desc": "Serve the metrics endpoint over HTTPS (certificate: ceph perfwatch set-ssl-certificate -i)",
        "long_desc": "The certificate and key come from the mgr store: `ceph perfwatch set-ssl-certificate "
        "[<mgr id>] -i cert.pem` and `ceph perfwatch set-ssl-certificate-key [<mgr id>] -i key.pem` (config-keys "
        "`mgr/perfwatch/crt` and `mgr/perfwatch/key`, or `mgr/perfwatch/<mgr id>/crt` and `.../key`). With ssl "
        "on and no certificate the endpoint serves nothing (never plain HTTP) and PERFWATCH_ENDPOINT says why. "
        "`ceph perfwatch set-ssl-client-ca -i ca.pem` makes clients present a certificate that CA signed; "
        "`ceph perfwatch set-basic-auth <user> -i password-file` asks for a password.",
        "runtime": True,
    },
    {
        "name": "request_timeout",
        "type": "secs",
        "default": 10,
        "min": 1,
        "max": 300,
        "desc": "Seconds to wait for one daemon's answer before counting it as a timeout",
        "runtime": True,
    },
    {
        "name": "max_requests_in_flight",
        "type": "int",
        "default": 8,
        "min": 1,
        "max": 128,
        "desc": "Requests to daemons outstanding at once during a collection",
        "runtime": True,
    },
    {
        "name": "standby_behaviour",
        "type": "str",
        "default": "default",
        "enum_allowed": ["default", "error"],
        "desc": "What a standby mgr answers on /metrics: an empty 200 (default) or standby_error_status_code",
        "runtime": True,
    },
    {
        "name": "standby_error_status_code",
        "type": "int",
        "default": 500,
        "min": 400,
        "max": 599,
        "desc": "HTTP status a standby answers /metrics with when standby_behaviour is 'error'",
        "runtime": True,
    },
    {
        "name": "collect_interval",
        "type": "secs",
        "default": 30,
        "min": 5,
        "max": 3600,
        "desc": "Seconds between two collections of daemon counters",
        "long_desc": "Every interval each up OSD is asked for 'perf dump' (its mempools too). "
        "Shorter intervals cost more requests to every OSD.",
        "runtime": True,
    },
    {
        "name": "collect_cpu_budget_percent",
        "type": "float",
        "default": 5.0,
        "min": 0.01,
        "max": 100.0,
        "desc": "Most CPU the collection may take, in percent of one core: beyond it collections are put off",
        "long_desc": "A collection that took more CPU than this share of the time since it began puts off the "
        "next ones (passes of the module's loop, every collect_interval and at an option change; "
        "ceph_perfwatch_collections_deferred_total counts them) until it is back within it. The benchmarks and "
        "load attribution keep their schedule; their results reach /metrics with the next collection. "
        "Reading the OSDs' counters costs about 0.27 ms "
        "of CPU an OSD (10,000 OSDs: 2.7 s, every other pass at 30 s and 5 %); when collections are put off, "
        "daemon_counters_source=exporters moves that work to the hosts. 100 never puts one off.",
        "runtime": True,
    },
    {
        "name": "daemon_counters_source",
        "type": "str",
        "default": "module",
        "enum_allowed": ["module", "exporters"],
        "desc": "Who reads the OSDs' counters: this module (default) or the host exporters",
        "long_desc": "'exporters': the module stops asking OSDs for 'perf dump' and "
        "leaves them to the perfwatch host exporter of each OSD host, run with --daemon-counters (the same "
        "metric names); for large clusters, where one mgr should not collect and serve every OSD's counters. "
        "Every OSD host then needs such an exporter: an OSD whose counters nobody exports is an input "
        "missing to the rules.",
        "runtime": True,
    },
]


def _secs(name: str, default: int, low: int, high: int, desc: str) -> OptionSpec:
    return {"name": name, "type": "secs", "default": default, "min": low, "max": high, "desc": desc, "runtime": True}


def _int(name: str, default: int, low: int, high: int, desc: str) -> OptionSpec:
    return {"name": name, "type": "int", "default": default, "min": low, "max": high, "desc": desc, "runtime": True}


BENCH_OPTIONS: List[OptionSpec] = [
    {
        "name": "scratch_pool",
        "type": "str",
        "default": "perfwatch",
        "runtime": True,
        "desc": "Pool where benchmarks write their scratch objects and images",
        "long_desc": "1-128 characters, no '/', spaces or control characters. A refused name is not used: "
        "the default pool is, and only if it exists (it is not created).",
    },
    {
        "name": "scratch_namespace",
        "type": "str",
        "default": "perfwatch",
        "runtime": True,
        "desc": "Namespace of the scratch objects within the scratch pool",
        "long_desc": "1-128 characters, no '/', spaces or control characters; a refused name is replaced "
        "by the default.",
    },
    {
        "name": "scratch_pool_create",
        "type": "bool",
        "default": True,
        "runtime": True,
        "desc": "Create the scratch pool when it does not exist (else benchmarks that write refuse to run)",
    },
    _int(
        "scratch_pool_pg_num",
        32,
        8,
        4096,
        "Least PGs of the scratch pool, a power of two (created so; grown with the cluster)",
    ),
    _int("scratch_pool_pgs_per_osd", 8, 0, 16, "PG replicas the scratch pool may add per OSD it reaches (0: no more)"),
    _secs("rados_probe_interval", 60, 0, 86400, "Seconds between light rados latency probes (0: off)"),
    _int("rados_probe_osds_per_round", 1000, 1, 10000, "OSDs a light rados probe measures at most, oldest first"),
    _secs("rgw_probe_interval", 300, 0, 86400, "Seconds between light bucket-index probes (0: off)"),
    _secs("net_probe_interval", 60, 0, 86400, "Seconds between readings of heartbeat ping times (0: off)"),
    _secs("osd_bench_interval", 0, 0, 31536000, "Seconds between scheduled osd bench rounds (0: on command only)"),
    _secs("rbd_bench_interval", 0, 0, 31536000, "Seconds between scheduled rbd rounds (0: on command only)"),
    {
        "name": "heavy_bench_window",
        "type": "str",
        "default": "",
        "runtime": True,
        "desc": "Local time window HH:MM-HH:MM for scheduled heavy rounds (empty: any time)",
        "long_desc": "Hours 00-23, minutes 00-59; the window may wrap midnight (22:00-06:00) but not start "
        "where it ends (empty is any time). Any other value is refused (PERFWATCH_CONFIG_INVALID) and no "
        "heavy round is scheduled until it is fixed.",
    },
    _int("max_osds_per_host", 1, 1, 64, "OSDs of one host benchmarked at the same time in a heavy round"),
    _secs("bench_deadline", 600, 10, 7200, "Hard deadline of one benchmark run, in seconds"),
    _int(
        "abort_client_latency_ms",
        200,
        1,
        60000,
        "Abort a heavy round when client op latency on its OSDs averages above this (ms) during a step",
    ),
    {
        "name": "regression_fraction",
        "type": "float",
        "default": 0.5,
        "min": 0.05,
        "max": 0.95,
        "runtime": True,
        "desc": "A result below this fraction of its baseline, or of its peers', is a regression",
    },
    _int("baseline_window", 10, 3, 100, "Results per OSD, kind and metric in the rolling median baseline"),
    _int("baseline_min_results", 3, 1, 100, "Results needed before a baseline is used"),
    {
        "name": "bench_export_baselines",
        "type": "bool",
        "default": True,
        "runtime": True,
        "desc": "Export each result's baseline beside it (one more series per OSD and benchmark metric)",
        "long_desc": "Off: the endpoint carries each OSD's last results and its regressions, not their "
        "baselines (six series fewer per OSD, 60,000 at 10,000 OSDs); regressions are judged and flagged all "
        "the same, but the rules' ratios of results to baselines and the dashboards' baseline lines stay "
        "empty. For large clusters, beside daemon_counters_source=exporters.",
    },
    _int(
        "probe_regression_runs",
        3,
        1,
        100,
        "Consecutive regressed results a light probe needs before the health check is raised "
        "(one noisy latency sample is no regression; heavy rounds need one)",
    ),
    _int("history_limit", 50, 1, 1000, "Runs kept per kind in the history"),
    {
        "name": "rgw_s3_endpoint",
        "type": "str",
        "default": "",
        "runtime": True,
        "desc": "S3 endpoint (http://host:port) for the rgw probe's PUT and LIST; empty: omap probe only",
        "long_desc": "http:// or https://, a host name or IP address, an optional port and path; no "
        "user:password@, query or fragment. The active mgr sends requests signed with rgw_s3_access_key "
        "there. Link-local, cloud-metadata (169.254.169.254, fd00:ec2::254, 100.100.100.200, "
        "metadata.google.internal), unspecified, multicast and broadcast addresses are refused, also when "
        "a name resolves to one. A refused endpoint is not used: the S3 part of the probe stays off.",
    },
    {
        "name": "rgw_s3_access_key",
        "type": "str",
        "default": "",
        "runtime": True,
        "desc": "Access key of the S3 user the rgw probe signs with (never shown); "
        "prefer ceph perfwatch set-s3-credentials -i FILE",
        "long_desc": "Shown as <set> or <not set>, never its value. An option value stays in `ceph config log` "
        "and in shell history: `ceph perfwatch set-s3-credentials -i FILE` stores both keys in the mgr store "
        "instead, and wins.",
    },
    {
        "name": "rgw_s3_secret_key",
        "type": "str",
        "default": "",
        "runtime": True,
        "desc": "Secret key of that S3 user (never shown, logged or exported); "
        "prefer ceph perfwatch set-s3-credentials -i FILE",
        "long_desc": "Never shown, logged or exported. Like the access key's, an option value stays in `ceph "
        "config log` and in shell history: prefer `ceph perfwatch set-s3-credentials -i FILE`.",
    },
    {
        "name": "rgw_s3_bucket",
        "type": "str",
        "default": "perfwatch-probe",
        "runtime": True,
        "desc": "Bucket the rgw probe writes its small objects to (created if missing)",
        "long_desc": "An S3 bucket name: 3-63 lowercase letters, digits, '.' and '-'. A refused name turns "
        "the S3 part of the probe off.",
    },
    {
        "name": "rgw_s3_region",
        "type": "str",
        "default": "us-east-1",
        "runtime": True,
        "desc": "Region name used in S3 request signatures",
        "long_desc": "1-32 lowercase letters, digits and '-'. A refused name turns the S3 part of the probe off.",
    },
]
OPTIONS.extend(BENCH_OPTIONS)
LOAD_OPTIONS: List[OptionSpec] = [  # whose load: the module's OSD perf queries (load/)
    {"name": "load_attribution", "type": "bool", "default": False, "runtime": True,
     "desc": "Attribute the OSDs' client I/O to pools and clients with OSD perf queries (off: none registered)"},
    _int("load_client_sample", 16, 0, 1024, "Clients an OSD reports per 5 s at most, the busiest by ops (0: no "
         "client query; above it the OSD samples)"),
    _int("load_top_clients", 10, 0, 100, "Busiest clients exported cluster-wide"),
    _int("load_top_per_osd", 2, 0, 10, "Busiest pools and clients exported per OSD"),
    _int("load_osd_series_max", 20000, 0, 1000000, "Per-OSD load series at most; the busiest OSDs keep theirs"),
]  # fmt: skip
OPTIONS.extend(LOAD_OPTIONS)

SECRET_OPTIONS = ("rgw_s3_access_key", "rgw_s3_secret_key")


def redacted(values: Dict[str, Any]) -> Dict[str, Any]:
    """Option values fit to show or log: secrets replaced by whether they are set."""
    return {k: ("<set>" if v else "<not set>") if k in SECRET_OPTIONS else v for k, v in values.items()}


NUMERIC_TYPES = ("int", "uint", "secs", "float", "size")


def defaults() -> Dict[str, Any]:
    return {spec["name"]: spec["default"] for spec in OPTIONS}


def coerce(name: str, value: Any) -> Any:
    """A value as its declared type: the mgr hands `secs` and `int` options back as floats or strings.
    ValueError or OverflowError (TypeError for an odd object) for a value that is not of its type: Ceph
    checks types at `ceph config set`, but the module must not trust that (config.read refuses it)."""
    kind = spec(name)["type"]
    if value is None:
        return spec(name)["default"]
    if kind in ("int", "uint", "secs", "size"):
        return int(float(value))  # ValueError ("abc", "nan"), OverflowError ("inf")
    if kind == "float":
        number = float(value)
        if not math.isfinite(number):  # "nan" passes every min/max comparison
            raise ValueError("{!r} is not a finite number".format(value))
        return number
    if kind == "bool":
        return value if isinstance(value, bool) else str(value).lower() in ("true", "1", "yes", "on")
    return str(value)


def spec(name: str) -> OptionSpec:
    for item in OPTIONS:
        if item["name"] == name:
            return item
    raise KeyError(name)
