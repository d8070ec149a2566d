"""The lab's monitoring loop, without running it: the port options, Prometheus's generated configuration
(the four jobs the rules rely on, their labels, the rule files, the Alertmanager), and the command lines
of Prometheus and Alertmanager."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
import yaml

from lab import monitoring
from lab.config import REPO_ROOT, LabConfig, LabError
from lab.daemons import Catalogue
from lab.topology import plan

FSID = "6b1f3c2e-0000-4000-8000-000000000000"
DIR = Path("/tmp/pwmon")
MOUNTINFO = ""


def catalogue(hosts: int = 3, alertmanager_config: Path | None = None, **ports: int) -> Catalogue:
    config = LabConfig(directory=DIR, hosts=hosts, subnet_index=7, **ports)
    return Catalogue(config, plan(config), FSID, alertmanager_config)


def jobs_of(config: dict) -> dict[str, dict]:
    return {job["job_name"]: job for job in config["scrape_configs"]}


def targets_of(job: dict) -> dict[str, dict[str, str]]:
    """target -> its labels, for a job of one target per static config."""
    out = {}
    for static in job["static_configs"]:
        (target,) = static["targets"]
        out[target] = static["labels"]
    return out


# ----- ports -------------------------------------------------------------------------------------------


def test_default_ports_one_per_mgr_for_each_module_never_clash() -> None:
    config = LabConfig()
    config.validate()
    assert (config.prometheus_port, config.alertmanager_port) == (9090, 9093)
    assert config.module_ports() == [9284, 9286]  # 9285: the host exporter
    assert config.ceph_metrics_ports() == [9283, 9287]  # 9284-9286: perfwatch and the host exporter


@pytest.mark.parametrize(
    "ports",
    [
        {},
        {"ceph_metrics_port": 9286},  # where the standby's perfwatch port would be: it moves on
        {"module_port": 9283, "ceph_metrics_port": 9284},
        {"ceph_metrics_port": 9280, "prometheus_port": 9281, "alertmanager_port": 9282, "module_port": 9283},
        {"module_port": 19284, "exporter_port": 19285, "ceph_metrics_port": 19283, "prometheus_port": 19090},
    ],
)
@pytest.mark.parametrize("mgrs", [("x", "y"), ("a", "b", "c")])
def test_every_port_of_a_valid_lab_is_different(ports: dict[str, int], mgrs: tuple[str, ...]) -> None:
    config = LabConfig(mgrs=mgrs, **ports)
    config.validate()
    every = [*config.single_ports().values(), *config.module_ports(), *config.ceph_metrics_ports()]
    assert len(every) == len(set(every)) == 6 + 2 * len(mgrs), every
    assert config.module_ports()[0] == config.module_port
    assert config.ceph_metrics_ports()[0] == config.ceph_metrics_port


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"prometheus_port": 9100}, "ports must differ"),
        ({"alertmanager_port": 9090}, "ports must differ"),
        ({"ceph_metrics_port": 9284}, "ports must differ"),  # --module-port's
        ({"ceph_metrics_port": 9285}, "ports must differ"),  # --exporter-port's
        ({"module_port": 9093}, "ports must differ"),
        ({"prometheus_port": 80}, "--prometheus-port 80"),
        ({"alertmanager_port": 70000}, "--alertmanager-port 70000"),
        ({"ceph_metrics_port": 1000}, "--ceph-metrics-port 1000"),
        (
            {"mgrs": ("a", "b", "c"), "exporter_port": 65532, "alertmanager_port": 65531}
            | {"module_port": 65530, "ceph_metrics_port": 65529},  # perfwatch: 65530, 65533, 65534
            "run past 65535",
        ),
    ],
)
def test_port_options_are_validated(changes: dict, message: str) -> None:
    with pytest.raises(LabError, match=message):
        LabConfig(**changes).validate()


def test_the_port_options_round_trip_through_lab_json(tmp_path: Path) -> None:
    config = LabConfig(directory=tmp_path, prometheus_port=19090, alertmanager_port=19093, ceph_metrics_port=19283)
    assert LabConfig.from_json(config.to_json()) == config
    older = json.loads(config.to_json())  # a lab.json written before these options: the defaults
    for key in ("prometheus_port", "alertmanager_port", "ceph_metrics_port"):
        del older[key]
    assert LabConfig.from_json(json.dumps(older)).prometheus_port == 9090


# ----- Prometheus's configuration ----------------------------------------------------------------------


def test_the_four_jobs_and_their_targets_on_a_namespaced_lab() -> None:
    config = catalogue().prometheus_config(list(monitoring.RULE_FILES))
    jobs = jobs_of(config)
    assert list(jobs) == ["perfwatch", "perfwatch-host", "node", "ceph"]
    assert targets_of(jobs["perfwatch"]) == {
        "198.18.7.1:9284": {"cluster": FSID},
        "198.18.7.1:9286": {"cluster": FSID},
    }
    assert targets_of(jobs["perfwatch-host"]) == {
        "198.18.7.11:9285": {"cluster": FSID, "hostname": "pwlab-host1"},
        "198.18.7.12:9285": {"cluster": FSID, "hostname": "pwlab-host2"},
        "198.18.7.13:9285": {"cluster": FSID, "hostname": "pwlab-host3"},
        "198.18.7.1:9285": {"cluster": FSID, "hostname": "core"},
    }
    assert targets_of(jobs["node"]) == {
        f"198.18.7.1{i}:9100": {"cluster": FSID, "hostname": f"pwlab-host{i}"} for i in (1, 2, 3)
    }
    assert targets_of(jobs["ceph"]) == {
        "198.18.7.1:9283": {"cluster": FSID},
        "198.18.7.1:9287": {"cluster": FSID},
    }


def test_honor_labels_only_where_the_exporter_sets_its_own_and_for_ceph() -> None:
    jobs = jobs_of(catalogue().prometheus_config([]))
    assert {name: job.get("honor_labels", False) for name, job in jobs.items()} == {
        "perfwatch": False,
        "perfwatch-host": True,
        "node": False,
        "ceph": True,
    }
    for job in jobs.values():
        assert (job["metrics_path"], job["scrape_interval"], job["scrape_timeout"]) == ("/metrics", "5s", "4s")


def test_a_one_host_lab_scrapes_loopback() -> None:
    jobs = jobs_of(catalogue(hosts=1).prometheus_config([]))
    assert targets_of(jobs["node"]) == {"127.0.0.1:9100": {"cluster": FSID, "hostname": "pwlab-host1"}}
    assert targets_of(jobs["perfwatch-host"]) == {"127.0.0.1:9285": {"cluster": FSID, "hostname": "pwlab-host1"}}
    assert set(targets_of(jobs["ceph"])) == {"127.0.0.1:9283", "127.0.0.1:9287"}


def test_globals_rule_files_and_the_labs_alertmanager() -> None:
    rules = [REPO_ROOT / "alerts" / "generated" / "lab" / "alerts.yml"]
    config = catalogue(alertmanager_port=19093).prometheus_config(rules)
    assert config["global"]["scrape_interval"] == config["global"]["evaluation_interval"] == "5s"
    assert config["rule_files"] == [str(rules[0])]
    assert Path(config["rule_files"][0]).is_absolute()
    assert config["alerting"]["alertmanagers"] == [
        {"api_version": "v2", "static_configs": [{"targets": ["198.18.7.1:19093"]}]}
    ]


def test_the_rule_files_are_the_lab_profiles_and_missing_ones_are_left_out() -> None:
    recording, alerts = monitoring.RULE_FILES
    assert recording == REPO_ROOT / "alerts/generated/lab/recording.yml"
    assert alerts == REPO_ROOT / "alerts/generated/lab/alerts.yml"
    assert monitoring.present_rule_files([alerts, Path("/elsewhere")]) == ([alerts], [recording])
    assert monitoring.present_rule_files([]) == ([], [recording, alerts])


def test_the_rendered_configuration_is_yaml_prometheus_reads_back_unchanged() -> None:
    config = catalogue().prometheus_config(list(monitoring.RULE_FILES))
    assert yaml.safe_load(monitoring.render(config)) == config


# ----- command lines -----------------------------------------------------------------------------------


@pytest.mark.parametrize("hosts", [1, 3])
def test_prometheus_listens_on_the_core_address_only_and_keeps_its_data_in_the_lab(hosts: int) -> None:
    cat = catalogue(hosts=hosts, prometheus_port=19090)
    spec = cat.spec("prometheus", mountinfo=MOUNTINFO)
    core = cat.topo.core_address
    assert spec.argv == (
        "prometheus",
        f"--config.file={DIR}/prometheus/prometheus.yml",
        f"--storage.tsdb.path={DIR}/prometheus/data",
        "--storage.tsdb.retention.time=1d",
        f"--web.listen-address={core}:19090",
    )
    assert (spec.netns, spec.env) == (None, {})
    assert cat.monitoring_urls()["prometheus"] == f"http://{core}:19090/"


def test_alertmanager_listens_on_the_core_address_only_without_gossip() -> None:
    cat = catalogue(alertmanager_port=19093)
    spec = cat.spec("alertmanager", mountinfo=MOUNTINFO)
    assert spec.argv == (
        "prometheus-alertmanager",
        f"--config.file={DIR}/alertmanager/alertmanager.yml",  # the fallback: no example in this catalogue
        f"--storage.path={DIR}/alertmanager/data",
        "--web.listen-address=198.18.7.1:19093",
        "--cluster.listen-address=",  # empty: no gossip port on 0.0.0.0:9094
    )
    assert spec.netns is None
    assert not any("0.0.0.0" in arg for arg in spec.argv)
    example = catalogue(alertmanager_config=monitoring.ALERTMANAGER_EXAMPLE).spec("alertmanager", mountinfo="")
    assert example.argv[1] == f"--config.file={monitoring.ALERTMANAGER_EXAMPLE}"


def test_the_fallback_alertmanager_configuration_notifies_no_one() -> None:
    config = monitoring.FALLBACK_ALERTMANAGER_CONFIG
    (receiver,) = config["receivers"]
    assert receiver == {"name": config["route"]["receiver"]}  # a name and no *_configs


def test_the_lab_lists_and_starts_its_monitoring_after_the_exporters() -> None:
    names = catalogue().names()
    assert names[-2:] == ["alertmanager", "prometheus"]
    assert all(names.index(n) < names.index("alertmanager") for n in catalogue().exporter_names())
    assert list(catalogue().monitoring_urls()) == ["alertmanager", "prometheus"]
    assert catalogue().ceph_metrics_urls() == {"x": "http://198.18.7.1:9283/", "y": "http://198.18.7.1:9287/"}


def test_every_address_prometheus_scrapes_or_listens_on_is_a_distinct_endpoint() -> None:
    cat = catalogue()
    scraped = [t.address for t in itertools.chain.from_iterable(cat.scrape_jobs().values())]
    listening = [url.split("//")[1].rstrip("/") for url in cat.monitoring_urls().values()]
    assert len(set(scraped + listening)) == len(scraped + listening)


def test_waiting_for_readiness_stops_at_once_naming_the_log_when_the_daemon_has_exited() -> None:
    from lab.probes import http_ready
    from lab.procs import ProcRef

    gone = ProcRef(pid=2**22 + 1, start_ticks=0)  # above the largest pid_max Linux allows: never a live process
    log = DIR / "log" / "prometheus.stdout"
    with pytest.raises(
        LabError, match=r"prometheus \(pid \d+\) exited before it was ready on .*; see .*prometheus\.stdout"
    ):
        http_ready(gone, "http://127.0.0.1:1/-/ready", "prometheus", log)
