"""Record tables at many rows: the record view sorts by key lists exactly as the
comparison sort did, filters by prebuilt texts, keeps the selection through sorts, filters and
new rows, and does big work in slices that let the event loop run; big pages reach the model
by a sliced job; the ledger keeps a trade's legs together on both paths."""

from __future__ import annotations

import asyncio
import contextlib
import csv
import functools
import gc
import random
import time
from collections.abc import Hashable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QItemSelectionModel, Qt, QTimer
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from app.domain.display import Precision
from app.services import slices
from app.services.ledger_browser import LedgerQuery, LedgerSnapshot, group_rows, group_steps
from app.services.slices import run_now
from app.ui.models.columns import Column
from app.ui.models.ledger_model import LedgerModel, LedgerSortProxy, row_key
from app.ui.models.record_cells import number_cell, text_cell
from app.ui.models.record_view import (
    RecordTableModel,
    RecordView,
    make_plan,
    positions,
    sorted_rows,
)
from app.ui.models.sorting import sort_less
from app.ui.panels.record_parts import RecordTable
from app.ui.qt import QEventLoop
from tests.helpers.qt import click_header, run
from tests.helpers.records import Item, items, ledger_entries

D = Decimal
WAIT_MS = 20_000


COLUMNS: tuple[Column[Item], ...] = (
    Column("name", "Name", lambda item, _: text_cell(item.name)),
    Column("size", "Size", lambda item, _: number_cell(item.size, 2), numeric=True),
    Column("note", "Note", lambda item, _: text_cell(item.note)),
)


class Items(RecordTableModel[Item]):
    def set_items(self, items: list[Item]) -> None:
        self.apply([(item.name, item) for item in items])


def comparison_sort(keys: list[Any], descending: bool, missing_first: bool) -> list[int]:
    """What ``QSortFilterProxyModel`` did with ``sort_less``: a stable sort by the comparison,
    descending by asking ``lessThan(right, left)``."""

    def compare(a: int, b: int) -> int:
        left, right = (keys[b], keys[a]) if descending else (keys[a], keys[b])
        if sort_less(left, right, missing_first=missing_first):
            return -1
        if sort_less(right, left, missing_first=missing_first):
            return 1
        return 0

    return sorted(range(len(keys)), key=functools.cmp_to_key(compare))


def test_key_sort_is_the_comparison_sort() -> None:
    rng = random.Random(5)
    # More rows than one sorted chunk: the merge of chunks is exercised too.
    keys: list[Any] = [None if rng.random() < 0.1 else D(rng.randint(0, 300)) for _ in range(5000)]
    for descending in (False, True):
        for missing_first in (False, True):
            ours = run_now(
                sorted_rows(
                    range(len(keys)), keys, descending=descending, missing_first=missing_first
                )
            )
            assert ours == comparison_sort(keys, descending, missing_first)


def test_a_plan_goes_from_the_old_rows_to_the_new() -> None:
    old: list[Hashable] = list(range(0, 300))
    new: list[Hashable] = [
        key for key in range(600, 250, -1) if key % 3
    ]  # removed, added and reordered
    plan = run_now(make_plan(old, new))
    assert plan.final == new and plan.where == {key: n for n, key in enumerate(new)}
    assert [old[n] for n in plan.gone] == [key for key in old if key not in set(new)]
    assert plan.added == [key for key in new if key not in set(old)]
    assert plan.inserts is None  # the kept rows changed order: a layout change places them
    odd: list[Hashable] = [key for key in range(0, 300) if key % 2]
    narrowed = run_now(make_plan(old, odd))
    assert narrowed.inserts == [] and narrowed.staged is not None  # 150 runs: one move
    assert narrowed.staged[:150] == odd


def test_a_sort_refills_the_replaced_index() -> None:
    keys: list[Hashable] = [f"k{number}" for number in range(5000)]
    spare = run_now(positions(keys))
    shuffled = keys[::-1]
    where = run_now(positions(shuffled, spare))
    assert where is spare  # the same rows: no new dict
    assert where == {key: n for n, key in enumerate(shuffled)}
    other = [*keys[1:], "new"]  # as many keys, not the same: a new dict, right
    fresh = run_now(positions(other, where))
    assert fresh is not where
    assert fresh == {key: n for n, key in enumerate(other)}
    assert run_now(positions(keys[:10], fresh)) == {key: n for n, key in enumerate(keys[:10])}


