"""deploy/rook: the kustomize folder an operator applies next to a Rook-Ceph cluster, checked structurally
(no Kubernetes cluster runs here): kinds, selectors against the labels Rook puts on its pods, ports against
the module's and the exporter's defaults, the exporter's arguments against its own parser, the job labels
against the rules' selectors, the PrometheusRule against the production rule files, the version against
version.py, and the CephCluster patch against a sample CephCluster. When kubectl is installed, its
built-in kustomize renders the folder through an overlay as an operator would."""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from alerts import generate
from alerts.profiles import PRODUCTION, PROFILES
from perfwatch.common.version import __version__
from perfwatch.options import declared as options
from perfwatch_host_exporter.cli import DEFAULT_PORT, parser
from tests import paths

REPO = paths.REPO
ROOK = REPO / "deploy" / "rook"
KUSTOMIZATION = ROOK / "kustomization.yaml"
PATCH = ROOK / "cephcluster-patch.yaml"
# Files of the folder that are not kustomize resources: the kustomization itself, the CephCluster patch
# (applied with `kubectl patch`, never as an object) and the README.
NOT_RESOURCES = {"kustomization.yaml", "cephcluster-patch.yaml", "README.md"}
NAMESPACE = "rook-ceph"
SAMPLE_FSID = "3f1c9a2e-5b7d-4c1e-9f00-1234567890ab"
EXPECTED = {
    ("v1", "Service", "perfwatch-mgr"),
    ("monitoring.coreos.com/v1", "ServiceMonitor", "perfwatch-mgr"),
    ("apps/v1", "DaemonSet", "perfwatch-host-exporter"),
    ("v1", "Service", "perfwatch-host-exporter"),
    ("monitoring.coreos.com/v1", "ServiceMonitor", "perfwatch-host-exporter"),
    ("monitoring.coreos.com/v1", "PrometheusRule", "ceph-perfwatch"),
}

# ----- what Rook does, written down from its source (github.com/rook/rook) -------------------------------
# Mgr pod labels: pkg/operator/ceph/cluster/mgr/spec.go getPodLabels(), built from
# pkg/operator/ceph/controller/spec.go CephDaemonAppLabels() (app, rook_cluster = the namespace,
# ceph_daemon_type, ceph_daemon_id, "<type>: <id>") and pkg/operator/k8sutil AddRecommendedLabels(), plus
# `instance` and `mgr_role`: "active" by default, set to "standby" on the other mgr by the mgr sidecar
# (mgr.go SetMgrRoleLabel; Rook 1.12 on, rook/rook PRs #11845 and #12137).


def rook_mgr_pod_labels(daemon_id: str, role: str, namespace: str = NAMESPACE) -> dict[str, str]:
    return {
        "app": "rook-ceph-mgr",
        "rook_cluster": namespace,
        "ceph_daemon_type": "mgr",
        "ceph_daemon_id": daemon_id,
        "mgr": daemon_id,
        "instance": daemon_id,
        "mgr_role": role,
        "app.kubernetes.io/name": "ceph-mgr",
        "app.kubernetes.io/instance": daemon_id,
        "app.kubernetes.io/component": "cephclusters.ceph.rook.io",
        "app.kubernetes.io/part-of": "rook-ceph",
        "app.kubernetes.io/managed-by": "rook-ceph-operator",
        "app.kubernetes.io/created-by": "rook-ceph-operator",
        "rook.io/operator-namespace": "rook-ceph",
    }


