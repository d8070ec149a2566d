import pytest

from lab.config import LabConfig
from lab.topology import plan


def test_one_host_is_the_loopback_fast_path() -> None:
    topo = plan(LabConfig())
    assert not topo.namespaced
    assert topo.core_address == "127.0.0.1"
    assert [h.netns for h in topo.hosts] == [None]
    assert [o.host.crush_name for o in topo.osds] == ["pwlab-host1"] * 3


def test_three_hosts_get_a_namespace_address_and_osd_each() -> None:
    topo = plan(LabConfig(hosts=3, subnet_index=7))
    assert topo.bridge == "pwlab-br"
    assert topo.core_address == "198.18.7.1"
    assert [h.netns for h in topo.hosts] == ["pwlab-h1", "pwlab-h2", "pwlab-h3"]
    assert [h.address for h in topo.hosts] == ["198.18.7.11", "198.18.7.12", "198.18.7.13"]
    assert {o.id: o.host.index for o in topo.osds} == {0: 1, 1: 2, 2: 3}


def test_a_cluster_network_gives_each_host_eth1_and_a_non_ceph_eth2_in_two_halves_of_198_19() -> None:
    topo = plan(LabConfig(hosts=3, subnet_index=7, cluster_network=True))
    assert (topo.cluster_bridge, topo.other_bridge, topo.cluster_cidr) == ("pwlab-cb", "pwlab-ob", "198.19.7.0/25")
    assert topo.other_sink == "198.19.7.129"
    assert [h.cluster_address for h in topo.hosts] == ["198.19.7.11", "198.19.7.12", "198.19.7.13"]
    assert [h.other_address for h in topo.hosts] == ["198.19.7.141", "198.19.7.142", "198.19.7.143"]
    assert [(h.cluster_veth, h.other_veth) for h in topo.hosts][1] == ("pwlab-c2", "pwlab-o2")
    # the most hosts a lab has: every cluster address in the lower /25, every other one in the upper
    big = plan(LabConfig(hosts=32, osds=32, cluster_network=True))
    assert all(10 < int(h.cluster_address.rsplit(".", 1)[1]) < 128 for h in big.hosts if h.cluster_address)
    assert all(129 < int(h.other_address.rsplit(".", 1)[1]) < 255 for h in big.hosts if h.other_address)
    assert plan(LabConfig(hosts=3)).cluster_bridge is None
    assert plan(LabConfig(hosts=3)).hosts[0].cluster_address is None


def test_osds_are_spread_round_robin() -> None:
    topo = plan(LabConfig(hosts=2, osds=5))
    per_host = {h.index: [o.id for o in topo.osds if o.host == h] for h in topo.hosts}
    assert per_host == {1: [0, 2, 4], 2: [1, 3]}
    assert topo.host_of(3).index == 2


def test_interface_names_fit_the_kernel_limit_for_the_longest_name() -> None:
    topo = plan(LabConfig(name="abcdefgh", hosts=32, osds=32))
    topo = plan(LabConfig(name="abcdefgh", hosts=32, osds=32, cluster_network=True))
    veths = [v for h in topo.hosts for v in (h.veth, h.cluster_veth, h.other_veth) if v]
    names = [topo.bridge, topo.cluster_bridge, topo.other_bridge] + veths + [f"{v}p" for v in veths]
    assert max(len(n) for n in names if n) <= 15


def test_the_load_client_has_a_namespace_of_its_own_only_when_hosts_do() -> None:
    assert plan(LabConfig()).client.netns is None
    client = plan(LabConfig(hosts=3, subnet_index=7)).client
    assert (client.netns, client.veth, client.address) == ("pwlab-cl", "pwlab-cl", "198.18.7.250")
    assert client.address not in [h.address for h in plan(LabConfig(hosts=32, osds=32)).hosts]


def test_hosts_are_found_by_index_short_name_or_crush_name() -> None:
    topo = plan(LabConfig(hosts=3))
    assert {topo.host_named(n).index for n in ("2", "h2", "host2", "pwlab-host2")} == {2}
    assert topo.osds_on(topo.host_named("3")) == [2]
    with pytest.raises(KeyError, match=r"no host 'h9'.*pwlab-host1, pwlab-host2, pwlab-host3"):
        topo.host_named("h9")
