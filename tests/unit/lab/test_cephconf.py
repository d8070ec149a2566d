import configparser
from pathlib import Path

from lab import cephconf
from lab.config import LabConfig
from lab.topology import plan


def parse(config: LabConfig) -> configparser.ConfigParser:
    text = cephconf.render(config, plan(config), "00000000-0000-0000-0000-000000000001")
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(text)
    return parser


def test_single_host_lab_uses_osd_failure_domain_and_loopback() -> None:
    conf = parse(LabConfig(directory=Path("/tmp/l")))
    g = conf["global"]
    assert g["mon host"] == "[v2:127.0.0.1:3300]"
    assert g["osd crush chooseleaf type"] == "0"
    assert g["osd pool default size"] == "3"
    assert g["keyring"] == "/tmp/l/keyring"
    assert conf["mgr"]["mgr module path"] == "/tmp/l/mgr-modules"
    assert conf["client.rgw.pwlab"]["rgw frontends"] == "beast endpoint=127.0.0.1:7480"
    for osd in range(3):
        assert conf[f"osd.{osd}"]["crush location"] == "root=default host=pwlab-host1"


def test_three_host_lab_binds_each_osd_in_its_namespace_and_uses_host_failure_domain() -> None:
    conf = parse(LabConfig(directory=Path("/tmp/l"), hosts=3, subnet_index=2, mon_port=13300))
    assert conf["global"]["mon host"] == "[v2:198.18.2.1:13300]"
    assert conf["global"]["public network"] == "198.18.2.0/24"
    assert conf["global"]["osd crush chooseleaf type"] == "1"
    assert conf["osd.1"]["public addr"] == "198.18.2.12"
    assert conf["osd.1"]["crush location"] == "root=default host=pwlab-host2"


def test_a_cluster_network_lab_binds_each_osds_cluster_address_on_it() -> None:
    conf = parse(LabConfig(directory=Path("/tmp/l"), hosts=3, subnet_index=2, cluster_network=True))
    assert conf["global"]["cluster network"] == "198.19.2.0/25"
    assert (conf["osd.1"]["public addr"], conf["osd.1"]["cluster addr"]) == ("198.18.2.12", "198.19.2.12")
    plain = parse(LabConfig(directory=Path("/tmp/l"), hosts=3, subnet_index=2))
    assert "cluster network" not in plain["global"]
    assert plain["osd.1"]["cluster addr"] == "198.18.2.12"


def test_one_osd_lab_allows_size_one_pools_without_warning() -> None:
    g = parse(LabConfig(osds=1))["global"]
    assert g["osd pool default size"] == "1"
    assert g["mon allow pool size one"] == "true"
    assert g["mon warn on pool no redundancy"] == "false"


def test_file_backing_lets_bluestore_create_its_file() -> None:
    assert parse(LabConfig(osd_backing="file"))["osd"]["bluestore block create"] == "true"
    assert parse(LabConfig(osd_backing="loop"))["osd"]["bluestore block create"] == "false"


def test_a_shared_db_device_keeps_rocksdb_on_it_while_it_fits() -> None:
    assert parse(LabConfig(db_device="shared"))["osd"]["bluestore volume selection policy"] == "fit_to_fast"
    assert "bluestore volume selection policy" not in parse(LabConfig())["osd"]
