"""deploy/cephadm: the host exporter's service spec, checked against cephadm's custom container fields
(ceph/ceph src/python-common/ceph/deployment/service_spec.py, CustomContainerSpec and ServiceSpec) and
against what the exporter needs; no cephadm can run here."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from perfwatch_host_exporter.cli import DEFAULT_PORT, parser

from perfwatch.version import __version__

REPO = Path(__file__).resolve().parents[2]
SPEC = REPO / "deploy" / "cephadm" / "perfwatch-host-exporter.yaml"
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
    assert {"--cap-add=SYS_PTRACE", "--cap-add=DAC_READ_SEARCH", "--cap-add=DAC_OVERRIDE"} <= set(args)
    sources = {dict(item.split("=", 1) for item in m)["source"] for m in spec()["spec"]["bind_mounts"]}
    assert {"/var/run/ceph", "/sys"} <= sources


def test_the_port_is_the_exporters_default_and_entrypoint_args_are_its_own() -> None:
    data = spec()
    assert data["spec"]["ports"] == [DEFAULT_PORT]
    parser().parse_args(data.get("extra_entrypoint_args", []))  # SystemExit on an option it does not have
