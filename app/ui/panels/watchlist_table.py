"""``WatchlistTable``: the watchlist's table view, which paints its rows in one ``paintEvent``.

Why its own painting (issue 16, ≥ 100× vn.py at 1,000 rows painting every 50 ticks): a
``QTableView`` paints each cell through the item delegate, which asks the (Python) model for
seven roles, and the style lays each text out twice; a repaint of the ~40 rows in view took
3–4 ms, more than the ticks themselves. Here one Python loop reads each row's cached cells and
look in one call (``TopOfBookModel.painted_row``) and draws its cells: 1–1.7 ms. Everything
else — scrolling, headers, selection, keys, clicks, hit tests, tooltips — stays the
``QTableView``'s own.

What is drawn, to look like the table it replaces: the palette's highlight (and highlighted
text) across the selected row (over any fade, as the style draws it), alternate row colours
when on, each fading cell's tint, grey text for a stale row, the traded pair in bold, numbers
right-aligned in the number font and elided with "…" when their column is too narrow (never
cut: a clipped price would read as another number), and the grid. Not drawn: a focus frame on
the current cell (the themes turn it off; the highlighted row is the current one) and
``::item`` style-sheet rules (the themes have none).
"""

from __future__ import annotations

import math
from typing import NamedTuple

from PySide6.QtCore import QLine, QRect, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QFontMetricsF,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
)
from PySide6.QtWidgets import QStyle, QStyleOptionViewItem, QWidget

from app.ui.models.top_of_book_model import TopOfBookModel
from app.ui.widgets.list_table import ListTable

Role = QPalette.ColorRole


class _Span(NamedTuple):
    """A column in the area being painted: its number, left edge and width (px)."""

    column: int
    x: int
    width: int


class _Pens(NamedTuple):
    """The view's colours for one paint."""

    text: QColor
    highlight: QColor
    highlighted: QColor
    alternate: QColor | None
    grid: QColor | None


#: The characters of a number's text: its width is at most its length times the widest of
#: them in its font (the widest glyph of a whole font is often three digits wide).
NUMERALS = "0123456789,.-+ ▲▼—%"


class _Face(NamedTuple):
    """A font as a paint uses it: its metrics, widest glyph and widest numeral (px, fractional)
    and its key (for the caches)."""

    font: QFont
    metrics: QFontMetrics
    widest: float
    numeral: float
    key: str

    @classmethod
    def of(cls, font: QFont) -> _Face:
        # Fractional advances: whole-pixel ones round each glyph down (a "0" of 7.19 px counts
        # 7), so their sum undercut a long number and it was clipped with no "…".
        exact = QFontMetricsF(font)
        numeral = max(exact.horizontalAdvance(character) for character in NUMERALS)
        return cls(QFont(font), QFontMetrics(font), exact.maxWidth(), numeral, font.key())

    def reach(self, text: str) -> int:
        """The width ``text`` takes at most (px, never less than its real width), without
        laying it out."""
        advance = self.widest if text.strip(NUMERALS) else self.numeral
        return math.ceil(len(text) * advance) + 1


#: Fitted texts kept between paints (the pair names' mostly) before the cache starts afresh.
FITS_KEPT = 4096