# Before Rook 1.12: no mgr_role, no recommended labels (the legacy HA rewrote Service selectors instead).
ROOK_LEGACY_MGR_POD = {
    "app": "rook-ceph-mgr",
    "rook_cluster": NAMESPACE,
    "ceph_daemon_id": "a",
    "mgr": "a",
    "instance": "a",
}
# Other pods of a Rook namespace our mgr Service must not select (controller.CephDaemonAppLabels; the
# ceph-exporter's are pkg/operator/ceph/cluster/nodedaemon/exporter.go deploymentLabels).
ROOK_OTHER_PODS = [
    {"app": "rook-ceph-osd", "rook_cluster": NAMESPACE, "ceph_daemon_type": "osd", "ceph_daemon_id": "0", "osd": "0"},
    {"app": "rook-ceph-mon", "rook_cluster": NAMESPACE, "ceph_daemon_type": "mon", "ceph_daemon_id": "a", "mon": "a"},
    {"app": "rook-ceph-exporter", "rook_cluster": NAMESPACE, "ceph_daemon_id": "exporter", "node_name": "n1"},
    {"app": "rook-ceph-operator"},
]
# Rook's own ServiceMonitor selects Services by these labels (Rook's deploy/examples/monitoring/service-monitor.yaml),
# and Rook rewrites the selector of every Service labelled app=rook-ceph-mgr (mgr.go updateServiceSelectors).
ROOK_MGR_SERVICEMONITOR_SELECTOR = {"app": "rook-ceph-mgr", "rook_cluster": NAMESPACE}
# Where Rook puts the daemons' admin sockets on the host: controller.DaemonVolumesBase mounts hostPath
# <dataDirHostPath>/exporter (daemonSocketsSubPath) at /run/ceph (daemonSocketDir) in every daemon pod;
# Rook's ceph-exporter reads them with --sock-dir /run/ceph. dataDirHostPath defaults to /var/lib/rook.
ROOK_SOCKET_HOST_DIR = "/var/lib/rook/exporter"

