"""``CellPainter`` (made for a record table's repaint at 100,000 rows): the record tables'
cells look as Qt's own delegate draws them (backgrounds, selection, text colour, alignment,
where the text stands) in no theme, the dark one and the light one; a narrow column shows
elided text ("…"), never a number cut short as if whole; the shaped-text cache stays bounded;
``row_look`` answers what ``data`` does; a sort click repaints the big table once, with the
sorted rows.

No test reads a glyph's shape: cells are compared with Qt's painting of the same cells in the
same fonts, or by where ink is and which colour it has."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QItemSelectionModel, QObject, QPoint, QRect, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QImage, QPalette
from PySide6.QtWidgets import (
    QApplication,
    QLineEdit,
    QStyledItemDelegate,
    QTableView,
    QVBoxLayout,
    QWidget,
)
from pytestqt.qtbot import QtBot

from app.domain.display import Precision
from app.domain.records import DepositRecord, TransferStep, UserRef
from app.services.ledger_browser import LedgerQuery, LedgerSnapshot, group_rows
from app.ui.models.columns import Column
from app.ui.models.deposits_model import DepositsModel, DepositsSortProxy
from app.ui.models.ledger_model import LedgerModel, LedgerSortProxy
from app.ui.models.record_cells import number_cell, text_cell
from app.ui.models.record_view import BACKGROUND_ROLE, FONT_ROLE, RecordTableModel, RecordView
from app.ui.palette import TradePalette
from app.ui.panels.record_parts import RecordTable
from app.ui.qt import QEventLoop
from app.ui.theme import apply_theme
from app.ui.widgets import cell_painter
from app.ui.widgets.cell_painter import CellPainter, elided
from app.ui.widgets.read_only_table import read_only_rows
from tests.helpers.qt import click_header
from tests.helpers.records import items, ledger_entries

D = Decimal
RED = QColor(220, 30, 30)
TINT = QColor(40, 90, 200)
WAIT_MS = 20_000


@dataclass(frozen=True)
class Line:
    name: str
    size: Decimal
    note: str


def red_when_negative(line: Line, _: TradePalette) -> QColor | None:
    return RED if line.size < 0 else None


COLUMNS: tuple[Column[Line], ...] = (
    Column("name", "Name", lambda line, _: text_cell(line.name)),
    Column(
        "size",
        "Size",
        lambda line, _: number_cell(line.size, 2),
        numeric=True,
        colour=red_when_negative,
    ),
    Column("note", "Note", lambda line, _: text_cell(line.note)),
)


class Lines(RecordTableModel[Line]):
    """Answers every role the record models do: a tinted row, an italic note."""

    def extra_data(self, row: int, column: int, role: int) -> Any:
        line = self.record(row)
        if role == BACKGROUND_ROLE and line.note == "tinted":
            return TINT
        if role == FONT_ROLE and column == 2 and line.note == "italic":
            italic = QFont()
            italic.setItalic(True)
            return italic
        return None


LINES = [
    Line("alpha", D("12.5"), "plain"),
    Line("beta", D("-7.25"), "tinted"),
    Line("gamma", D("1234567.75"), "italic"),
    Line("delta", D("-0.5"), "plain"),
    Line("epsilon", D("42"), "tinted"),
]


def lines_table(qtbot: QtBot) -> tuple[Lines, QTableView]:
    model = Lines(COLUMNS, Precision())
    model.apply([(line.name, line) for line in LINES])
    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(model)
    read_only_rows(view)
    view.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # no current cell drawn with a focus frame
    view.resize(520, 240)
    for column in range(3):
        view.setColumnWidth(column, 150)
    view.show()
    qtbot.waitExposed(view)
    for row in (1, 2):
        view.selectionModel().select(
            model.index(row, 0),
            QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows,
        )
    return model, view


def grab(view: QTableView) -> QImage:
    return view.viewport().grab().toImage()


def channels(colour: QColor) -> tuple[int, int, int]:
    return colour.red(), colour.green(), colour.blue()


def ink(image: QImage, cell: QRect) -> tuple[QRect | None, QColor]:
    """Where a cell's text is (pixels away from the cell's corner colour) and its strongest
    colour."""
    ground = QColor(image.pixel(cell.left() + 1, cell.top() + 1))
    box = QRect()
    strongest, far = ground, 0
    for y in range(cell.top() + 1, cell.bottom()):
        for x in range(cell.left() + 1, cell.right()):
            colour = QColor(image.pixel(x, y))
            distance = sum(
                abs(a - b) for a, b in zip(channels(colour), channels(ground), strict=True)
            )
            if distance > 90:
                box = box.united(QRect(x, y, 1, 1))
            if distance > far:
                strongest, far = colour, distance
    return (box if box.isValid() else None), strongest


def near(a: QColor, b: QColor, within: int = 40) -> bool:
    return all(abs(x - y) <= within for x, y in zip(channels(a), channels(b), strict=True))


@pytest.mark.slow
@pytest.mark.parametrize("theme", [None, "dark", "light"])
def test_cells_look_as_qt_paints_them(
    qtbot: QtBot, app_as_found: QApplication, theme: str | None
) -> None:
    if theme is not None:
        apply_theme(app_as_found, theme)
    model, view = lines_table(qtbot)
    assert isinstance(view.itemDelegate(), CellPainter)
    ours = grab(view)
    view.setItemDelegate(QStyledItemDelegate(view))
    theirs = grab(view)
    palette = view.viewport().palette()
    highlight = palette.color(QPalette.ColorGroup.Inactive, QPalette.ColorRole.Highlight)
    for row in range(len(LINES)):
        for column in range(3):
            cell = view.visualRect(model.index(row, column))
            corner = cell.topLeft() + QPoint(1, 1)
            assert ours.pixel(corner) == theirs.pixel(corner), (row, column)
            if row in (1, 2):  # selected: the highlight, whatever the tint
                assert QColor(ours.pixel(corner)) == highlight
            elif LINES[row].note == "tinted":
                assert QColor(ours.pixel(corner)) == TINT
            our_box, our_colour = ink(ours, cell)
            their_box, their_colour = ink(theirs, cell)
            assert our_box is not None and their_box is not None, (row, column)
            assert abs(our_box.left() - their_box.left()) <= 2, (row, column)
            assert abs(our_box.right() - their_box.right()) <= 2, (row, column)
            assert our_box.top() == their_box.top(), (row, column)
            assert our_box.bottom() == their_box.bottom(), (row, column)
            assert near(our_colour, their_colour), (row, column)
            if column == 1:  # numbers stand at the right, names at the left
                assert cell.right() - our_box.right() <= 6 < our_box.left() - cell.left()
            else:
                assert our_box.left() - cell.left() <= 6 < cell.right() - our_box.right()
    negative = view.visualRect(model.index(3, 1))  # not selected, red
    _, colour = ink(ours, negative)
    assert colour.red() - colour.green() > 100


def test_a_narrow_column_elides_rather_than_cuts(qtbot: QtBot) -> None:
    metrics = QFontMetrics(QFont())
    text = "1,234,567.75"
    wide = metrics.horizontalAdvance(text) + 10
    assert elided(text, metrics, wide, Qt.TextElideMode.ElideRight) == text
    narrow = elided(text, metrics, wide // 2, Qt.TextElideMode.ElideRight)
    assert narrow.endswith("…")
    assert text.startswith(narrow[:-1])  # the leading digits, then the ellipsis
    middle = elided(text, metrics, wide // 2, Qt.TextElideMode.ElideMiddle)
    assert "…" in middle[1:-1]
    model, view = lines_table(qtbot)
    painter = view.itemDelegate()
    assert isinstance(painter, CellPainter)
    font = QFont()
    shaped = painter.shaped(text, font, font.key(), wide // 2, Qt.TextElideMode.ElideRight)
    assert shaped.text.text() == narrow
    assert shaped.width <= wide // 2
    whole = painter.shaped(text, font, font.key(), wide, Qt.TextElideMode.ElideRight)
    assert whole.text.text() == text
    # in the view: a narrow number column shows the ellipsis where Qt does
    view.setColumnWidth(1, 60)
    ours = grab(view)
    view.setItemDelegate(QStyledItemDelegate(view))
    theirs = grab(view)
    cell = view.visualRect(model.index(2, 1))
    our_box, _ = ink(ours, cell)
    their_box, _ = ink(theirs, cell)
    assert our_box is not None and their_box is not None
    assert abs(our_box.left() - their_box.left()) <= 2
    assert abs(our_box.right() - their_box.right()) <= 2


def test_the_text_cache_stays_bounded(qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cell_painter, "TEXT_CACHE", 8)
    _, view = lines_table(qtbot)
    painter = view.itemDelegate()
    assert isinstance(painter, CellPainter)
    font = QFont()
    key = font.key()
    mode = Qt.TextElideMode.ElideRight
    kept = painter.shaped("kept", font, key, 100, mode)
    for number in range(50):
        painter.shaped(f"text {number}", font, key, 100, mode)
        assert painter.shaped("kept", font, key, 100, mode) is kept  # used: stays
        assert painter.cached <= 8
    assert painter.cached == 8


def assert_looks_match_data(model: QObject, rows: int, columns: int) -> None:
    roles = (
        Qt.ItemDataRole.DisplayRole,
        Qt.ItemDataRole.TextAlignmentRole,
        Qt.ItemDataRole.FontRole,
        Qt.ItemDataRole.ForegroundRole,
        Qt.ItemDataRole.BackgroundRole,
    )
    for row in range(rows):
        look = model.row_look(row)  # type: ignore[attr-defined]
        assert look is not None
        for column in range(columns):
            index = model.index(row, column)  # type: ignore[attr-defined]
            text, alignment, font, colour, background = (index.data(role) for role in roles)
            assert look.texts[column] == text
            assert look.alignments[column] == int(alignment.value)
            assert look.fonts[column] == font
            assert look.colours[column] == colour
            assert look.backgrounds[column] == background
    assert model.row_look(rows) is None  # type: ignore[attr-defined]


def test_row_looks_answer_what_data_does(qtbot: QtBot, qloop: QEventLoop) -> None:
    lines = Lines(COLUMNS, Precision())
    lines.apply([(line.name, line) for line in LINES])
    assert_looks_match_data(lines, len(LINES), 3)
    rows = group_rows(ledger_entries(60), D(1000), ["BTC/USD"])
    ledger = LedgerModel(Precision())
    ledger.set_snapshot(LedgerSnapshot(rows, LedgerQuery(), False, reset=True))
    assert any(ledger.ledger_row(row).linked for row in range(len(rows)))  # tinted legs
    view = LedgerSortProxy()
    view.setSourceModel(ledger)
    view.sort(ledger.column("amount"), Qt.SortOrder.DescendingOrder)
    assert not view.pending()
    assert_looks_match_data(view, len(rows), ledger.columnCount())
    deposits = DepositsModel(Precision())
    deposits.set_records([deposit(number) for number in range(12)])
    sorted_deposits = DepositsSortProxy()
    sorted_deposits.setSourceModel(deposits)
    sorted_deposits.sort(deposits.column("amount"), Qt.SortOrder.DescendingOrder)
    assert_looks_match_data(sorted_deposits, 12, deposits.columnCount())


def deposit(number: int) -> DepositRecord:
    """Completed or pending (coloured status, an empty time), in several assets."""
    moment = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(hours=number)
    step = TransferStep(moment, UserRef("u-1", "trader@example.com", "Trader"))
    return DepositRecord(
        number,
        "a",
        f"dep-{number:03d}",
        ("USD", "BTC", "ETH")[number % 3],
        D(number * 37) / 8,
        "completed" if number % 2 else "pending",
        "bank",
        f"hash-{number:040d}",
        step,
        step if number % 2 else None,
    )


class Paints(QObject):
    """Counts the viewport's paint events, and how many came while a sort was under way."""

    def __init__(self, view: RecordView) -> None:
        super().__init__()
        self.view = view
        self.count = 0
        self.early = 0

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.count += 1
            self.early += self.view.pending()
        return False


