"""The collection's CPU budget (mgr_module/perfwatch/collection/budget.py), the CPU clock it reads (cpu_clock.py),
and how the collector, its adapter's command threads and `ceph perfwatch status` keep to it and report it."""

from __future__ import annotations

import itertools
import math
import time
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from perfwatch.ceph import cpu_clock
from perfwatch.ceph.call_pool import CallPool
from perfwatch.ceph.cpu_clock import thread_cpu_clock
from perfwatch.collection.budget import CollectionBudget
from perfwatch.collection.collector import Collector, Settings
from perfwatch.commands.status_report import cpu_budget
from tests.unit.fakes import FakeAdapter


def test_a_collection_puts_off_the_next_until_its_cpu_is_within_the_share_of_the_time_since_it_began() -> None:
    budget = CollectionBudget()
    assert budget.allows(0.0, 5.0), "the first collection always runs"
    budget.record(started=100.0, cpu=2.7)  # 10,000 OSDs' cycle
    assert budget.next_at(5.0) == 154.0  # 2.7 s is 5 % of 54 s
    assert not budget.allows(130.0, 5.0), "the next pass of collect_interval 30 s is too soon"
    assert budget.allows(160.0, 5.0), "the one after is in budget"
    assert budget.deferred == 1
    assert budget.allows(130.0, 10.0), "a larger budget set at runtime counts at once"
    assert budget.allows(100.5, 100.0), "100 % never puts one off, even a pass before the CPU's own seconds"
    assert budget.deferred == 1


def test_the_budget_keeps_any_cycle_cost_within_its_share_over_a_run_of_passes() -> None:
    for cpu, percent in ((0.01, 5.0), (2.7, 5.0), (9.0, 5.0), (2.7, 0.5), (0.2, 0.01)):
        budget, now, spent, starts = CollectionBudget(), 0.0, 0.0, []
        while now < 20_000:
            if budget.allows(now, percent):
                starts.append(now)
                budget.record(now, cpu)
                spent += cpu
            now += cpu + 30.0  # the pass's own time, then collect_interval
        assert spent <= percent / 100 * now + cpu, (cpu, percent, spent, now)
        assert all(b - a >= cpu * 100 / percent for a, b in itertools.pairwise(starts)), (cpu, percent)


def test_a_negative_cpu_figure_counts_as_none() -> None:
    budget = CollectionBudget()
    budget.record(10.0, -1.0)
    assert budget.last_cpu == 0.0 and budget.allows(10.0, 0.01)


def busy(seconds: float) -> None:
    clock = thread_cpu_clock()
    assert clock is not None, "Linux has a per-thread CPU clock"
    t0 = clock()
    while clock() - t0 < seconds:
        sum(range(1000))


def test_the_command_pool_counts_the_cpu_its_threads_spend_and_not_their_waiting() -> None:
    pool = CallPool("test-cpu")
    pool.call("a", lambda: busy(0.05), timeout=5)
    pool.call("b", lambda: time.sleep(0.2), timeout=5)
    spent = pool.cpu_seconds()
    assert 0.05 <= spent < 0.15, spent


class BusyAdapter(FakeAdapter):
    """Each OSD's answer costs its command thread 5 ms of CPU, as a slow cluster's would."""

    def tell_osd_text(self, osd_id: int, command: dict, timeout: float) -> str:
        busy(0.005)
        return super().tell_osd_text(osd_id, command, timeout)


def families(collector: Collector) -> dict[str, Any]:
    text = collector.cache.body(time.time(), compressed=False).decode()
    return {s.name: s.value for f in text_string_to_metric_families(text) for s in f.samples}


