"""What the record-column tests share: the text a cell is drawn with — its whole text elided
to the cell's room as ``CellPainter`` elides it, with the view's own font metrics, text margins
and elide mode, so no font is assumed — the cells drawn cut, and a panel shown at a width with
its columns fitted (the sizer's frame done for that width)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QEvent, Qt
from PySide6.QtGui import QFont, QFontMetrics, QHelpEvent
from PySide6.QtWidgets import QApplication, QTableView, QToolTip, QWidget
from pytestqt.qtbot import QtBot

from app.ui.column_sizer import ColumnSizer, specs_of
from app.ui.column_widths import Fit
from app.ui.widgets.cell_painter import RowLooks, elided, text_margin

#: The screen widths the trader uses (the record docks span the window's width).
WIDTHS = (1280, 1366, 1920)
WAIT_MS = 15_000
ELLIPSIS = "…"


def _text_and_font(model: QAbstractItemModel, row: int, column: int) -> tuple[str, QFont | None]:
    if isinstance(model, RowLooks):
        look = model.row_look(row)
        assert look is not None
        return look.texts[column], look.fonts[column]
    index = model.index(row, column)
    text = model.data(index, Qt.ItemDataRole.DisplayRole)
    font = model.data(index, Qt.ItemDataRole.FontRole)
    return ("" if text is None else str(text)), (font if isinstance(font, QFont) else None)


def drawn(view: QTableView, row: int, column: int) -> tuple[str, str]:
    """The cell's whole text and the text drawn in it: cut to the cell's rect less Qt's text
    margins, in the cell's font (the view's when the model gives none), as the view elides."""
    model = view.model()
    text, font = _text_and_font(model, row, column)
    room = view.visualRect(model.index(row, column)).width() - 2 * text_margin(view)
    metrics = QFontMetrics(view.font() if font is None else font)
    return text, elided(text, metrics, room, view.textElideMode())


def fits_of(view: QTableView) -> list[Fit]:
    specs: Any = specs_of(view.model())
    return [spec.fitting for spec in specs]


def cut_cells(view: QTableView, fits: Collection[Fit]) -> list[str]:
    """Every shown cell of a column that fits as one of ``fits`` drawn cut: ``title: whole
    drawn as shown``."""
    model = view.model()
    header = view.horizontalHeader()
    found = []
    for column, fit in enumerate(fits_of(view)):
        if fit not in fits or header.isSectionHidden(column):
            continue
        title = model.headerData(column, Qt.Orientation.Horizontal)
        for row in range(model.rowCount()):
            whole, shown = drawn(view, row, column)
            if shown != whole:
                found.append(f"{title}: {whole!r} drawn as {shown!r}")
    return found


def cut_cells_at(view: QTableView) -> list[tuple[int, int, str, str]]:
    """Every shown cell drawn cut: (row, column, whole text, text drawn)."""
    model = view.model()
    header = view.horizontalHeader()
    found = []
    for column in range(model.columnCount()):
        if header.isSectionHidden(column):
            continue
        for row in range(model.rowCount()):
            whole, shown = drawn(view, row, column)
            if shown != whole:
                found.append((row, column, whole, shown))
    return found


def cut_wrongly(view: QTableView) -> list[str]:
    """Cells cut anywhere but at their end (a cut keeps the start and ends with "…")."""
    return [
        f"{whole!r} drawn as {shown!r}"
        for _, _, whole, shown in cut_cells_at(view)
        if not (shown.endswith(ELLIPSIS) and whole.startswith(shown[:-1]))
    ]


def tooltip_at(view: QTableView, row: int, column: int) -> str:
    """The tooltip the trader sees resting the mouse on a cell (a real help event)."""
    QToolTip.hideText()
    rect = view.visualRect(view.model().index(row, column))
    where = rect.center()
    event = QHelpEvent(QEvent.Type.ToolTip, where, view.viewport().mapToGlobal(where))
    QApplication.sendEvent(view.viewport(), event)
    return QToolTip.text() if QToolTip.isVisible() else ""


def fitted(view: QTableView, sizer: ColumnSizer) -> bool:
    """The sizer has fitted the columns for the view as it is now."""
    return view.isVisible() and not sizer.pending and sizer.room == view.viewport().width()


def show_at(
    qtbot: QtBot,
    panel: QWidget,
    view: QTableView,
    sizer: ColumnSizer,
    width: int,
    height: int = 420,
) -> None:
    """``panel`` shown ``width`` px wide, its columns fitted."""
    panel.resize(width, height)
    panel.show()
    qtbot.waitUntil(lambda: panel.width() == width, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: fitted(view, sizer), timeout=WAIT_MS)
