"""The lab's monitoring loop: Prometheus (scraping every exporter of the lab and evaluating the lab's rules)
and Alertmanager (receiving its alerts, notifying no one).

Pure: scrape jobs, addresses and paths in; command lines and the Prometheus configuration out. The
catalogue (daemons.py) says which targets a lab has; cluster.py writes the files and starts the daemons.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .config import REPO_ROOT

PROMETHEUS = "prometheus"  # the daemon's name in the lab, and Debian's binary
ALERTMANAGER = "alertmanager"  # the daemon's name in the lab
ALERTMANAGER_BINARY = "prometheus-alertmanager"  # Debian's name for alertmanager
NAMES = (ALERTMANAGER, PROMETHEUS)  # the order `up` starts them: Prometheus finds its Alertmanager up

# The rules of the lab's profile (alerts/), evaluated by the lab's Prometheus; a file not written yet is
# left out of rule_files, so the lab runs before the rules exist.
RULE_FILES = (
    REPO_ROOT / "alerts" / "generated" / "lab" / "recording.yml",
    REPO_ROOT / "alerts" / "generated" / "lab" / "alerts.yml",
)
# Alertmanager's configuration: the checkout's example (its receivers have no notifier configs) when
# present, else FALLBACK_ALERTMANAGER_CONFIG. The lab never sends a notification anywhere.
ALERTMANAGER_EXAMPLE = REPO_ROOT / "alerts" / "alertmanager.example.yml"
FALLBACK_ALERTMANAGER_CONFIG: dict[str, Any] = {
    "route": {"receiver": "nobody", "group_by": ["alertname", "cluster"]},
    "receivers": [{"name": "nobody"}],
}

SCRAPE_INTERVAL = "5s"
EXPORTER_COLLECT_INTERVAL = 5  # seconds: the host exporters collect as often as Prometheus scrapes them
SCRAPE_TIMEOUT = "4s"
RETENTION = "1d"
# Job names are a contract with the alert rules (alerts/): do not rename them.
JOB_MODULE, JOB_HOST, JOB_NODE, JOB_CEPH = "perfwatch", "perfwatch-host", "node", "ceph"
JOBS = (JOB_MODULE, JOB_HOST, JOB_NODE, JOB_CEPH)
HONOR_LABELS = frozenset({JOB_HOST, JOB_CEPH})  # the exporter sets `cluster` itself; Ceph's docs ask for it


@dataclasses.dataclass(frozen=True)
class Target:
    address: str  # host:port; the metrics path is /metrics
    labels: tuple[tuple[str, str], ...] = ()  # target labels, on top of the job's `cluster`


# ----- paths in the lab directory ----------------------------------------------------------------------


def prometheus_dir(directory: Path) -> Path:
    return directory / "prometheus"


def prometheus_config_path(directory: Path) -> Path:
    return prometheus_dir(directory) / "prometheus.yml"


def alertmanager_dir(directory: Path) -> Path:
    return directory / "alertmanager"


def fallback_alertmanager_config_path(directory: Path) -> Path:
    """Where the lab writes FALLBACK_ALERTMANAGER_CONFIG while the checkout has no example."""
    return alertmanager_dir(directory) / "alertmanager.yml"


# ----- command lines -----------------------------------------------------------------------------------


def prometheus_argv(directory: Path, address: str, port: int) -> tuple[str, ...]:
    """Prometheus on `address` only, its data in the lab directory, one day of retention."""
    return (
        PROMETHEUS,
        f"--config.file={prometheus_config_path(directory)}",
        f"--storage.tsdb.path={prometheus_dir(directory) / 'data'}",
        f"--storage.tsdb.retention.time={RETENTION}",
        f"--web.listen-address={address}:{port}",
    )


def alertmanager_argv(directory: Path, config_file: Path, address: str, port: int) -> tuple[str, ...]:
    """Alertmanager on `address` only; an empty cluster address turns off its gossip (else 0.0.0.0:9094)."""
    return (
        ALERTMANAGER_BINARY,
        f"--config.file={config_file}",
        f"--storage.path={alertmanager_dir(directory) / 'data'}",
        f"--web.listen-address={address}:{port}",
        "--cluster.listen-address=",
    )


# ----- Prometheus's configuration ----------------------------------------------------------------------


def present_rule_files(exists: Iterable[Path]) -> tuple[list[Path], list[Path]]:
    """(present, missing) of RULE_FILES, given the paths that exist."""
    there = set(exists)
    return [p for p in RULE_FILES if p in there], [p for p in RULE_FILES if p not in there]


def prometheus_config(
    fsid: str,
    jobs: dict[str, list[Target]],
    alertmanager: str,
    rule_files: Iterable[Path],
    job_settings: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Prometheus's configuration: `jobs` (by job name) with `cluster: <fsid>` on every target, the
    lab's rule files and its Alertmanager (host:port). `job_settings` adds to a job's scrape config
    (scheme, tls_config, basic_auth of a secure lab)."""
    scrape_configs = []
    for job, targets in jobs.items():
        scrape: dict[str, Any] = {
            "job_name": job,
            "metrics_path": "/metrics",
            "scrape_interval": SCRAPE_INTERVAL,
            "scrape_timeout": SCRAPE_TIMEOUT,
        }
        if job in HONOR_LABELS:
            scrape["honor_labels"] = True
        scrape.update((job_settings or {}).get(job, {}))
        scrape["static_configs"] = [
            {"targets": [t.address], "labels": {"cluster": fsid, **dict(t.labels)}} for t in targets
        ]
        scrape_configs.append(scrape)
    return {
        "global": {
            "scrape_interval": SCRAPE_INTERVAL,
            "evaluation_interval": SCRAPE_INTERVAL,
            "scrape_timeout": SCRAPE_TIMEOUT,
        },
        "rule_files": [str(p) for p in rule_files],
        "alerting": {"alertmanagers": [{"api_version": "v2", "static_configs": [{"targets": [alertmanager]}]}]},
        "scrape_configs": scrape_configs,
    }


def render(config: dict[str, Any]) -> str:
    """A configuration file's text: JSON, which is YAML."""
    return json.dumps(config, indent=2) + "\n"