def test_sliced_jobs_pause_the_collector_and_freeze_what_they_made(
    qtbot: QtBot, qloop: QEventLoop
) -> None:
    seen: list[bool] = []
    kept: list[list[object]] = []

    def job(steps: int, busy: float) -> slices.Steps[int]:
        for _ in range(steps):
            seen.append(gc.isenabled())
            kept.append([object() for _ in range(100)])  # what a job leaves behind
            started = time.perf_counter()
            while time.perf_counter() - started < busy:  # a step's work
                pass
            yield
        return 7

    frozen = gc.get_freeze_count()
    assert gc.isenabled()
    assert run(qtbot, slices.sliced(job(3, 0.0))) == 7  # one slice: nothing worth freezing
    # (frozen objects an earlier test dropped may be freed meanwhile: the count never grows)
    assert gc.isenabled() and gc.get_freeze_count() <= frozen
    frozen = gc.get_freeze_count()
    assert run(qtbot, slices.sliced(job(3, slices.SLICE_S))) == 7  # three slices
    assert seen == [False] * 6
    assert gc.isenabled() and gc.get_freeze_count() > frozen


# -- the view over a real table ------------------------------------------------------------------


def big_table(qtbot: QtBot, count: int) -> tuple[Items, RecordView, RecordTable]:
    """A table of ``count`` items whose view and model take the sliced path at any size."""
    model = Items(COLUMNS, Precision())
    model.sync_rows = 100
    model.set_items(items(count))
    view = RecordView(missing_first=False)
    view.sync_rows = 100
    view.setSourceModel(model)
    table = RecordTable("bigTable")
    qtbot.addWidget(table)
    table.setModel(view)
    table.resize(800, 600)
    table.show()
    qtbot.waitExposed(table)
    return model, view, table


def shown(view: RecordView, column: int = 0) -> list[str]:
    return [str(view.index(row, column).data()) for row in range(view.rowCount())]


def selected_names(table: RecordTable) -> list[str]:
    return sorted(str(index.data()) for index in table.selectionModel().selectedRows(0))


@pytest.mark.slow
def test_a_big_sort_runs_in_slices_and_keeps_the_selection(qtbot: QtBot, qloop: QEventLoop) -> None:
    model, view, table = big_table(qtbot, 12_000)
    table.selectionModel().select(
        view.index(42, 0),
        QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows,
    )
    assert selected_names(table) == ["item-00042"]
    ticks: list[bool] = []
    click_header(table, model.column("size"))  # a trader's click on the header
    QTimer.singleShot(0, lambda: ticks.append(view.pending()))
    assert view.pending()  # not done inside the click
    qtbot.waitUntil(lambda: not view.pending(), timeout=WAIT_MS)
    assert ticks == [True]  # the loop ran other events while the sort was under way
    keys = [item.size for item in items(12_000)]
    expected = comparison_sort(keys, False, False)
    assert shown(view) == [f"item-{row:05d}" for row in expected]
    assert selected_names(table) == ["item-00042"]  # the selection followed its row
    click_header(table, model.column("size"))  # descending
    qtbot.waitUntil(lambda: not view.pending(), timeout=WAIT_MS)
    expected = comparison_sort(keys, True, False)
    assert shown(view) == [f"item-{row:05d}" for row in expected]
    view.sort(-1)  # the model's own order again
    qtbot.waitUntil(lambda: not view.pending(), timeout=WAIT_MS)
    assert shown(view) == [item.name for item in items(12_000)]
    assert selected_names(table) == ["item-00042"]


def test_a_big_filter_waits_for_the_pause_in_typing(qtbot: QtBot, qloop: QEventLoop) -> None:
    _, view, _ = big_table(qtbot, 6000)
    changes: list[int] = []
    view.viewChanged.connect(lambda: changes.append(view.rowCount()))
    view.set_text("al")
    view.set_text("alp")
    view.set_text("ALPHA  item-000")  # every word, any case
    assert view.pending() and view.rowCount() == 6000  # debounced: nothing done yet
    assert not [task for task in asyncio.all_tasks() if task.get_name() == "sort"]
    qtbot.waitUntil(lambda: not view.pending(), timeout=WAIT_MS)
    wanted = [i.name for i in items(6000) if i.note == "Alpha" and i.name.startswith("item-000")]
    assert shown(view) == wanted
    assert changes == [len(wanted)]  # one filter for the three keystrokes
    view.set_text("")
    qtbot.waitUntil(lambda: not view.pending(), timeout=WAIT_MS)
    assert view.rowCount() == 6000


