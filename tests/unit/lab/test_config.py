from pathlib import Path

import pytest

from lab.config import LabConfig, LabError, load_config, resolve_directory


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"name": "Bad-Name"}, "lab name"),
        ({"name": "waytoolongname"}, "lab name"),
        ({"osds": 0}, "--osds 0"),
        ({"hosts": 4, "osds": 3}, "--hosts 4"),
        ({"hosts": 0}, "--hosts 0"),
        ({"osd_size_gib": 0.5}, "--osd-size"),
        ({"osd_backing": "nbd"}, "--backing"),
        ({"mon_port": 80}, "--mon-port 80"),
        ({"rgw_port": 3300}, "ports must differ"),
        ({"exporter_port": 9100}, "ports must differ"),
        ({"node_exporter_port": 22}, "--node-exporter-port 22"),
        ({"subnet_index": 256}, "--subnet-index"),
        ({"mgrs": ("x", "x")}, "mgr names"),
    ],
)
def test_validate_rejects_with_a_message_naming_the_setting(changes: dict, message: str) -> None:
    config = LabConfig(**changes)
    with pytest.raises(LabError, match=message):
        config.validate()


def test_defaults_are_valid() -> None:
    LabConfig().validate()


def test_json_round_trip_and_load(tmp_path: Path) -> None:
    config = LabConfig(directory=tmp_path / "lab", hosts=3, name="pwt", mon_port=13300, mgrs=("a", "b"))
    config.save()
    assert load_config(tmp_path / "lab") == config
    assert load_config(tmp_path / "nothing") is None


def test_unknown_keys_are_refused(tmp_path: Path) -> None:
    (tmp_path / "lab.json").write_text('{"directory": "/x", "flux": 1}')
    with pytest.raises(LabError, match="unknown keys"):
        load_config(tmp_path)


def test_directory_resolution_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PERFWATCH_LAB_DIR", str(tmp_path / "env"))
    assert resolve_directory(None) == tmp_path / "env"
    assert resolve_directory(str(tmp_path / "arg")) == tmp_path / "arg"
    monkeypatch.delenv("PERFWATCH_LAB_DIR")
    assert resolve_directory(None).name == ".lab"


def test_standby_mgr_ports_skip_the_ports_other_options_use() -> None:
    assert LabConfig().module_ports() == [9284, 9286]  # 9285 is the host exporter's
    assert LabConfig(module_port=19284, exporter_port=19300).module_ports() == [19284, 19285]


def test_a_cluster_network_needs_namespaced_hosts() -> None:
    with pytest.raises(LabError, match="--cluster-network needs hosts in namespaces"):
        LabConfig(cluster_network=True).validate()
    LabConfig(hosts=2, cluster_network=True).validate()
