"""``CellPainter``: the record tables' cells painted without Qt's text layout on every paint.

Why: one repaint of the ledger at 100,000 rows (1580×919, about 420 cells) cost 10–13 ms, and
the last step of a sort or filter (a layout change, then that repaint) went over a 16.7 ms
frame. Qt's ``QStyledItemDelegate`` asks the model for about seven roles per cell (each a
Python ``data`` call through the view's order) and lays the text out anew every time
(``QTextLayout``, HarfBuzz shaping, elision).

Here a model that offers ``row_look(row)`` (``RowLook``: every cell's text, alignment, font,
text colour and background, made in one Python call per row and kept for the one paint
event) has its text drawn from a ``QStaticText`` cached per (text, font, width, elide mode)
in a bounded LRU (``TEXT_CACHE``): the glyphs are shaped once, not per paint. A model
without ``row_look``, a cell with a line break and the current cell while it shows the
keyboard focus frame are painted by Qt as before.

The cell looks as Qt draws it: the selection fills the cell with the palette's highlight
(its Inactive group when the table does not have the focus), otherwise the cell's
background role; the text is in the highlighted-text colour when selected, otherwise the
cell's foreground role, otherwise the palette's text colour; it sits inside Qt's text margin
(``PM_FocusFrameHMargin`` + 1 each side, the same that ``sizeHint`` and so ``widen_to_fit``
count), aligned as the model says (numbers right), centred vertically where the style puts
a line of that font (``qt_text_shift``: no formula matched Qt's rounding for every font); a
text wider than the column is elided as the view's ``textElideMode`` says, with "…" (a cut
number is never shown as whole: ``12,345.67…`` keeps its leading digits and the ellipsis,
as Qt does). Row backgrounds (alternating rows) are drawn by the view before the cell, as
before. ``tests/ui/test_cell_painter.py`` compares every cell with Qt's own painting in no
theme, the dark and the light one.

Nothing here is about records: any table whose model answers ``row_look`` can use it.

Measured here (2 cores shared, offscreen, 100,000 ledger rows, one ``viewport().repaint()``
at 1580×919, median of 20, the two delegates alternated in one process): Qt's delegate
10.7–12.0 ms (13.5–13.7 ms in the dark theme, whose style sheet adds its own pass); a
Python delegate that draws nothing 2.5 ms (the floor: Qt's own per-cell calls into the
Python model and the delegate call); per-cell ``index.data`` for five roles and a cached
``QStaticText`` 9.8 ms; ``row_look`` once per row and a cached ``QStaticText`` per cell
4.9–5.3 ms (5.4–5.5 ms dark). ``tests/perf/bench_records`` prints it as ``repaint``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Protocol, runtime_checkable

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, QPointF, QRect, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetrics,
    QFontMetricsF,
    QImage,
    QPainter,
    QPalette,
    QStaticText,
)
from PySide6.QtWidgets import QAbstractItemView, QStyle, QStyledItemDelegate, QStyleOptionViewItem

Index = QModelIndex | QPersistentModelIndex
Colour = QColor | QBrush

#: Shaped texts kept (each a ``QStaticText``: about a screen of cells several times over).
TEXT_CACHE = 2048
#: What ``qt_text_shift`` draws (a capital, a descender, a digit) on a mid-grey ground.
PROBE = "Hg0"
PROBE_FILL = 128

_SELECTED = QStyle.StateFlag.State_Selected.value
_ACTIVE = QStyle.StateFlag.State_Active
_FOCUS = QStyle.StateFlag.State_HasFocus.value
_PAINT = QEvent.Type.Paint
_RIGHT = int(Qt.AlignmentFlag.AlignRight)
_HCENTER = int(Qt.AlignmentFlag.AlignHCenter)
_TOP = int(Qt.AlignmentFlag.AlignTop)
_BOTTOM = int(Qt.AlignmentFlag.AlignBottom)
_VCENTER = int(Qt.AlignmentFlag.AlignVCenter)
#: What Qt's views align a cell to when the model says nothing.
DEFAULT_ALIGNMENT = int(Qt.AlignmentFlag.AlignLeft) | _VCENTER


class RowLook(NamedTuple):
    """How each cell of one row looks (one entry per column): display text, alignment
    (``Qt.AlignmentFlag`` as an int; None: the view's default), font (None: the view's),
    text colour (None: the palette's) and background (None: none)."""

    texts: Sequence[str]
    alignments: Sequence[int | None]
    fonts: Sequence[QFont | None]
    colours: Sequence[Colour | None]
    backgrounds: Sequence[Colour | None]


@runtime_checkable
class RowLooks(Protocol):
    """A model whose rows ``CellPainter`` can paint fast; None for a row it cannot say."""

    def row_look(self, row: int) -> RowLook | None: ...


class Shaped(NamedTuple):
    """A text as drawn in a width: the (elided) static text, the width Qt aligns it by (the
    whole width when elided: Qt starts a cut text at the left edge, whatever the alignment)
    and its exact height (Qt centres a line by its fractional height)."""

    text: QStaticText
    width: int
    height: float


class _Frame:
    """What stays the same for every cell of one paint event."""

    __slots__ = (
        "elide",
        "elide_value",
        "font",
        "font_key",
        "highlight",
        "look",
        "margin",
        "selected",
        "style",
        "text",
    )

    def __init__(self, view: QAbstractItemView, option: QStyleOptionViewItem) -> None:
        model = view.model()
        self.look: Callable[[int], RowLook | None] | None = (
            model.row_look if isinstance(model, RowLooks) else None
        )
        self.font = QFont(option.font)
        self.font_key = self.font.key()
        style = view.style()
        self.margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, view) + 1
        self.elide = view.textElideMode()
        self.elide_value: int = self.elide.value
        self.style = style.metaObject().className()
        palette = option.palette
        if not view.isEnabled():
            group = QPalette.ColorGroup.Disabled
        elif _ACTIVE in option.state:
            group = QPalette.ColorGroup.Active
        else:
            group = QPalette.ColorGroup.Inactive
        self.highlight = palette.brush(group, QPalette.ColorRole.Highlight)
        self.selected = palette.color(group, QPalette.ColorRole.HighlightedText)
        self.text = palette.color(group, QPalette.ColorRole.Text)


