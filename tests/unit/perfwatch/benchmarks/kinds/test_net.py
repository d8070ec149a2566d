from perfwatch.benchmarks.kinds.net import ping_measurements


def iface(name: str, avg_1min: float) -> dict:
    return {"interface": name, "average": {"1min": avg_1min, "5min": 9.0, "15min": 9.0}, "last": 9.0}


def test_ping_times_as_pacific_dumps_them_become_per_osd_front_and_back_means() -> None:
    # The shape of get('osd_ping_times') on Pacific 16.2.15: per OSD a network_ping_times list per peer.
    data = {
        "osd_ping_times": [
            {
                "osd": 2,
                "network_ping_times": [
                    {"osd": 0, "last update": "x", "interfaces": [iface("back", 0.4), iface("front", 0.6)]},
                    {"osd": 1, "last update": "x", "interfaces": [iface("back", 0.6), iface("front", 1.0)]},
                ],
            },
            {"osd": 3, "network_ping_times": []},
        ]
    }
    got = {(m.osd, m.metric): m.value for m in ping_measurements(data)}
    assert got == {(2, "ping_back"): 0.0005, (2, "ping_front"): 0.0008}
    assert all(m.unit == "seconds" and m.kind == "net" for m in ping_measurements(data))


def test_nothing_reported_gives_nothing() -> None:
    assert ping_measurements({}) == []
