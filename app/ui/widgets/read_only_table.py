"""``read_only_rows``: the set-up every record table of the terminal starts from."""

from __future__ import annotations

from PySide6.QtGui import QPalette, QRegion
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView

from app.ui.widgets.cell_painter import CellPainter


def read_only_rows(view: QTableView) -> QHeaderView:
    """Whole rows selected, nothing edited or wrapped, no row numbers, columns the trader can
    resize with the last one stretched (the record docks and the quote history alike), cells
    painted by ``CellPainter`` (fast for a model with ``row_look``, as Qt paints otherwise);
    returns the horizontal header for what else a table sets on it."""
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.setWordWrap(False)
    view.verticalHeader().hide()
    CellPainter.install(view)
    header = view.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    header.setStretchLastSection(True)
    return header


def widen_to_fit(view: QTableView) -> None:
    """Each column at least as wide as its title and the rows in view (only ever wider: a
    width the trader chose is kept when it is enough). Cheap: the view measures only the
    rows it shows."""
    header = view.horizontalHeader()
    # Qt measures up to 1,000 rows per column by default, shown or not (300 ms for ten columns
    # of a Python model); 0 measures the rows in view only.
    precision = header.resizeContentsPrecision()
    header.setResizeContentsPrecision(0)
    try:
        for column in range(header.count()):
            wanted = max(header.sectionSizeHint(column), view.sizeHintForColumn(column))
            if header.sectionSize(column) < wanted:
                header.resizeSection(column, wanted)
    finally:
        header.setResizeContentsPrecision(precision)


#: What a cell is painted with: when these are the same in the Active and Inactive palette
#: groups (both themes), the focus changes nothing in the cells but the current one's frame.
_CELL_ROLES = (
    QPalette.ColorRole.Base,
    QPalette.ColorRole.AlternateBase,
    QPalette.ColorRole.Text,
    QPalette.ColorRole.WindowText,
    QPalette.ColorRole.Highlight,
    QPalette.ColorRole.HighlightedText,
)


def focus_keeps_look(view: QAbstractItemView) -> bool:
    """Whether the cells look the same with and without the focus (Qt repaints the whole view
    when the focus comes or goes, in case they do not)."""
    palette = view.viewport().palette()
    active, inactive = QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive
    return all(palette.color(active, role) == palette.color(inactive, role) for role in _CELL_ROLES)


def repaint_focus(view: QAbstractItemView) -> None:
    """What a focus change shows when ``focus_keeps_look``: the frame around the viewport (a
    style sheet's ``:focus`` border) and the current cell (its focus frame); not the rows."""
    view.update(QRegion(view.rect()).subtracted(QRegion(view.viewport().geometry())))
    current = view.currentIndex()
    if current.isValid():
        view.viewport().update(view.visualRect(current))