def test_new_rows_join_a_sorted_filtered_view(qtbot: QtBot, qloop: QEventLoop) -> None:
    model, view, table = big_table(qtbot, 3000)
    view.sort(model.column("size"), Qt.SortOrder.AscendingOrder)
    view.set_text("beta")
    qtbot.waitUntil(lambda: not view.pending(), timeout=WAIT_MS)
    first = shown(view)[0]
    table.selectRow(0)
    more = [Item("new-low", D(-10_000), "beta"), Item("new-other", D(1), "gamma")]
    everything = more + items(3000)
    run(qtbot, model.apply_async(everything, lambda item: item.name))
    qtbot.waitUntil(lambda: not view.pending(), timeout=WAIT_MS)
    assert shown(view)[:2] == ["new-low", first]  # sorted in; the gamma one filtered out
    assert "new-other" not in shown(view)
    assert selected_names(table) == [first]


def test_sliced_export_writes_the_view(qtbot: QtBot, qloop: QEventLoop, tmp_path: Path) -> None:
    model, view, _ = big_table(qtbot, 3000)
    view.sort(model.column("size"), Qt.SortOrder.DescendingOrder)
    view.set_text("delta")
    qtbot.waitUntil(lambda: not view.pending(), timeout=WAIT_MS)
    sliced_path, now_path = tmp_path / "sliced.csv", tmp_path / "now.csv"
    assert run(qtbot, view.export(sliced_path)) == view.rowCount()
    assert view.export_now(now_path) == view.rowCount()
    assert sliced_path.read_text(encoding="utf-8") == now_path.read_text(encoding="utf-8")
    with sliced_path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["Name", "Size", "Note"]
    assert [row[0] for row in rows[1:]] == shown(view)
    assert all(row[2] == "delta" for row in rows[1:])


def test_an_export_under_way_leaves_no_file_under_the_chosen_name(
    qtbot: QtBot, qloop: QEventLoop, tmp_path: Path
) -> None:
    """The sliced export writes beside the target and renames at the end: a reader (or the
    trader's spreadsheet) never opens a half-written CSV under the name chosen, and nothing
    is left behind."""
    _, view, _ = big_table(qtbot, 3000)
    target = tmp_path / "view.csv"
    steps = view.export_steps(target)
    next(steps)  # the header and the first block are written
    assert not target.exists()
    assert [p.name for p in tmp_path.iterdir()] == [".view.csv.partial"]
    with contextlib.suppress(StopIteration):
        while True:
            next(steps)
    assert [p.name for p in tmp_path.iterdir()] == ["view.csv"]
    assert len(target.read_text(encoding="utf-8").splitlines()) == 3001


# -- the ledger ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_ledger_sorts_alike_at_once_and_in_slices(qtbot: QtBot, qloop: QEventLoop) -> None:
    entries = ledger_entries(3000)
    rows = group_rows(entries, D(1000), ["BTC/USD"])
    model = LedgerModel(Precision())
    model.set_snapshot(LedgerSnapshot(rows, LedgerQuery(), False, reset=True))
    at_once, in_slices = LedgerSortProxy(), LedgerSortProxy()
    at_once.sync_rows = 10**6
    in_slices.sync_rows = 0
    for view in (at_once, in_slices):
        view.setSourceModel(model)
    for column in ("amount", "asset", "time", "price"):
        for order in (Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder):
            at_once.sort(model.column(column), order)
            in_slices.sort(model.column(column), order)
            assert not at_once.pending()
            qtbot.waitUntil(lambda: not in_slices.pending(), timeout=WAIT_MS)
            keys = [at_once.mapToSource(at_once.index(r, 0)).row() for r in range(len(rows))]
            assert [
                in_slices.mapToSource(in_slices.index(r, 0)).row() for r in range(len(rows))
            ] == keys
            legs = [model.ledger_row(row) for row in keys]
            for number, row in enumerate(legs):  # a trade's legs together, in their order
                if row.linked and row.position == 0:
                    assert legs[number + 1].group == row.group
                    assert legs[number + 1].position == 1


