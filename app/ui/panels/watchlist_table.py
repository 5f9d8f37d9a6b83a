"""``WatchlistTable``: the watchlist's table view, which paints its rows in one ``paintEvent``.

Why: a ``QTableView`` paints each cell through the item delegate, which asks the (Python) model
for seven roles; here the tables' one painter (``app.ui.widgets.cell_painter.RowPainter``) reads
each row's ``RowLook`` in one call (``TopOfBookModel.row_look``) and draws its cells.
Everything else — scrolling, headers, selection, keys, clicks, hit tests, tooltips — stays the
``QTableView``'s own.

A stale row is grey when selected too (``WatchlistPainter``): a selected row's text is
otherwise drawn in the highlighted-text colour whatever its look says, so the traded pair —
the one row a trader watches — stayed bright while every other row greyed out.
"""

from __future__ import annotations

from PySide6.QtCore import QRect
from PySide6.QtGui import QBrush, QColor, QFont, QPainter, QPaintEvent
from PySide6.QtWidgets import QWidget

from app.ui.models.top_of_book_model import TopOfBookModel
from app.ui.widgets.cell_painter import RowLook, RowPainter, ViewColours, _Columns, _Span
from app.ui.widgets.list_table import ListTable


class WatchlistPainter(RowPainter):
    """``RowPainter`` whose selected rows keep their look's text colour (a stale row's grey)
    on the highlight; a row whose look gives no colour is drawn as the selection says."""

    def _paint_cells(
        self,
        painter: QPainter,
        look: RowLook,
        y: int,
        height: int,
        spans: list[_Span],
        area: QRect,
        chosen: bool,
        columns: _Columns,
        state: tuple[ViewColours, QColor | QBrush | None, QFont | None],
    ) -> tuple[QColor | QBrush | None, QFont | None]:
        greyed = look.colours[0] if chosen and look.colours else None
        if greyed is not None:
            pens, pen, font = state
            colour = greyed.color() if isinstance(greyed, QBrush) else greyed
            state = (pens._replace(highlighted=colour), pen, font)
        return super()._paint_cells(painter, look, y, height, spans, area, chosen, columns, state)


class WatchlistTable(ListTable):
    """A ``ListTable`` over a ``TopOfBookModel`` that paints its rows with ``WatchlistPainter``."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.painter: RowPainter = WatchlistPainter(self)

    def paintEvent(self, event: QPaintEvent) -> None:
        model = self.model()
        if not isinstance(model, TopOfBookModel):
            super().paintEvent(event)
            return
        self.painter.paint(event, model.row_look, model.rowCount())