def test_the_collector_puts_off_a_collection_over_budget_and_says_so_on_its_next_page() -> None:
    collector = Collector(BusyAdapter(4))
    tight = Settings(request_timeout=1.0, max_in_flight=2, cpu_budget_percent=0.01)
    assert collector.collect(tight)
    first = collector.budget.last_cpu
    assert first >= 0.02, "the four answers' CPU in the command threads counts"
    assert not collector.collect(tight), "at 0.01 % the next may wait 200 s at least"
    assert collector.cycles == 1 and collector.budget.deferred == 1
    assert families(collector)["ceph_perfwatch_collections_deferred_total"] == 1, "each scrape counts them anew"
    assert collector.collect(tight._replace(cpu_budget_percent=100.0)), "the budget read at each pass"
    fams = families(collector)
    assert fams["ceph_perfwatch_collections_deferred_total"] == 1
    assert fams["ceph_perfwatch_collections_total"] == 2
    # the first cycle's whole CPU, and the second's up to this page's rendering
    assert first + 0.02 <= fams["ceph_perfwatch_collection_cpu_seconds_total"] <= collector.cpu_seconds
    report = cpu_budget(collector.budget, collector.cpu_seconds, 0.01, time.monotonic())
    assert report["deferred_passes"] == 1 and report["cpu_budget_percent"] == 0.01
    assert report["next_allowed_in_seconds"] > 100
    assert report["cpu_seconds_total"] == round(collector.cpu_seconds, 3)


def test_an_adapter_whose_cpu_figure_fails_still_collects() -> None:
    class NoFigure(FakeAdapter):
        def command_cpu_seconds(self) -> float:
            raise RuntimeError("no figure")

    collector = Collector(NoFigure(2))
    assert collector.collect(Settings(request_timeout=1.0, max_in_flight=2, cpu_budget_percent=5.0))
    assert families(collector)["ceph_perfwatch_daemons_polled"] == 2


def test_a_budget_outside_the_option_bounds_counts_as_the_nearest_bound() -> None:
    """Ceph refuses such values at `ceph config set` (the cluster test tries); should one reach the module, a
    budget of 0 or less must not stop the collection for good, nor NaN make every pass wait."""
    budget = CollectionBudget()
    budget.record(0.0, 1.0)
    for percent in (0.0, -5.0, 1e-9):
        assert budget.next_at(percent) == 10_000.0, percent  # 1 s is 0.01 % of 10,000 s
    assert budget.allows(0.5, float("nan")) and budget.allows(0.5, 250.0)


def failing_clock() -> float:
    raise OSError("clock_gettime failed")


def test_a_failing_cpu_clock_in_a_command_thread_ends_neither_the_call_nor_the_key() -> None:
    """Between taking a job and handing it over nothing may end a pool thread: its key would stay busy."""
    pool = CallPool("test-clock")
    pool._cpu_clock = failing_clock
    assert pool.call("osd.0", lambda: "answer", timeout=5) == "answer"
    assert pool.outstanding("osd.0") == 0 and pool.call("osd.0", lambda: 2, timeout=5) == 2
    assert pool.cpu_seconds() == 0.0


def test_a_failing_cpu_clock_in_the_collecting_thread_never_stops_the_collection() -> None:
    collector = Collector(BusyAdapter(2))
    collector._thread_cpu = failing_clock
    settings = Settings(request_timeout=1.0, max_in_flight=2, cpu_budget_percent=0.01)
    assert collector.collect(settings) and collector.collect(settings), "a meter that fails counts as no CPU"
    assert collector.cycles == 2 and collector.budget.last_cpu == 0.0
    assert families(collector)["ceph_perfwatch_daemons_polled"] == 2


def test_a_cpu_reading_is_nan_without_a_clock_or_when_it_fails_and_the_thread_s_cpu_otherwise() -> None:
    assert math.isnan(cpu_clock.reading(None)) and math.isnan(cpu_clock.reading(failing_clock))
    clock = cpu_clock.thread_cpu_clock()
    assert clock is not None
    before = cpu_clock.reading(clock)
    busy(0.02)
    assert 0.02 <= cpu_clock.reading(clock) - before < 1.0