# Kubernetes' label syntax (apimachinery validation: IsQualifiedName, IsValidLabelValue).
LABEL_NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
LABEL_KEY = re.compile(rf"([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?{LABEL_NAME}")
LABEL_VALUE = re.compile(rf"({LABEL_NAME})?")
# prometheus-operator's Duration type (monitoring.coreos.com/v1).
DURATION = re.compile(r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$")
# kubectl apply (client side) stores the object in an annotation; all annotations together must stay
# under 256 KiB.
ANNOTATIONS_LIMIT = 256 * 1024


def load(path: Path) -> list[Any]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


def kustomization() -> dict[str, Any]:
    return load(KUSTOMIZATION)[0]


def objects() -> list[dict[str, Any]]:
    return [doc for name in kustomization()["resources"] for doc in load(ROOK / name)]


def one(kind: str, name: str) -> dict[str, Any]:
    found = [o for o in objects() if o["kind"] == kind and o["metadata"]["name"] == name]
    assert len(found) == 1, (kind, name, len(found))
    return found[0]


def matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def fsid_label() -> dict[str, Any]:
    entries = [e for e in kustomization().get("labels", []) if "ceph-perfwatch/fsid" in e["pairs"]]
    assert len(entries) == 1
    return entries[0]


def meta_label(kind: str, key: str) -> str:
    """The Kubernetes SD meta label Prometheus makes of an object's label (unsupported characters -> _)."""
    return f"__meta_kubernetes_{kind}_label_" + re.sub(r"[^A-Za-z0-9_]", "_", key)


def selector_value(selector: str, label: str) -> str:
    found = re.fullmatch(rf'{label}="([^"]+)"', selector)
    assert found, selector
    return found.group(1)


def seconds(duration: str) -> int:
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    return sum(int(n) * units[u] for n, u in re.findall(r"(\d+)([smhd])", duration))


def quantity(text: str) -> float:
    suffixes = {"m": 1e-3, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "": 1}
    found = re.fullmatch(r"(\d+(?:\.\d+)?)(m|Ki|Mi|Gi|)", str(text))
    assert found, text
    return float(found.group(1)) * suffixes[found.group(2)]


def exporter_container() -> dict[str, Any]:
    (container,) = one("DaemonSet", "perfwatch-host-exporter")["spec"]["template"]["spec"]["containers"]
    return container


# ----- the folder and the kustomization ----------------------------------------------------------------


def test_every_file_parses_and_every_object_is_a_kubernetes_object() -> None:
    yamls = sorted(ROOK.glob("*.yaml"))
    assert yamls
    for path in yamls:
        docs = load(path)  # raises on a syntax error
        assert docs, path
    for obj in objects():
        assert {"apiVersion", "kind", "metadata"} <= set(obj), obj.get("metadata")
        assert obj["metadata"].get("name"), obj


def test_the_kustomization_lists_every_manifest_and_no_missing_one() -> None:
    listed = kustomization()["resources"]
    assert len(listed) == len(set(listed)), "a resource listed twice"
    on_disk = {p.name for p in ROOK.iterdir()}
    assert set(listed) == on_disk - NOT_RESOURCES, "every manifest in deploy/rook is a resource, and only those"
    assert on_disk >= NOT_RESOURCES


def test_the_cephcluster_is_patched_never_applied() -> None:
    """A partial CephCluster applied over the operator's (kubectl apply) could replace its spec: the
    change is a JSON patch kept out of the kustomization, and nothing here is a CephCluster."""
    k = kustomization()
    assert PATCH.name not in k["resources"]
    assert not {"patches", "patchesStrategicMerge", "patchesJson6902", "components"} & set(k)
    assert all(o["kind"] != "CephCluster" for o in objects())
    ops = load(PATCH)[0]
    assert isinstance(ops, list) and all(set(op) == {"op", "path", "value"} for op in ops), "an RFC 6902 list"
    assert {(op["op"], op["path"]) for op in ops} == {
        ("replace", "/spec/cephVersion/image"),
        ("add", "/spec/mgr/modules/-"),  # appends: the modules already listed stay
    }


def test_kinds_api_versions_and_names_are_the_expected_ones() -> None:
    found = [(o["apiVersion"], o["kind"], o["metadata"]["name"]) for o in objects()]
    assert len(found) == len(set(found))
    assert set(found) == EXPECTED


def test_namespaces_come_from_the_kustomization_only() -> None:
    """One namespace, set by kustomize (Rook's default, the CephCluster's): no object names another, and
    no ServiceMonitor looks outside its own namespace (where its Service is)."""
    assert kustomization()["namespace"] == NAMESPACE
    for obj in objects():
        assert obj["metadata"].get("namespace", NAMESPACE) == NAMESPACE, obj["metadata"]
        if obj["kind"] == "ServiceMonitor":
            assert "namespaceSelector" not in obj["spec"]


def test_the_fsid_label_is_set_once_and_never_reaches_a_selector() -> None:
    entry = fsid_label()
    k = kustomization()
    assert "commonLabels" not in k, "commonLabels would add labels to selectors (Rook's pods have none of ours)"
    assert entry["includeSelectors"] is False
    assert entry["includeTemplates"] is True, "the exporter reads the fsid from its pod's labels"
    (key,) = entry["pairs"]
    assert LABEL_KEY.fullmatch(key)
    # The placeholder is refused by the API server, so nothing is applied until the real fsid is set...
    assert not LABEL_VALUE.fullmatch(entry["pairs"][key])
    # ... which is a valid label value.
    assert LABEL_VALUE.fullmatch(SAMPLE_FSID) and len(SAMPLE_FSID) <= 63


# ----- the mgr module ----------------------------------------------------------------------------------


def test_the_mgr_service_selects_every_rook_mgr_and_nothing_else() -> None:
    selector = one("Service", "perfwatch-mgr")["spec"]["selector"]
    for pod in (rook_mgr_pod_labels("a", "active"), rook_mgr_pod_labels("b", "standby"), ROOK_LEGACY_MGR_POD):
        assert matches(selector, pod), pod
    # namespace-independent: the same selector after `namespace:` is changed
    assert matches(selector, rook_mgr_pod_labels("a", "active", namespace="ceph-prod"))
    for pod in ROOK_OTHER_PODS:
        assert not matches(selector, pod), pod
    assert "mgr_role" not in selector, "standbys are scraped too: they answer empty and count as targets"


def test_the_mgr_service_keeps_out_of_rooks_way() -> None:
    labels = one("Service", "perfwatch-mgr")["metadata"]["labels"]
    assert labels.get("app") != "rook-ceph-mgr", "Rook would rewrite its selector"
    assert not matches(ROOK_MGR_SERVICEMONITOR_SELECTOR, labels), "Rook's ServiceMonitor would scrape it"


def test_the_mgr_service_port_is_the_modules_default() -> None:
    (port,) = one("Service", "perfwatch-mgr")["spec"]["ports"]
    default = options.spec("server_port")["default"]
    assert default == 9284
    assert port["port"] == default and port["targetPort"] == default and port["protocol"] == "TCP"


# ----- Services and ServiceMonitors ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["perfwatch-mgr", "perfwatch-host-exporter"])
def test_each_servicemonitor_selects_its_service_and_a_port_it_has(name: str) -> None:
    monitor = one("ServiceMonitor", name)
    selector = monitor["spec"]["selector"]["matchLabels"]
    services = [o for o in objects() if o["kind"] == "Service" and matches(selector, o["metadata"]["labels"])]
    assert [s["metadata"]["name"] for s in services] == [name]
    ports = {p["name"] for p in services[0]["spec"]["ports"]}
    for endpoint in monitor["spec"]["endpoints"]:
        assert endpoint["port"] in ports
        assert endpoint["path"] == "/metrics"


@pytest.mark.parametrize(
    ("name", "selector", "honor_labels"),
    [
        ("perfwatch-mgr", PRODUCTION.module_selector, False),
        ("perfwatch-host-exporter", PRODUCTION.exporter_selector, True),
    ],
)
def test_targets_carry_the_job_and_cluster_the_rules_select(name: str, selector: str, honor_labels: bool) -> None:
    """job as profiles.py's selector names it; cluster from the Service's fsid label (every rule joins on
    it); honor_labels where the runbook's scrape_configs have it (the exporter labels daemons itself)."""
    (endpoint,) = one("ServiceMonitor", name)["spec"]["endpoints"]
    relabel = {r["targetLabel"]: r for r in endpoint["relabelings"]}
    assert relabel["job"]["replacement"] == selector_value(selector, "job")
    assert "sourceLabels" not in relabel["job"]
    (key,) = fsid_label()["pairs"]
    assert relabel["cluster"]["sourceLabels"] == [meta_label("service", key)]
    assert endpoint["honorLabels"] is honor_labels


@pytest.mark.parametrize("name", ["perfwatch-mgr", "perfwatch-host-exporter"])
def test_scrape_intervals_fit_the_production_rate_window(name: str) -> None:
    (endpoint,) = one("ServiceMonitor", name)["spec"]["endpoints"]
    for field in ("interval", "scrapeTimeout"):
        assert DURATION.match(endpoint[field])
    assert seconds(endpoint["scrapeTimeout"]) <= seconds(endpoint["interval"])
    assert seconds(PRODUCTION.rate_window) / seconds(endpoint["interval"]) >= 4, "4 scrapes per rate window"


def test_the_exporter_targets_hostname_is_the_exporters_own() -> None:
    """The target label and the exporter's --hostname both come from the node's name."""
    (endpoint,) = one("ServiceMonitor", "perfwatch-host-exporter")["spec"]["endpoints"]
    relabel = {r["targetLabel"]: r for r in endpoint["relabelings"]}
    assert relabel["hostname"]["sourceLabels"] == ["__meta_kubernetes_pod_node_name"]
    assert "--hostname=$(NODE_NAME)" in exporter_container()["args"]
    env = {e["name"]: e for e in exporter_container()["env"]}
    assert env["NODE_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName"


# ----- the host exporter's DaemonSet ---------------------------------------------------------------------


def test_the_daemonset_selects_its_own_pods_and_its_service_finds_them() -> None:
    ds = one("DaemonSet", "perfwatch-host-exporter")
    template_labels = ds["spec"]["template"]["metadata"]["labels"]
    assert ds["spec"]["selector"]["matchLabels"].items() <= template_labels.items()
    service = one("Service", "perfwatch-host-exporter")
    assert matches(service["spec"]["selector"], template_labels)
    for pod in [rook_mgr_pod_labels("a", "active"), *ROOK_OTHER_PODS]:
        assert not matches(service["spec"]["selector"], pod)


def test_the_exporter_container_has_image_and_the_default_port() -> None:
    container = exporter_container()
    assert container["image"] and container["command"] == ["/usr/bin/perfwatch-host-exporter"]  # python3 -I
    (port,) = container["ports"]
    assert port["containerPort"] == DEFAULT_PORT == 9285
    (service_port,) = one("Service", "perfwatch-host-exporter")["spec"]["ports"]
    assert service_port["port"] == DEFAULT_PORT and service_port["targetPort"] == port["name"]
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"]["path"] == "/healthz", "503 when a collection is stuck: restarted"
        assert container[probe]["httpGet"]["port"] == port["name"]


def test_the_exporter_arguments_are_valid_options_of_its_parser() -> None:
    """The args as the kubelet hands them over ($(VAR) from the env), parsed by the exporter's own
    argparse parser: a misspelt option or a bad value would exit 2 here as in the pod."""
    container = exporter_container()
    env = {e["name"]: e for e in container["env"]}
    values = {"NODE_NAME": "storage-node-1", "CEPH_FSID": SAMPLE_FSID}
    args: list[str] = []
    for arg in container["args"]:
        for var in re.findall(r"\$\((\w+)\)", arg):
            assert var in env, f"{arg}: ${var} is not in the container's env"
        args.append(re.sub(r"\$\((\w+)\)", lambda m: values[str(m.group(1))], str(arg)))
    parsed = parser().parse_args(args)
    assert parsed.port == DEFAULT_PORT
    assert parsed.hostname == "storage-node-1"
    assert parsed.cluster_fsid == SAMPLE_FSID
    assert parsed.asok_dir == [ROOK_SOCKET_HOST_DIR]
    with pytest.raises(SystemExit):
        parser().parse_args([*args, "--cluster-fsid=<ceph fsid>"])  # the placeholder is refused too


def test_the_exporter_reads_the_fsid_from_the_kustomization_label() -> None:
    (key,) = fsid_label()["pairs"]
    env = {e["name"]: e for e in exporter_container()["env"]}
    assert env["CEPH_FSID"]["valueFrom"]["fieldRef"]["fieldPath"] == f"metadata.labels['{key}']"


def test_the_exporter_sees_the_host_and_rooks_admin_sockets_read_only() -> None:
    ds = one("DaemonSet", "perfwatch-host-exporter")
    spec = ds["spec"]["template"]["spec"]
    assert spec["hostPID"] is True and spec["hostNetwork"] is True
    assert spec["automountServiceAccountToken"] is False
    volumes = {v["name"]: v for v in spec["volumes"]}
    mounts = {m["mountPath"]: m for m in exporter_container()["volumeMounts"]}
    assert all(m.get("readOnly") is True for m in mounts.values()), "it never writes to the host"
    host_paths = {path: volumes[m["name"]]["hostPath"]["path"] for path, m in mounts.items()}
    assert host_paths["/sys"] == "/sys"
    assert host_paths["/sys/fs/cgroup"] == "/sys/fs/cgroup"
    (asok_dir,) = parser().parse_args([a for a in exporter_container()["args"] if a.startswith("--asok")]).asok_dir
    assert host_paths[asok_dir] == ROOK_SOCKET_HOST_DIR


def test_the_exporter_is_unprivileged_with_the_units_two_capabilities() -> None:
    """Not privileged (the exporter places other pods' cgroups from a private cgroup namespace): every
    capability dropped but the systemd unit's two, which tests/unit/exporter/test_privileges.py measures;
    no escalation; read-only."""
    context = exporter_container()["securityContext"]
    assert context["privileged"] is False and context["allowPrivilegeEscalation"] is False
    assert context["readOnlyRootFilesystem"] is True
    assert context["runAsUser"] == 0
    unit = (REPO / "exporters" / "perfwatch-host-exporter.service").read_text()
    caps = re.search(r"^CapabilityBoundingSet=(.*)$", unit, re.MULTILINE)
    assert caps is not None
    assert context["capabilities"] == {"drop": ["ALL"], "add": [c.removeprefix("CAP_") for c in caps.group(1).split()]}
    assert context["seccompProfile"] == {"type": "RuntimeDefault"}
    assert context["appArmorProfile"] == {"type": "Unconfined"}, "the default profile refuses ptrace-reads"


def test_the_exporter_runs_only_on_labelled_ceph_nodes_and_tolerates_no_stranger_taint() -> None:
    resources = exporter_container()["resources"]
    for name in ("cpu", "memory"):
        assert quantity(resources["requests"][name]) <= quantity(resources["limits"][name])
    assert resources["limits"]["memory"] == "256Mi", "as the unit's MemoryMax"
    spec = one("DaemonSet", "perfwatch-host-exporter")["spec"]["template"]["spec"]
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [{"matchExpressions": [{"key": "ceph-perfwatch/ceph-node", "operator": "Exists"}]}]
    assert spec["tolerations"] == [{"key": "storage-node", "operator": "Exists"}]
    assert all(t.get("key") for t in spec["tolerations"]), "no toleration of every taint"


# ----- images and the version --------------------------------------------------------------------------


def test_images_carry_the_one_version() -> None:
    (image,) = kustomization()["images"]
    assert image["name"] == exporter_container()["image"] == "perfwatch-host-exporter"
    assert image["newTag"] == __version__
    assert image["newName"].endswith("/perfwatch-host-exporter")
    mgr_image = next(op["value"] for op in load(PATCH)[0] if op["path"] == "/spec/cephVersion/image")
    found = re.fullmatch(r"(.+)/ceph-perfwatch:(.+)-ceph(\d+)\.(\d+)\.(\d+)", mgr_image)
    assert found, mgr_image
    assert found.group(2) == __version__
    assert found.group(1) == image["newName"].rsplit("/", 1)[0], "both images from one registry"
    assert int(found.group(3)) >= 18, "current Rook releases run Reef (18) or newer"


# ----- the CephCluster patch ---------------------------------------------------------------------------


def apply_json_patch(doc: dict[str, Any], ops: list[dict[str, Any]]) -> dict[str, Any]:
    """RFC 6902 `add` and `replace` (what the patch uses), failing where the API server's would."""
    doc = copy.deepcopy(doc)
    for op in ops:
        *parents, last = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
        target: Any = doc
        for key in parents:
            target = target[int(key)] if isinstance(target, list) else target[key]
        if op["op"] == "replace":
            if last not in target:
                raise KeyError(op["path"])
            target[last] = op["value"]
        elif op["op"] == "add" and isinstance(target, list):
            target.insert(len(target) if last == "-" else int(last), op["value"])
        elif op["op"] == "add":
            target[last] = op["value"]
        else:
            raise ValueError(op["op"])
    return doc


def sample_cephcluster() -> dict[str, Any]:
    """Shaped like Rook's deploy/examples/cluster.yaml."""
    return {
        "apiVersion": "ceph.rook.io/v1",
        "kind": "CephCluster",
        "metadata": {"name": "rook-ceph", "namespace": NAMESPACE},
        "spec": {
            "cephVersion": {"image": "quay.io/ceph/ceph:v20.2.4", "allowUnsupported": False},
            "dataDirHostPath": "/var/lib/rook",
            "mon": {"count": 3},
            "mgr": {"count": 2, "modules": [{"name": "rook", "enabled": True}]},
            "storage": {"useAllNodes": True, "useAllDevices": True},
        },
    }


def test_the_patch_sets_the_image_and_appends_the_module_leaving_the_rest() -> None:
    before = sample_cephcluster()
    after = apply_json_patch(before, load(PATCH)[0])
    assert after["spec"]["cephVersion"]["image"].split("/")[-1].startswith("ceph-perfwatch:")
    assert after["spec"]["cephVersion"]["allowUnsupported"] is False
    assert after["spec"]["mgr"]["modules"] == [
        {"name": "rook", "enabled": True},
        {"name": "perfwatch", "enabled": True},
    ]
    after["spec"]["cephVersion"]["image"] = before["spec"]["cephVersion"]["image"]
    after["spec"]["mgr"]["modules"].pop()
    assert after == before, "nothing else changes"


def test_the_patch_fails_without_a_modules_list_instead_of_guessing() -> None:
    cluster = sample_cephcluster()
    del cluster["spec"]["mgr"]["modules"]
    with pytest.raises(KeyError):
        apply_json_patch(cluster, load(PATCH)[0])


# ----- the PrometheusRule ------------------------------------------------------------------------------


def production_groups() -> list[dict[str, Any]]:
    where = generate.OUT / "production"
    return load(where / "recording.yml")[0]["groups"] + load(where / "alerts.yml")[0]["groups"]


def test_the_prometheusrule_holds_exactly_the_production_groups() -> None:
    rule = one("PrometheusRule", "ceph-perfwatch")
    assert generate.ROOK_RULE == ROOK / "prometheusrule.yaml" and generate.ROOK_PROFILE == "production"
    assert rule["spec"] == {"groups": production_groups()}
    names = [g["name"] for g in rule["spec"]["groups"]]
    assert len(names) == len(set(names)), "prometheus-operator refuses duplicate group names"


def test_the_prometheusrule_uses_only_prometheus_operator_fields() -> None:
    for group in one("PrometheusRule", "ceph-perfwatch")["spec"]["groups"]:
        assert set(group) <= {"name", "interval", "rules", "limit", "partial_response_strategy"}
        assert DURATION.match(group.get("interval", "0"))
        for r in group["rules"]:
            assert set(r) <= {"record", "alert", "expr", "for", "keep_firing_for", "labels", "annotations"}
            assert ("record" in r) != ("alert" in r)
            assert DURATION.match(r.get("for", "0"))


def test_the_prometheusrule_fits_kubectl_apply() -> None:
    rule = one("PrometheusRule", "ceph-perfwatch")
    assert len(json.dumps(rule)) < ANNOTATIONS_LIMIT * 0.8, "kubectl apply's last-applied annotation"


def test_the_prometheusrule_is_what_the_config_makes() -> None:
    assert generate.ROOK_RULE not in generate.stale(), "run `python3 -m alerts.generate` and commit deploy/rook/"


def test_a_changed_threshold_makes_the_prometheusrule_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(generate, "OUT", tmp_path / "generated")
    monkeypatch.setattr(generate, "ROOK_RULE", tmp_path / "prometheusrule.yaml")
    assert generate.main([]) == 0
    assert generate.stale() == []
    assert (tmp_path / "prometheusrule.yaml").read_text() == (ROOK / "prometheusrule.yaml").read_text()
    changed = dataclasses.replace(PRODUCTION, media_busy_ratio=0.8)
    monkeypatch.setattr(generate, "PROFILES", {**PROFILES, "production": changed})
    assert tmp_path / "prometheusrule.yaml" in generate.stale()
    assert generate.main(["--check"]) == 1


# ----- rendered by kustomize, as an operator's overlay would -----------------------------------------------


def kustomize(folder: Path) -> list[dict[str, Any]]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("no kubectl here: its built-in kustomize renders the folder")
    proc = subprocess.run([kubectl, "kustomize", str(folder)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return [d for d in yaml.safe_load_all(proc.stdout) if d]


def test_an_overlay_with_the_fsid_and_a_registry_renders_what_the_operator_applies(tmp_path: Path) -> None:
    """The overlay README.md shows: fsid and registry set, everything in the namespace, selectors untouched."""
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kustomize.config.k8s.io/v1beta1",
                "kind": "Kustomization",
                "resources": [os.path.relpath(ROOK, overlay)],  # kustomize refuses absolute
                "labels": [{"pairs": {"ceph-perfwatch/fsid": SAMPLE_FSID}, "includeTemplates": True}],
                # the name as the folder's kustomization left it (kustomize matches the whole name)
                "images": [
                    {
                        "name": kustomization()["images"][0]["newName"],
                        "newName": "reg.example.org/x/perfwatch-host-exporter",
                    }
                ],
            }
        )
    )
    rendered = kustomize(overlay)
    assert {(o["apiVersion"], o["kind"], o["metadata"]["name"]) for o in rendered} == EXPECTED
    for obj in rendered:
        assert obj["metadata"]["namespace"] == NAMESPACE
        assert obj["metadata"]["labels"]["ceph-perfwatch/fsid"] == SAMPLE_FSID
    ds = next(o for o in rendered if o["kind"] == "DaemonSet")
    assert ds["spec"]["template"]["metadata"]["labels"]["ceph-perfwatch/fsid"] == SAMPLE_FSID
    assert "ceph-perfwatch/fsid" not in ds["spec"]["selector"]["matchLabels"]
    (container,) = ds["spec"]["template"]["spec"]["containers"]
    assert container["image"] == f"reg.example.org/x/perfwatch-host-exporter:{__version__}"
    for obj in rendered:
        if obj["kind"] == "Service":
            assert "ceph-perfwatch/fsid" not in obj["spec"]["selector"]
        if obj["kind"] == "ServiceMonitor":
            assert "ceph-perfwatch/fsid" not in obj["spec"]["selector"]["matchLabels"]
    assert next(o for o in rendered if o["kind"] == "PrometheusRule")["spec"] == {"groups": production_groups()}


def test_the_folder_alone_renders_with_the_placeholder_the_api_server_refuses() -> None:
    rendered = kustomize(ROOK)
    assert all(not LABEL_VALUE.fullmatch(o["metadata"]["labels"]["ceph-perfwatch/fsid"]) for o in rendered)