def sort_click_paints(qtbot: QtBot, palette: QPalette | None = None) -> Paints:
    """A big sliced table beside a search box that has the focus; the Size title clicked."""
    model = Lines(COLUMNS, Precision())
    model.sync_rows = 100
    model.apply(
        [(item.name, Line(item.name, item.size or D(0), item.note)) for item in items(5000)]
    )
    view = RecordView()
    view.sync_rows = 100
    view.setSourceModel(model)
    window = QWidget()
    qtbot.addWidget(window)
    layout = QVBoxLayout(window)
    search = QLineEdit(window)
    table = RecordTable("paintTable", window)
    table.setModel(view)
    if palette is not None:
        table.setPalette(palette)
    layout.addWidget(search)
    layout.addWidget(table)
    window.resize(700, 500)
    window.show()
    qtbot.waitExposed(window)
    search.setFocus()
    qtbot.waitUntil(search.hasFocus)
    paints = Paints(view)
    table.viewport().installEventFilter(paints)
    QApplication.processEvents()
    paints.count = 0
    click_header(table, model.column("size"))
    assert view.pending()
    qtbot.waitUntil(lambda: not view.pending() and paints.count >= 1, timeout=WAIT_MS)
    for _ in range(3):
        QApplication.processEvents()
    assert table.hasFocus()  # the click gave the table the focus
    assert view.index(0, 1).data() == "-125.00"  # sorted by size
    return paints


def test_a_sort_click_repaints_the_table_once(qtbot: QtBot, qloop: QEventLoop) -> None:
    paints = sort_click_paints(qtbot)
    assert paints.early == 0  # no repaint for the focus, before the sorted rows
    assert paints.count == 1


def test_a_focus_that_changes_colours_still_repaints(qtbot: QtBot, qloop: QEventLoop) -> None:
    palette = QApplication.palette()
    palette.setColor(QPalette.ColorGroup.Inactive, QPalette.ColorRole.Highlight, QColor(9, 9, 9))
    paints = sort_click_paints(qtbot, palette)
    assert paints.early >= 1  # the selection's colour changes with the focus: Qt's repaint