class WatchlistTable(ListTable):
    """A ``ListTable`` over a ``TopOfBookModel`` that paints its cells itself."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        #: (font key, text, room) -> the text as it fits: a text is only measured when its
        #: widest glyph says it might not fit, and the pair names repeat.
        self._fits: dict[tuple[str, str, int], str] = {}
        self._faces: dict[str, _Face] = {}

    def _face(self, font: QFont) -> _Face:
        """``font``'s face, measured once."""
        key = font.key()
        face = self._faces.get(key)
        if face is None:
            face = self._faces[key] = _Face.of(font)
        return face

    def _fitted(self, face: _Face, text: str, room: int) -> str:
        """``text`` elided with "…" to ``room`` px in ``face`` (itself when it fits)."""
        key = (face.key, text, room)
        fitted = self._fits.get(key)
        if fitted is None:
            fitted = face.metrics.elidedText(text, Qt.TextElideMode.ElideRight, room)
            self._fits[key] = fitted
        return fitted

    def paintEvent(self, event: QPaintEvent) -> None:
        model = self.model()
        if not isinstance(model, TopOfBookModel):
            super().paintEvent(event)
            return
        area = event.rect()
        first = self.rowAt(area.top())
        spans = self._spans(area.left(), area.right())
        if first < 0 or not spans:
            return
        last = self.rowAt(area.bottom())
        last = model.rowCount() - 1 if last < 0 else last
        painter = QPainter(self.viewport())
        try:
            painter.setClipRect(area)
            self._paint_rows(painter, model, range(first, last + 1), spans, area)
        finally:
            painter.end()

    def _spans(self, left: int, right: int) -> list[_Span]:
        """The shown columns between ``left`` and ``right`` (viewport px), in visual order."""
        header = self.horizontalHeader()
        spans = []
        for visual in range(header.count()):
            column = header.logicalIndex(visual)
            width = 0 if header.isSectionHidden(column) else self.columnWidth(column)
            x = self.columnViewportPosition(column)
            if width > 0 and x + width > left and x <= right:
                spans.append(_Span(column, x, width))
        return spans

    def _pens(self) -> _Pens:
        palette = self.palette()
        if not self.isEnabled():
            group = QPalette.ColorGroup.Disabled
        elif self.isActiveWindow():
            group = QPalette.ColorGroup.Active
        else:
            group = QPalette.ColorGroup.Inactive
        grid: QColor | None = None
        if self.showGrid():
            option = QStyleOptionViewItem()
            option.initFrom(self)
            hint = self.style().styleHint(QStyle.StyleHint.SH_Table_GridLineColor, option, self)
            grid = QColor.fromRgba(hint & 0xFFFFFFFF)  # an ARGB value, signed
        return _Pens(
            palette.color(group, Role.Text),
            palette.color(group, Role.Highlight),
            palette.color(group, Role.HighlightedText),
            palette.color(group, Role.AlternateBase) if self.alternatingRowColors() else None,
            grid,
        )

    def _paint_rows(
        self,
        painter: QPainter,
        model: TopOfBookModel,
        rows: range,
        spans: list[_Span],
        area: QRect,
    ) -> None:
        """Backgrounds and texts of ``rows`` × ``spans`` in ``area``, then the grid over them."""
        pens = self._pens()
        style = self.style()
        margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, self) + 1
        selection = self.selectionModel()
        selected = set() if selection is None else {i.row() for i in selection.selectedRows()}
        plain = self.font()
        bold = QFont(plain)
        bold.setBold(True)
        # the pair column's font, the traded pair's (bold) and the numbers'
        faces = [self._face(font) for font in (plain, bold, model.number_font)]
        if len(self._fits) > FITS_KEPT:
            self._fits.clear()
        alignments = [int(alignment) for alignment in model.alignments]
        rightwards = [bool(alignment & Qt.AlignmentFlag.AlignRight) for alignment in alignments]
        left, right = spans[0].x, spans[-1].x + spans[-1].width
        font: QFont | None = None  # the painter's
        pen: QColor | None = None
        bottoms: list[int] = []  # the grid's line under each row
        for row in rows:
            y, height = self.rowViewportPosition(row), self.rowHeight(row)
            if height <= 0:
                continue
            bottoms.append(y + height - 1)
            cells, look = model.painted_row(row)
            chosen = row in selected
            fill = pens.highlight if chosen else (pens.alternate if row % 2 else None)
            if fill is not None:
                painter.fillRect(QRect(left, y, right - left, height), fill)
            colour = pens.highlighted if chosen else (look.foreground or pens.text)
            if colour is not pen:
                painter.setPen(colour)
                pen = colour
            backgrounds = {} if chosen else look.backgrounds  # the highlight covers fades
            for column, x, width in spans:
                background = backgrounds.get(column)
                if background is not None:
                    painter.fillRect(QRect(x, y, width, height), background)
                face = faces[2] if column else faces[1 if look.bold else 0]
                if face.font is not font:
                    painter.setFont(face.font)
                    font = face.font
                text = cells[column].display
                room = width - 2 * margin
                reach = face.reach(text)
                if reach > room:
                    text = self._fitted(face, text, room)
                # a text wholly outside the area is not drawn (a cell repainted for a pixel
                # of it, e.g. the wide Age column next to a changed Spread)
                start = x + margin + room - min(room, reach) if rightwards[column] else x + margin
                if start <= area.right() and start + min(room, reach) >= area.left():
                    painter.drawText(QRect(x + margin, y, room, height), alignments[column], text)
        if pens.grid is not None and bottoms:
            top, bottom = self.rowViewportPosition(rows[0]), bottoms[-1]
            lines = [QLine(left, y, right - 1, y) for y in bottoms]
            lines += [QLine(x + width - 1, top, x + width - 1, bottom) for _, x, width in spans]
            painter.setPen(QPen(pens.grid, 0))
            painter.drawLines(lines)
