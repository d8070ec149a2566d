"""deploy/cephadm: the host exporter's service spec, checked against cephadm's custom container fields
(ceph/ceph src/python-common/ceph/deployment/service_spec.py, CustomContainerSpec and ServiceSpec) and
against what the exporter needs; no cephadm can run here."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
import yaml

from alerts.profiles import PRODUCTION
from perfwatch.common.version import __version__
from perfwatch_host_exporter.cli import DEFAULT_PORT, parser
from tests import paths
from tests.cluster.promutil import Prometheus

REPO = paths.REPO
SPEC = REPO / "deploy" / "cephadm" / "perfwatch-host-exporter.yaml"
NODE_RELABEL = REPO / "deploy" / "cephadm" / "node-job-relabel.yml"
README = REPO / "deploy" / "cephadm" / "README.md"
# ServiceSpec's top-level keys and CustomContainerSpec's `spec:` keys, as cephadm reads them.
SERVICE_KEYS = {
    "service_type", "service_id", "placement", "spec", "unmanaged", "networks", "config",
    "extra_container_args", "extra_entrypoint_args", "custom_configs",
}  # fmt: skip
CONTAINER_SPEC_KEYS = {
    "image", "entrypoint", "uid", "gid", "volume_mounts", "args", "envs", "privileged", "bind_mounts",
    "ports", "dirs", "files",
}  # fmt: skip


def spec() -> dict:
    return yaml.safe_load(SPEC.read_text())


def test_the_spec_uses_only_fields_cephadm_knows() -> None:
    data = spec()
    assert set(data) <= SERVICE_KEYS, set(data) - SERVICE_KEYS
    assert set(data["spec"]) <= CONTAINER_SPEC_KEYS, set(data["spec"]) - CONTAINER_SPEC_KEYS
    assert data["service_type"] == "container" and data["service_id"] == "perfwatch-host-exporter"
    assert data["placement"] == {"host_pattern": "*"}  # every host: each has daemons to watch
    for mount in data["spec"]["bind_mounts"]:
        fields = dict(item.split("=", 1) for item in mount)
        assert fields["type"] == "bind" and fields["ro"] == "true", mount  # it never writes to the host
        assert fields["source"].startswith("/") and fields["destination"] == fields["source"]


def test_the_image_is_the_exporters_of_this_version() -> None:
    assert re.fullmatch(rf"[^:]+/perfwatch-host-exporter:{re.escape(__version__)}", spec()["spec"]["image"])


def test_the_container_shares_what_the_exporter_reads_on_the_host() -> None:
    """Host PID (other processes' /proc), cgroup namespace (their cgroup paths), network (the host's
    interfaces) and UTS (the hostname label): exporters/README.md, Containers and cgroups."""
    args = spec()["spec"]["args"]
    for needed in ("--pid=host", "--cgroupns=host", "--net=host", "--uts=host"):
        assert needed in args
    sources = {dict(item.split("=", 1) for item in m)["source"] for m in spec()["spec"]["bind_mounts"]}
    assert {"/var/run/ceph", "/var/lib/ceph", "/sys"} <= sources


def test_the_container_has_the_units_two_capabilities_and_no_more() -> None:
    """As the systemd unit (whose two capabilities tests/unit/exporter/test_privileges.py measures): every
    capability dropped, those two added; no new privileges; read-only; a memory cap as the unit's."""
    args = spec()["spec"]["args"]
    unit = (REPO / "exporters" / "perfwatch-host-exporter.service").read_text()
    caps = re.search(r"^CapabilityBoundingSet=(.*)$", unit, re.MULTILINE)
    assert caps is not None
    assert args.index("--cap-drop=ALL") < min(i for i, a in enumerate(args) if a.startswith("--cap-add="))
    assert {a.removeprefix("--cap-add=") for a in args if a.startswith("--cap-add=")} == {
        c.removeprefix("CAP_") for c in caps.group(1).split()
    }
    assert {"--security-opt=no-new-privileges", "--read-only", "--memory=256m"} <= set(args)
    assert "privileged" not in spec()["spec"]


def test_the_port_is_the_exporters_default_and_entrypoint_args_are_its_own() -> None:
    data = spec()
    assert data["spec"]["ports"] == [DEFAULT_PORT]
    parser().parse_args(data.get("extra_entrypoint_args", []))  # SystemExit on an option it does not have


@pytest.mark.host_tools
def test_the_node_job_relabelling_gives_node_exporter_series_the_hostname_the_verdicts_join_on(
    tmp_path: Path,
) -> None:
    """A real Prometheus with cephadm's node job as cephadm generates it (target groups labelled
    instance=<host name>, as its service discovery hands them out, and its `cluster` relabelling) plus the
    entries of deploy/cephadm/node-job-relabel.yml. The target is that Prometheus itself: what is checked is
    the labels the scraped series get, which the rules' node selector then finds by hostname."""
    relabel = yaml.safe_load(NODE_RELABEL.read_text())
    assert isinstance(relabel, list) and relabel, "node-job-relabel.yml must be a list of relabel_configs entries"
    fsid = "3f1c2a9e-8d7b-4c1a-9e2f-0a1b2c3d4e5f"
    cephadms_own = [{"source_labels": ["__address__"], "target_label": "cluster", "replacement": fsid}]
    targets_file = tmp_path / "node-targets.json"
    job = {
        "job_name": "node",  # cephadm's name for its node-exporter service's job
        "honor_labels": True,
        "relabel_configs": cephadms_own + relabel,
        "file_sd_configs": [{"files": [str(targets_file)], "refresh_interval": "1s"}],
    }
    prom = Prometheus(tmp_path / "prom", targets=[], scrape_interval="1s", scrape_configs=[job])
    try:
        prom.wait_ready()
        # written once Prometheus has its port: the same target-group shape as cephadm's sd-config answer
        group = {"targets": [f"127.0.0.1:{prom.port}"], "labels": {"instance": "osd-host-1"}}
        targets_file.write_text(json.dumps([group]))
        selector = f'up{{{PRODUCTION.node_selector}, hostname="osd-host-1"}}'
        deadline = time.monotonic() + 30
        found = prom.query(selector)
        while not found and time.monotonic() < deadline:
            time.sleep(0.5)
            found = prom.query(selector)
        assert found, f"no series for {selector}: {prom.query('up')}"
        labels = found[0]["metric"]
        assert labels == {
            "__name__": "up", "job": "node", "instance": "osd-host-1", "hostname": "osd-host-1", "cluster": fsid,
        }, labels  # fmt: skip
        assert found[0]["value"][1] == "1"
    finally:
        prom.stop()


def test_the_readme_shows_the_node_relabelling_as_the_file_has_it() -> None:
    """The Jinja example in the README carries the same entries as node-job-relabel.yml (one source the
    test above checks), inside the node-exporter branch of cephadm's loop."""
    readme = README.read_text()
    block = re.search(r"```jinja\n(.*?)```", readme, re.S)
    assert block, "deploy/cephadm/README.md has no ```jinja example"
    text = block.group(1)
    branch = re.search(r"\{% if service == 'node-exporter' %\}\n(.*?)\{% endif %\}", text, re.S)
    assert branch, text
    assert yaml.safe_load(branch.group(1)) == yaml.safe_load(NODE_RELABEL.read_text())
    assert "node-job-relabel.yml" in readme
