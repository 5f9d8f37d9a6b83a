"""The ladder's one delegate: text from the model's row looks, size bars beside the digits, the
touch's edge, and what each row showed (for click-to-trade).

Text: ``CellPainter`` (``app.ui.widgets.cell_painter``), from ``DepthModel.row_look`` (one call
per row per paint, kept by the model until the row changes): the side colours, the touch rows'
background and the own orders' cells come with it.

Size bars stand in their own part of the cell, never behind the digits: the part left of the
room the column's longest text takes (``DepthModel.widest_text``, measured once per text and
font) and a gap. A bar grows leftwards from the end of that part, next to its own digits, as
the cell's share of the column's largest value: bars that started at the cell's left edge
stood next to the previous column's digits and read as theirs (a cumulative bar beside a
size). Every row of a column has the same room, so the bars share one baseline and one full
length. A column too narrow to leave ``MIN_BAR_SPACE`` pixels beside its digits gets a thin
bar (``THIN_BAR`` pixels) along the cell's bottom edge instead, from the right.

The touch: a line of the side's colour on the edge of the best ask's row and the best bid's
row that faces the spread.

Click-to-trade: each row's level, as painted in the price column, is noted on the view
(``LadderView.saw``): a press trades what the trader saw, not what the row holds by the time
the button comes up.

Cheap to repaint at every book poll: nothing is allocated per cell but the rectangles filled;
colours come from the model's looks (made once per palette), the room of each column is
measured once per paint, and a text's width once per font.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter
from PySide6.QtWidgets import QStyleOptionViewItem

from app.ui.models.depth_model import BAR_COLUMNS, DepthModel
from app.ui.panels.ladder_view import LadderView
from app.ui.widgets.cell_painter import CellPainter, text_margin

#: Pixels between a size bar and its row's top and bottom edges, and its cell's left edge.
BAR_INSET = 2
#: Pixels between a bar's longest reach and the column's digits.
BAR_GAP = 4
#: The narrowest room (px) a bar gets beside the digits; narrower, the thin bar at the edge
#: (across the whole cell: a bar of a dozen pixels shows no difference at a glance).
MIN_BAR_SPACE = 24
#: Height (px) of the thin bar along a cell's bottom edge.
THIN_BAR = 3
#: Width (px) of the touch's line on the edge that faces the spread.
TOUCH_LINE = 1

Index = QModelIndex | QPersistentModelIndex


def bar_space(cell: QRect, room: int) -> QRect | None:
    """Where a cell's bar may stand: left of the ``room`` its column's digits take (their
    width and the text margins) and ``BAR_GAP``, inset ``BAR_INSET`` from the cell's left edge
    and the row's top and bottom; None when that leaves less than ``MIN_BAR_SPACE`` pixels."""
    width = cell.width() - room - BAR_GAP - BAR_INSET
    if width < MIN_BAR_SPACE:
        return None
    return QRect(
        cell.left() + BAR_INSET, cell.top() + BAR_INSET, width, cell.height() - 2 * BAR_INSET
    )


def bar_rect(cell: QRect, room: int, fraction: float) -> QRect:
    """The bar of a cell whose value is ``fraction`` of its column's largest: from the right
    end of its space (``bar_space``) leftwards, or thin along the cell's bottom edge from its
    right when there is no space."""
    space = bar_space(cell, room)
    if space is None:
        width = max(1, round(cell.width() * fraction))
        return QRect(cell.right() - width + 1, cell.bottom() - THIN_BAR + 1, width, THIN_BAR)
    width = max(1, round(space.width() * fraction))
    return QRect(space.right() - width + 1, space.top(), width, space.height())


class LadderPainter(CellPainter):
    """Paints every cell of the ladder (see the module)."""

    def __init__(self, view: LadderView, model: DepthModel) -> None:
        super().__init__(view)
        self._ladder = view
        self._model = model
        self._price = model.column("price")
        #: For one paint: each bar column's room for its digits (px), and the touch's rows
        #: with the colour of their line.
        self._rooms: dict[int, int] = {}
        self._touch: dict[int, QColor] | None = None
        #: (font key, text) -> its width (px): the widest texts repeat from paint to paint.
        self._widths: dict[tuple[str, str], int] = {}
        self._metrics: dict[str, QFontMetrics] = {}

    def forget(self) -> None:
        super().forget()
        self._rooms.clear()
        self._touch = None

    def _touch_lines(self) -> dict[int, QColor]:
        """The touch rows and their line's colour, read once per paint."""
        touch = self._touch
        if touch is None:
            model = self._model
            touch = self._touch = {}
            for row in model.touch_rows():
                colour = None if row is None else model.touch_colour(row)
                if row is not None and colour is not None:
                    touch[row] = colour
        return touch

    def room(self, column: int, font: QFont) -> int:
        """The room the digits of ``column`` take in every row (px): its longest text's width
        in ``font`` and the text margins."""
        room = self._rooms.get(column)
        if room is None:
            text = self._model.widest_text(column)
            key = font.key()
            width = self._widths.get((key, text))
            if width is None:
                metrics = self._metrics.get(key)
                if metrics is None:
                    metrics = self._metrics[key] = QFontMetrics(font)
                if len(self._widths) > 4096:
                    self._widths.clear()
                width = self._widths[(key, text)] = metrics.horizontalAdvance(text)
            room = self._rooms[column] = width + 2 * text_margin(self._ladder)
        return room

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        row, column = index.row(), index.column()
        model = self._model
        if column == self._price:
            self._ladder.saw(row, model.row(row))
        super().paint(painter, option, index)
        rect = option.rect
        if column in BAR_COLUMNS:
            fraction = model.bar_fraction_at(row, column)
            if fraction > 0:
                room = self.room(column, option.font)
                painter.fillRect(bar_rect(rect, room, fraction), model.bar_colour(row))
        line = self._touch_lines().get(row)
        if line is not None:
            top = row == model.best_bid_row  # the bid's spread side is its top edge
            y = rect.top() if top else rect.bottom() - TOUCH_LINE + 1
            painter.fillRect(QRect(rect.left(), y, rect.width(), TOUCH_LINE), line)