def elided(text: str, metrics: QFontMetrics, width: int, mode: Qt.TextElideMode) -> str:
    """``text`` as it fits in ``width`` pixels: whole when it fits, else cut as ``mode`` says
    with "…" (``ElideNone``: cut at the edge, as Qt does)."""
    if mode == Qt.TextElideMode.ElideNone:
        return text
    return metrics.elidedText(text, mode, max(0, width))


def _ink_centre(image: QImage, fill: int) -> float | None:
    """The mean row of what was drawn on ``image`` (filled with grey ``fill``), weighted by
    how far each pixel is from the fill: the same for any text colour."""
    bits = bytes(image.constBits())
    stride = image.bytesPerLine()
    total = weighted = 0
    for y in range(image.height()):
        line = bits[y * stride : y * stride + image.width() * 4]
        ink = sum(abs(value - fill) for number, value in enumerate(line) if number % 4 != 3)
        total += ink
        weighted += ink * y
    return weighted / total if total else None


def qt_text_shift(view: QAbstractItemView, font: QFont, height: int, margin: int) -> int:
    """Pixels to move a centred ``QStaticText`` of ``font`` down to stand where the view's
    style draws a cell's text in a cell ``height`` high (0 or ±1).

    Qt places a text line by its layout's rounded metrics, which no one formula matched for
    the fonts and row heights here (Inter 9 pt stood a pixel higher in a 22 px row, JetBrains
    Mono did not); so the style draws a probe once per font, height and style, and the
    painter follows what it did."""
    metrics = QFontMetricsF(font)
    width = int(metrics.horizontalAdvance(PROBE)) + 2 * margin + 4
    images = []
    for ours in (False, True):
        image = QImage(width, height, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(QColor(PROBE_FILL, PROBE_FILL, PROBE_FILL))
        painter = QPainter(image)
        if ours:
            static = QStaticText(PROBE)
            static.prepare(font=font)
            painter.setFont(font)
            painter.setPen(QColor(0, 0, 0))
            painter.drawStaticText(QPointF(margin, (height - metrics.height()) / 2), static)
        else:
            option = QStyleOptionViewItem()
            option.initFrom(view)
            option.rect = QRect(0, 0, width, height)
            option.font = font
            option.fontMetrics = QFontMetrics(font)
            option.text = PROBE
            option.features = QStyleOptionViewItem.ViewItemFeature.HasDisplay
            option.displayAlignment = Qt.AlignmentFlag(DEFAULT_ALIGNMENT)
            option.state = QStyle.StateFlag.State_Enabled
            view.style().drawControl(QStyle.ControlElement.CE_ItemViewItem, option, painter, view)
        painter.end()
        images.append(_ink_centre(image, PROBE_FILL))
    theirs, ours_at = images
    return 0 if theirs is None or ours_at is None else round(theirs - ours_at)


class CellPainter(QStyledItemDelegate):
    """Paints a ``RowLooks`` model's text cells from cached shaped text (see the module);
    everything else as ``QStyledItemDelegate`` does. ``install`` puts one on a view."""

    def __init__(self, view: QAbstractItemView) -> None:
        super().__init__(view)
        self._view = view
        self._rows: dict[int, RowLook | None] = {}
        self._frame: _Frame | None = None
        self._fonts: dict[int, tuple[QFont, str]] = {}
        self._shaped: dict[tuple[str, str, int, int], Shaped] = {}
        self._shifts: dict[tuple[str, int, str], int] = {}
        view.viewport().installEventFilter(self)

    @classmethod
    def install(cls, view: QAbstractItemView) -> CellPainter:
        painter = cls(view)
        view.setItemDelegate(painter)
        return painter

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == _PAINT:  # a new paint: rows and colours are read afresh
            self.forget()
        return False

    def forget(self) -> None:
        """Drop what was read for the last paint (the shaped texts stay)."""
        self._rows.clear()
        self._fonts.clear()
        self._frame = None

    @property
    def cached(self) -> int:
        """How many shaped texts are kept (at most ``TEXT_CACHE``)."""
        return len(self._shaped)

    def shaped(
        self,
        text: str,
        font: QFont,
        font_key: str,
        width: int,
        mode: Qt.TextElideMode,
        mode_value: int | None = None,
    ) -> Shaped:
        """``text`` elided to ``width`` in ``font`` and shaped once: from the LRU cache."""
        key = (text, font_key, width, mode.value if mode_value is None else mode_value)
        cache = self._shaped
        hit = cache.pop(key, None)
        if hit is None:
            shown = elided(text, QFontMetrics(font), width, mode)
            static = QStaticText(shown)
            static.setTextFormat(Qt.TextFormat.PlainText)
            static.prepare(font=font)
            exact = QFontMetricsF(font)
            aligned = exact.horizontalAdvance(shown)
            # Qt right-aligns a cut text by its width rounded up, a whole one by its rounded
            # width (measured: a pixel off either way otherwise)
            placed = _rounded(aligned) if shown == text else math.ceil(aligned)
            hit = Shaped(static, min(width, placed), exact.height())
            if len(cache) >= TEXT_CACHE:
                del cache[next(iter(cache))]  # the least recently used
        cache[key] = hit
        return hit

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        frame = self._frame
        if frame is None:
            frame = self._frame = _Frame(self._view, option)
        row = index.row()
        rows = self._rows
        if row in rows:
            look = rows[row]
        else:
            look = rows[row] = None if frame.look is None else frame.look(row)
        state = option.state.value  # an int: flag tests on the enum cost a call each
        if look is None or state & _FOCUS:
            super().paint(painter, option, index)
            return
        column = index.column()
        text = look.texts[column]
        if "\n" in text:
            super().paint(painter, option, index)
            return
        rect = option.rect
        selected = state & _SELECTED
        if selected:
            painter.fillRect(rect, frame.highlight)
        else:
            background = look.backgrounds[column]
            if background is not None:
                painter.fillRect(rect, background)
        if not text:
            return
        font = look.fonts[column]
        if font is None:
            font, font_key = frame.font, frame.font_key
        else:
            font_key = self._font_key(font)
        width = rect.width() - 2 * frame.margin
        shaped = self.shaped(text, font, font_key, width, frame.elide, frame.elide_value)
        colour: Any = frame.selected if selected else look.colours[column]
        painter.setPen(frame.text if colour is None else _pen_colour(colour))
        painter.setFont(font)
        where = self._place(frame, rect, look.alignments[column], shaped, font, font_key)
        painter.drawStaticText(where, shaped.text)

    def _place(
        self,
        frame: _Frame,
        rect: QRect,
        alignment: int | None,
        shaped: Shaped,
        font: QFont,
        font_key: str,
    ) -> QPointF:
        """Where Qt puts the text's top left in the cell ``rect``: inside the margins, as
        aligned (numbers right), a centred line where the style would draw it."""
        flags = DEFAULT_ALIGNMENT if alignment is None else alignment
        width = rect.width() - 2 * frame.margin
        x = rect.x() + frame.margin
        if flags & _RIGHT:
            x += width - shaped.width
        elif flags & _HCENTER:
            x += (width - shaped.width) // 2
        y: float = rect.y()
        height = rect.height()
        if flags & _BOTTOM:
            y += height - shaped.height
        elif not flags & _TOP:
            y += (height - shaped.height) / 2 + self._shift(frame, font, font_key, height)
        return QPointF(x, y)

    def _shift(self, frame: _Frame, font: QFont, font_key: str, height: int) -> int:
        key = (font_key, height, frame.style)
        found = self._shifts.get(key)
        if found is None:
            found = self._shifts[key] = qt_text_shift(self._view, font, height, frame.margin)
        return found

    def _font_key(self, font: QFont) -> str:
        """``font.key()`` once per font object per paint (the row looks keep them alive)."""
        found = self._fonts.get(id(font))
        if found is None or found[0] is not font:
            found = self._fonts[id(font)] = (font, font.key())
        return found[1]


def _rounded(value: float) -> int:
    """As Qt's ``qRound`` (halves away from zero) for the positive sizes here."""
    return int(value + 0.5)


def _pen_colour(colour: Colour) -> QColor:
    return colour.color() if isinstance(colour, QBrush) else colour
