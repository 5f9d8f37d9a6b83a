"""``WatchlistTable``: the watchlist's table view, which paints its rows in one ``paintEvent``.

Why: a ``QTableView`` paints each cell through the item delegate, which asks the (Python) model
for seven roles; here the tables' one painter (``app.ui.widgets.cell_painter.RowPainter``) reads
each row's ``RowLook`` in one call (``TopOfBookModel.row_look``) and draws its cells.
Everything else — scrolling, headers, selection, keys, clicks, hit tests, tooltips — stays the
``QTableView``'s own.
"""

from __future__ import annotations

from PySide6.QtGui import QPaintEvent
from PySide6.QtWidgets import QWidget

from app.ui.models.top_of_book_model import TopOfBookModel
from app.ui.widgets.cell_painter import RowPainter
from app.ui.widgets.list_table import ListTable


class WatchlistTable(ListTable):
    """A ``ListTable`` over a ``TopOfBookModel`` that paints its rows with ``RowPainter``."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.painter = RowPainter(self)

    def paintEvent(self, event: QPaintEvent) -> None:
        model = self.model()
        if not isinstance(model, TopOfBookModel):
            super().paintEvent(event)
            return
        self.painter.paint(event, model.row_look, model.rowCount())