def test_ledger_pages_reach_the_model_in_slices(qtbot: QtBot, qloop: QEventLoop) -> None:
    entries = ledger_entries(4000)
    model = LedgerModel(Precision())
    model.sync_rows = 100
    view = LedgerSortProxy()
    view.setSourceModel(model)
    inserted: list[tuple[int, int]] = []
    model.rowsInserted.connect(lambda _p, first, last: inserted.append((first, last)))
    first_page = group_rows(entries[:2000], None, ["BTC/USD"])
    snapshot = LedgerSnapshot(first_page, LedgerQuery(), True, reset=True)
    assert run(qtbot, model.show_snapshot(snapshot))
    assert model.rowCount() == 2000
    cells = model.cell(5, 0)
    # Load more: the browser groups the new page after the rows it has (same objects).
    tail = run_now(group_steps(entries[2000:], None, ["BTC/USD"], first_page[-1].group + 1))
    assert first_page + tail == group_rows(entries, None, ["BTC/USD"])
    more = LedgerSnapshot(first_page + tail, LedgerQuery(), False)
    assert run(qtbot, model.show_snapshot(more))
    assert inserted == [(2000, 3999)]  # one insert at the bottom, no reset
    assert model.cell(5, 0) is cells  # kept rows kept their cells
    assert [row_key(model.ledger_row(r)) for r in range(4000)] == [
        row_key(row) for row in first_page + tail
    ]
    stale = LedgerSnapshot(first_page, LedgerQuery(), False, reset=True)
    assert not run(qtbot, model.show_snapshot(stale, lambda: False))  # a newer one owns it
    assert model.rowCount() == 4000


class MovingItems(Items):
    move_rows = True  # known rows that change places move with a layout change


def expected_view(model: Items, column: int, descending: bool, words: list[str]) -> list[str]:
    """The rows the view must show: the model's rows with every word in their texts, stably
    sorted by the comparison sort."""
    rows = [
        row
        for row in range(model.rowCount())
        if all(
            word
            in "\n".join(
                f"{cell.display}\n{cell.export or ''}"
                for cell in (model.cell(row, c) for c in range(model.columnCount()))
            ).casefold()
            for word in words
        )
    ]
    if column >= 0:
        keys = [model.cell(row, column).sort for row in rows]
        keys = [k.casefold() if isinstance(k, str) else k for k in keys]
        rows = [rows[n] for n in comparison_sort(keys, descending, False)]
    return [str(model.record(row).name) for row in rows]


@pytest.mark.slow
def test_random_updates_sorts_and_filters_keep_the_view_right(
    qtbot: QtBot, qloop: QEventLoop, qtmodeltester: ModelTester
) -> None:
    """Seeded random rounds: the model gains, loses and reorders rows (apply and apply_async),
    the sort and the search change; after each, the view shows exactly the expected rows and
    the selected row stays selected while it is shown, on both paths; Qt's model tester checks
    every signal the view sends."""
    rng = random.Random(17)
    pool = items(400)
    for sync_rows in (10**6, 30):
        random_rounds(qtbot, qtmodeltester, rng, pool, sync_rows)


def random_rounds(
    qtbot: QtBot, tester: ModelTester, rng: random.Random, pool: list[Item], sync_rows: int
) -> None:
    model = MovingItems(COLUMNS, Precision())
    model.sync_rows = sync_rows
    view = RecordView()
    view.sync_rows = sync_rows
    view.setSourceModel(model)
    tester.check(view)  # type: ignore[no-untyped-call]  # stays attached: checks every signal
    table = RecordTable("randomTable")
    qtbot.addWidget(table)
    table.setModel(view)
    current = rng.sample(pool, 120)
    model.set_items(current)
    column, descending, words = -1, False, []
    for _ in range(25):
        before = selected_names(table)
        action = rng.choice(("update", "async", "sort", "filter"))
        if action in ("update", "async"):
            kept = [item for item in current if rng.random() > 0.1]
            new = [item for item in rng.sample(pool, 20) if item not in kept]
            current = kept + new
            if rng.random() < 0.3:
                rng.shuffle(current)
            if action == "update":
                model.set_items(current)
            else:
                run(qtbot, model.apply_async(current, lambda item: item.name))
        elif action == "sort":
            column = rng.choice((-1, 0, 1, 2))
            descending = rng.random() < 0.5
            order = Qt.SortOrder.DescendingOrder if descending else Qt.SortOrder.AscendingOrder
            view.sort(column, order)
        else:
            words = rng.choice(([], ["alpha"], ["item-00"], ["beta", "1"], ["-"]))
            view.set_text(" ".join(words))
        qtbot.waitUntil(lambda: not view.pending(), timeout=WAIT_MS)
        want = expected_view(model, column, descending, words)
        assert shown(view) == want, (action, column, descending, words)
        if action != "async":  # a big page that is no plain insert resets the model
            assert selected_names(table) == [name for name in before if name in want]
        if want and not table.selectionModel().selectedRows():
            table.selectRow(rng.randrange(len(want)))
