"""The generic keyed table model: a new list of records applied with the smallest change
(removals, insertions, changed cells only; a reset, or a layout change where the table moves
rows, when known rows change places), columns found by key, the Qt model contract kept."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import pytest
from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from app.domain.display import Precision
from app.ui.models.columns import Column, column_numbers
from app.ui.models.keyed_table import KeyedTableModel, runs
from app.ui.models.record_cells import Cell, number_cell, text_cell
from app.ui.models.sorting import SORT_ROLE

D = Decimal


@dataclass(frozen=True)
class Item:
    name: str
    size: Decimal
    note: str = ""


COLUMNS: tuple[Column[Item], ...] = (
    Column("name", "Name", lambda item, _: text_cell(item.name), "The item's name"),
    Column("size", "Size", lambda item, _: number_cell(item.size, 2), numeric=True),
    Column("note", "Note", lambda item, _: text_cell(item.note)),
)


class Items(KeyedTableModel[Item]):
    def set_items(self, items: list[Item], *, reset: bool = False) -> None:
        self.apply([(item.name, item) for item in items], reset=reset)


class MovingItems(Items):
    move_rows = True


class Spy:
    """Every signal that changes the table, in order."""

    def __init__(self, model: Items) -> None:
        self.events: list[tuple[object, ...]] = []
        model.dataChanged.connect(
            lambda a, b, *_: self.events.append(("changed", a.row(), a.column(), b.column()))
        )
        model.rowsInserted.connect(lambda _p, f, last: self.events.append(("inserted", f, last)))
        model.rowsRemoved.connect(lambda _p, f, last: self.events.append(("removed", f, last)))
        model.modelReset.connect(lambda: self.events.append(("reset",)))
        model.layoutChanged.connect(lambda: self.events.append(("layout",)))


def names(model: Items) -> list[str]:
    return [str(model.index(row, 0).data()) for row in range(model.rowCount())]


def test_runs_of_adjacent_columns() -> None:
    assert runs([]) == []
    assert runs([1, 2, 5]) == [(1, 2), (5, 5)]
    assert runs(range(4)) == [(0, 3)]


def test_columns_are_data_found_by_key(qtbot: QtBot) -> None:
    model = Items(COLUMNS, Precision())
    assert column_numbers(COLUMNS) == {"name": 0, "size": 1, "note": 2}
    assert model.column("size") == 1
    with pytest.raises(KeyError):
        model.column("price")
    with pytest.raises(ValueError, match="unique"):
        column_numbers((*COLUMNS, COLUMNS[0]))
    horizontal = Qt.Orientation.Horizontal
    assert model.headerData(1, horizontal) == "Size"
    assert model.headerData(0, horizontal, Qt.ItemDataRole.ToolTipRole) == "The item's name"
    alignment = model.headerData(1, horizontal, Qt.ItemDataRole.TextAlignmentRole)
    assert alignment & Qt.AlignmentFlag.AlignRight
    model.set_items([Item("a", D("1.5"))])
    size = model.index(0, 1)
    assert size.data() == "1.50" and size.data(SORT_ROLE) == D("1.5")
    assert size.data(Qt.ItemDataRole.FontRole) == model.number_font
    assert model.index(0, 0).data(Qt.ItemDataRole.FontRole) is None


def test_a_new_list_changes_only_what_changed(qtmodeltester: ModelTester) -> None:
    model = Items(COLUMNS, Precision())
    model.set_items([Item("a", D(1)), Item("b", D(2)), Item("c", D(3))])
    qtmodeltester.check(model)  # type: ignore[no-untyped-call]
    spy = Spy(model)

    model.set_items([Item("a", D(1)), Item("b", D(2), "x"), Item("c", D(3))])
    assert spy.events == [("changed", 1, 2, 2)]  # b's note, nothing else

    spy.events.clear()
    model.set_items([Item("n", D(0)), Item("a", D(1)), Item("c", D(4)), Item("z", D(9))])
    assert spy.events == [
        ("removed", 1, 1),  # b went
        ("inserted", 0, 0),  # n on top
        ("changed", 2, 1, 1),  # c's size
        ("inserted", 3, 3),  # z at the end
    ]
    assert names(model) == ["n", "a", "c", "z"]
    assert model.position("c") == 2 and model.position("b") is None
    assert model.keys() == ["n", "a", "c", "z"]
    assert model.record(3) == Item("z", D(9))
    assert model.cell(2, 1) == Cell("4.00", D(4), "4.00")  # exported as shown, ungrouped


def test_known_rows_that_change_places_reset_the_model(qtmodeltester: ModelTester) -> None:
    model = Items(COLUMNS, Precision())
    model.set_items([Item("a", D(1)), Item("b", D(2))])
    qtmodeltester.check(model)  # type: ignore[no-untyped-call]
    spy = Spy(model)
    model.set_items([Item("b", D(2)), Item("a", D(1))])
    assert spy.events == [("reset",)]
    assert names(model) == ["b", "a"]
    spy.events.clear()
    model.set_items([Item("b", D(2)), Item("a", D(1))], reset=True)  # asked for
    assert spy.events == [("reset",)]


def test_a_moving_table_keeps_its_rows_through_a_layout_change(
    qtmodeltester: ModelTester,
) -> None:
    model = MovingItems(COLUMNS, Precision())
    model.set_items([Item("a", D(1)), Item("b", D(2)), Item("c", D(3))])
    qtmodeltester.check(model)  # type: ignore[no-untyped-call]
    current = QPersistentModelIndex(model.index(0, 1))  # a's size, as a selection holds it
    spy = Spy(model)
    model.set_items([Item("c", D(3)), Item("b", D(2)), Item("a", D(5))])
    assert spy.events == [("layout",), ("changed", 2, 1, 1)]
    assert names(model) == ["c", "b", "a"]
    assert (current.row(), current.column()) == (2, 1)
    assert current.data() == "5.00"
    assert model.index(5, 0) == QModelIndex()
