import pytest

from perfwatch_host_exporter.identity import COMM_KINDS, identify, options
from perfwatch_host_exporter.procfs import parse_cmdline, parse_stat

# A real ceph-osd stat line (Pacific, lab), with the comm changed to one holding ") (" and spaces.
STAT = (
    "19494 (tp_osd) (x y) S 1 19494 19494 0 -1 4194560 1339066 0 0 0 "
    "18519 8650 0 0 20 0 67 0 103563 2431721472 142913 18446744073709551615 "
    "1 1 0 0 0 0 0 4096 16903 0 0 0 17 3 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
)


def test_stat_fields_are_counted_after_the_last_parenthesis() -> None:
    st = parse_stat(STAT)
    assert st.comm == "tp_osd) (x y"
    assert (st.utime_ticks, st.stime_ticks) == (18519, 8650)
    assert st.threads == 67
    assert st.start_ticks == 103563
    assert st.rss_pages == 142913


def test_garbled_stat_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        parse_stat("12 (ceph-osd) S 1 2 3")
    with pytest.raises(ValueError):
        parse_stat("no parentheses here")


def test_cmdline_is_nul_separated() -> None:
    assert parse_cmdline(b"ceph-osd\0-f\0-i\x000\0") == ["ceph-osd", "-f", "-i", "0"]
    assert parse_cmdline(b"") == []


@pytest.mark.parametrize(
    ("comm", "argv", "label", "entity", "cluster"),
    [
        ("ceph-osd", ["ceph-osd", "-f", "-c", "/x/ceph.conf", "-i", "3"], "osd.3", "osd.3", "ceph"),
        ("ceph-mon", ["ceph-mon", "--id=a", "--cluster=lab"], "mon.a", "mon.a", "lab"),
        ("ceph-mgr", ["ceph-mgr", "--id", "x", "--cluster", "c2"], "mgr.x", "mgr.x", "c2"),
        ("ceph-osd", ["/usr/bin/ceph-osd", "-n", "osd.7", "-f", "--setuser", "ceph"], "osd.7", "osd.7", "ceph"),
        ("radosgw", ["radosgw", "-f", "-n", "client.rgw.x"], "rgw.x", "client.rgw.x", "ceph"),
        (
            "radosgw",
            ["radosgw", "--name=client.rgw.realm.host.abc"],
            "rgw.realm.host.abc",
            "client.rgw.realm.host.abc",
            "ceph",
        ),
        ("radosgw", ["radosgw", "-n", "client.gw1"], "rgw.gw1", "client.gw1", "ceph"),
        ("radosgw", ["radosgw", "-i", "rgw.gw2"], "rgw.gw2", "client.rgw.gw2", "ceph"),
        ("radosgw", ["radosgw", "--id", "gw3"], "rgw.gw3", "client.gw3", "ceph"),
        ("ceph-mds", ["ceph-mds", "-i", "fs1.a"], "mds.fs1.a", "mds.fs1.a", "ceph"),
    ],
)
def test_daemon_names_from_argv(comm: str, argv: list[str], label: str, entity: str, cluster: str) -> None:
    ident = identify(COMM_KINDS[comm], argv, 42)
    assert ident is not None
    assert (ident.label, ident.entity, ident.cluster) == (label, entity, cluster)


def test_only_the_daemons_programs_are_daemons() -> None:
    assert set(COMM_KINDS) == {"ceph-osd", "ceph-mon", "ceph-mgr", "ceph-mds", "radosgw"}
    assert "ceph" not in COMM_KINDS and "radosgw-admin" not in COMM_KINDS


def test_admin_socket_and_osd_data_from_argv_with_metavariables() -> None:
    argv = ["ceph-osd", "--admin_socket", "/run/$cluster/$name.asok", "--osd-data=/srv/${cluster}-$id", "-i", "2"]
    ident = identify("osd", argv, 9)
    assert ident is not None
    assert ident.admin_socket == "/run/ceph/osd.2.asok"
    assert ident.osd_data == "/srv/ceph-2"


def test_flags_without_values_do_not_swallow_the_next_option() -> None:
    assert options(["ceph-osd", "-f", "-i", "1", "-d"]) == {"id": "1"}
    assert options(["ceph-osd", "-i"]) == {}, "a trailing option without its value is ignored"


def test_underscores_are_folded_in_option_names_but_kept_in_values() -> None:
    argv = ["radosgw", "--name=client.rgw.my_gw", "--admin_socket=/var/run/ceph_a/x.asok", "--osd_data=/srv/ceph_osd"]
    found = options(argv)
    assert found["name"] == "client.rgw.my_gw" and found["osd_data"] == "/srv/ceph_osd"
    assert found["admin_socket"] == "/var/run/ceph_a/x.asok"
    ident = identify("rgw", argv, 5)
    assert ident is not None and ident.label == "rgw.my_gw"
