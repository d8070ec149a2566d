"""ResultBoard.exposition() keeps its last page while nothing it is made of changed (at 10,000 OSDs it is
120,000 per-OSD values, which change only when a run ends), and makes it anew after any change: each test
below changes one thing and fails if that change is not seen (a stale page is the risk)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from perfwatch.benchmarks import result_board
from perfwatch.benchmarks.measurement import Measurement
from perfwatch.benchmarks.records.store import BenchStore
from perfwatch.benchmarks.result_board import ResultBoard
from perfwatch.collection import module_families as mf
from perfwatch.common.exposition import Column, as_samples
from tests.unit.perfwatch.benchmarks.records.test_store import KV, Log
from tests.unit.perfwatch.benchmarks.test_result_board import finished


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How often result_exposition made a page."""
    calls = [0]
    real = result_board.result_exposition

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(result_board, "result_exposition", counted)
    yield calls


def board_with_runs(osds: int = 3) -> tuple[ResultBoard, BenchStore]:
    kv = KV()
    store = BenchStore(kv.get, kv.put, 50, 10, Log())
    board = ResultBoard(store, device_classes=lambda: {osd: "ssd" for osd in range(osds)})
    for k in range(2):
        ms = [Measurement("rados", "write_latency", osd, 0.001 * (osd + 1 + k), "seconds") for osd in range(osds)]
        run = finished("rados", False, *ms)
        run.ended_at = 1714564800.0 + k
        store.add_run(run.to_dict())
        store.judge(ms, {}, 0.5, 1)
        board.on_finished(run)
    return board, store


def page(
    board: ResultBoard, outcomes: dict[str, int] | None = None, min_results: int = 1, baselines: bool = True
) -> set:
    return {
        (s.family, s.suffix, s.labels, s.value)
        for s in as_samples(board.exposition(outcomes or {}, min_results, baselines))
    }


def fresh(store: BenchStore, board: ResultBoard, **kwargs: Any) -> set:
    """The page a board that never cached would make of the same state."""
    again = ResultBoard(store, device_classes=lambda: {})
    again._last = board.last_results()
    again._histograms = board._histograms
    return page(again, **kwargs)


def test_the_same_state_asked_again_is_not_made_again(made: list[int]) -> None:
    board, _store = board_with_runs()
    first = page(board)
    assert made == [1]
    assert page(board) == first and page(board) == first
    assert made == [1]


def test_what_a_caller_does_with_the_page_does_not_change_the_next() -> None:
    board, _store = board_with_runs()
    items = board.exposition({}, 1, True)
    count = len(items)
    items.clear()
    assert len(board.exposition({}, 1, True)) == count


def test_a_column_of_the_page_cannot_be_changed_by_a_caller() -> None:
    board, _store = board_with_runs()
    columns = [item for item in board.exposition({}, 1, True) if isinstance(item, Column)]
    assert columns
    for column in columns:
        with pytest.raises(AttributeError):  # a tuple: no append, so no caller changes the page kept
            column.series.append(("osd.99", 1.0))  # type: ignore[attr-defined]


def test_a_change_while_the_page_is_made_shows_on_the_next(monkeypatch: pytest.MonkeyPatch) -> None:
    """The counts are read before what the page is made of: a change that lands in between (the runner
    thread recording a verdict while the collector thread makes the page) is not hidden by the page kept."""
    board, store = board_with_runs()
    real = result_board.result_exposition

    def raced(*args: Any, **kwargs: Any) -> Any:
        made = real(*args, **kwargs)  # of the regressions as they were
        a_regression_raised(board, store)
        a_run_finished(board, store)
        return made

    monkeypatch.setattr(result_board, "result_exposition", raced)
    assert not any(s[0] == mf.BENCH_IS_REGRESSION for s in page(board))
    monkeypatch.setattr(result_board, "result_exposition", real)
    after = page(board)
    assert any(s[0] == mf.BENCH_IS_REGRESSION for s in after)
    assert after == fresh(store, board)


Change = Callable[[ResultBoard, BenchStore], None]


def a_run_finished(board: ResultBoard, store: BenchStore) -> None:
    board.on_finished(finished("rados", False, Measurement("rados", "write_latency", 1, 0.5, "seconds")))


def a_run_recorded(board: ResultBoard, store: BenchStore) -> None:
    run = finished("osd", True, Measurement("osd", "write_iops_4k", 1, 100.0, "iops"))
    run.ended_at = 1714570000.0
    store.add_run(run.to_dict())


def judged(board: ResultBoard, store: BenchStore) -> None:
    for _ in range(3):  # faster results (a slower one stays out of the baseline), enough to move its median
        store.judge([Measurement("rados", "write_latency", 0, 0.0001, "seconds")], {}, 0.5, 1)


def a_regression_raised(board: ResultBoard, store: BenchStore) -> None:
    store.record_verdicts({"rados/write_latency/osd.0": 3}, {"rados/write_latency/osd.0": {"since": 1.0}})


def forgotten(board: ResultBoard, store: BenchStore) -> None:
    store.forget(["rados/write_latency/osd.2"])


def an_attempt_marked(board: ResultBoard, store: BenchStore) -> None:
    store.mark_attempt("rados", 1714599999.0)


@pytest.mark.parametrize(
    "change", [a_run_finished, a_run_recorded, judged, a_regression_raised, forgotten, an_attempt_marked]
)
def test_every_change_of_what_the_page_shows_makes_it_anew(made: list[int], change: Change) -> None:
    board, store = board_with_runs()
    before = page(board)
    change(board, store)
    after = page(board)
    assert made == [2]
    assert after != before
    assert after == fresh(store, board)


def test_a_regression_cleared_is_gone_from_the_next_page() -> None:
    board, store = board_with_runs()
    a_regression_raised(board, store)
    assert any(s[0] == mf.BENCH_IS_REGRESSION for s in page(board))
    store.record_verdicts({"rados/write_latency/osd.0": None}, {"rados/write_latency/osd.0": None})
    assert not any(s[0] == mf.BENCH_IS_REGRESSION for s in page(board))


@pytest.mark.parametrize(
    "asked", [{"outcomes": {"rados/done": 2}}, {"min_results": 5}, {"baselines": False}], ids=["outcomes", "min", "off"]
)
def test_other_arguments_make_another_page(made: list[int], asked: dict[str, Any]) -> None:
    board, store = board_with_runs()
    before = page(board)
    after = page(board, **asked)
    assert made == [2] and after != before
    assert after == fresh(store, board, **asked)
    assert page(board) == before  # and back
