from perfwatch.collection.collector import Collector, Settings
from perfwatch.commands import metrics_table as osd_table
from tests.unit.fakes import PERF_DUMP, FakeAdapter


def test_rows_compute_hit_ratios_from_the_counters() -> None:
    adapter = FakeAdapter(2)
    collector = Collector(adapter, clock=lambda: 1000.0)
    collector.collect(Settings(1, 2))
    rows = osd_table.rows(collector.latest, collector.last_success, now=1010.0)
    assert [r["daemon"] for r in rows] == ["osd.0", "osd.1"]
    bs = PERF_DUMP["bluestore"]
    hits, misses = bs["onode_hits"], bs["onode_misses"]
    assert rows[0]["onode_hit_ratio"] == round(hits / (hits + misses), 4)
    assert rows[0]["spillover_bytes"] == PERF_DUMP["bluefs"]["slow_used_bytes"]
    assert rows[0]["age_seconds"] == 10.0
    text = osd_table.render_plain(rows)
    assert text.splitlines()[0].split()[:3] == ["OSD", "ONODE", "HIT"]
    assert "%" in text and "MiB" in text


def test_an_osd_whose_read_failed_keeps_a_row_with_its_age() -> None:
    adapter = FakeAdapter(2)
    collector = Collector(adapter, clock=lambda: 1000.0)
    collector.collect(Settings(0.2, 2))
    adapter.hang.add(1)
    collector.collect(Settings(0.2, 2))
    rows = {r["daemon"]: r for r in osd_table.rows(collector.latest, collector.last_success, now=1030.0)}
    assert rows["osd.1"]["onode_hit_ratio"] is None and rows["osd.1"]["age_seconds"] == 30.0


def test_empty_table_says_why() -> None:
    assert "no OSD counters" in osd_table.render_plain([])


def test_human_bytes() -> None:
    assert osd_table.human_bytes(512) == "512 B"
    assert osd_table.human_bytes(3 * 1024**3) == "3.0 GiB"
