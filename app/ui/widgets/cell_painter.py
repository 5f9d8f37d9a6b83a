"""The tables' one painter: one ``RowLook`` per row (every cell's text, alignment, font,
colour and background, made by the model in one call) drawn without Qt's per-cell roles and
text layout, for every table (watchlist, orders, ledger, deposits, audit, ...).

Two ways in, one look and one set of view colours and margins (``view_colours``,
``text_margin``): ``CellPainter`` is an item delegate for the record tables (Qt still walks the
cells; each is drawn from a cached ``QStaticText``); ``RowPainter`` paints whole rows in one
``paintEvent`` for the watchlist, whose prices change on every tick (a ``drawText`` of a text
whose quick width bound fits, an elision cache for the others).

``CellPainter``: the record tables' cells painted without Qt's text layout on every paint.

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

``RowPainter`` (≥ 100× vn.py at 1,000 watchlist rows painting every 50 ticks): a
``QTableView`` paints each cell through the item delegate, which asks the (Python) model for
seven roles, and the style lays each text out twice; a repaint of the ~40 rows in view took
3–4 ms, more than the ticks themselves. ``RowPainter`` reads each row's look in one call and
draws its cells: 1–1.7 ms. It draws the palette's highlight across a selected row (over any
fade, as the style draws it), alternate row colours when on, each cell's background, the
cell's colour or the palette's text, numbers in their font, elided with "…" when their column
is too narrow (never cut: a clipped price would read as another number), and the grid. Not
drawn: a focus frame (the themes turn it off) and ``::item`` style-sheet rules.

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

from PySide6.QtCore import (
    QEvent,
    QLine,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPointF,
    QRect,
    Qt,
)
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetrics,
    QFontMetricsF,
    QImage,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
    QStaticText,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
)

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


class ViewColours(NamedTuple):
    """A view's palette colours for one paint, in the group Qt would use."""

    text: QColor
    highlight: QBrush
    highlighted: QColor
    alternate: QColor | None
    grid: QColor | None


def colour_group(view: QAbstractItemView, active: bool) -> QPalette.ColorGroup:
    """The palette group a view paints in: disabled, active (its window has the focus) or
    inactive."""
    if not view.isEnabled():
        return QPalette.ColorGroup.Disabled
    return QPalette.ColorGroup.Active if active else QPalette.ColorGroup.Inactive


def view_colours(
    view: QAbstractItemView, palette: QPalette, group: QPalette.ColorGroup
) -> ViewColours:
    """What a cell's colours fall back to, and the selection's, alternate rows' and grid's."""
    grid: QColor | None = None
    if isinstance(view, QTableView) and view.showGrid():
        option = QStyleOptionViewItem()
        option.initFrom(view)
        hint = view.style().styleHint(QStyle.StyleHint.SH_Table_GridLineColor, option, view)
        grid = QColor.fromRgba(hint & 0xFFFFFFFF)  # an ARGB value, signed
    return ViewColours(
        palette.color(group, QPalette.ColorRole.Text),
        palette.brush(group, QPalette.ColorRole.Highlight),
        palette.color(group, QPalette.ColorRole.HighlightedText),
        palette.color(group, QPalette.ColorRole.AlternateBase)
        if view.alternatingRowColors()
        else None,
        grid,
    )


def text_margin(view: QAbstractItemView) -> int:
    """Qt's room each side of a cell's text (the same ``sizeHint`` counts)."""
    return view.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, view) + 1


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
        self.margin = text_margin(view)
        self.elide = view.textElideMode()
        self.elide_value: int = self.elide.value
        self.style = view.style().metaObject().className()
        colours = view_colours(view, option.palette, colour_group(view, _ACTIVE in option.state))
        self.highlight = colours.highlight
        self.selected = colours.highlighted
        self.text = colours.text


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


# -- whole rows in one paint event (the watchlist) -------------------------------------------


class _Span(NamedTuple):
    """A column in the area being painted: its number, left edge and width (px)."""

    column: int
    x: int
    width: int


#: The characters of a number's text: its width is at most its length times the widest of
#: them in its font (the widest glyph of a whole font is often three digits wide).
NUMERALS = "0123456789,.-+ ▲▼—%"
#: Fitted texts kept between paints (the pair names' mostly) before the cache starts afresh.
FITS_KEPT = 4096


class Face(NamedTuple):
    """A font as a paint uses it: its metrics, widest glyph and widest numeral (px, fractional)
    and its key (for the caches)."""

    font: QFont
    metrics: QFontMetrics
    widest: float
    numeral: float
    key: str

    @classmethod
    def of(cls, font: QFont) -> Face:
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


class _Columns(NamedTuple):
    """Per column, for one paint: alignment flags, whether right-aligned, face."""

    alignments: list[int]
    rightwards: list[bool]
    faces: list[Face]


class RowPainter:
    """Paints a ``QTableView``'s rows in its ``paintEvent`` from one ``RowLook`` per row."""

    def __init__(self, view: QTableView) -> None:
        self._view = view
        #: (font key, text, room) -> the text as it fits: a text is only measured when its
        #: quick bound says it might not fit, and the pair names repeat.
        self._fits: dict[tuple[str, str, int], str] = {}
        self._faces: dict[str, Face] = {}
        #: id(font) -> (font, the view font's key, its face resolved against the view's font)
        #: for the fonts the looks carry (kept alive by them).
        self._by_id: dict[int, tuple[QFont, str, Face]] = {}
        #: For one paint: the text margin and the view font's face.
        self._margin = 0
        self._plain: Face | None = None

    def face(self, font: QFont) -> Face:
        """``font``'s face, measured once."""
        key = font.key()
        face = self._faces.get(key)
        if face is None:
            face = self._faces[key] = Face.of(font)
        return face

    def _face_of(self, font: QFont) -> Face:
        """The face of a look's ``font`` over the view's (what it sets wins, the rest is the
        view's, as a delegate resolves a model's font), found by identity after the first
        time."""
        plain = self._plain
        assert plain is not None
        found = self._by_id.get(id(font))
        if found is None or found[0] is not font or found[1] != plain.key:
            face = self.face(font.resolve(plain.font))
            found = self._by_id[id(font)] = (font, plain.key, face)
        return found[2]

    def _fitted(self, face: Face, text: str, room: int) -> str:
        """``text`` elided with "…" to ``room`` px in ``face`` (itself when it fits)."""
        key = (face.key, text, room)
        fitted = self._fits.get(key)
        if fitted is None:
            fitted = face.metrics.elidedText(text, Qt.TextElideMode.ElideRight, room)
            self._fits[key] = fitted
        return fitted

    def paint(self, event: QPaintEvent, looks: Callable[[int], RowLook], rows: int) -> None:
        """Paint the rows in ``event``'s area of the ``rows`` rows, each from ``looks(row)``."""
        view = self._view
        area = event.rect()
        first = view.rowAt(area.top())
        spans = self._spans(area.left(), area.right())
        if first < 0 or not spans:
            return
        last = view.rowAt(area.bottom())
        last = rows - 1 if last < 0 else last
        painter = QPainter(view.viewport())
        try:
            painter.setClipRect(area)
            self._paint_rows(painter, looks, range(first, last + 1), spans, area)
        finally:
            painter.end()

    def _spans(self, left: int, right: int) -> list[_Span]:
        """The shown columns between ``left`` and ``right`` (viewport px), in visual order."""
        view = self._view
        header = view.horizontalHeader()
        spans = []
        for visual in range(header.count()):
            column = header.logicalIndex(visual)
            width = 0 if header.isSectionHidden(column) else view.columnWidth(column)
            x = view.columnViewportPosition(column)
            if width > 0 and x + width > left and x <= right:
                spans.append(_Span(column, x, width))
        return spans

    def _paint_rows(
        self,
        painter: QPainter,
        looks: Callable[[int], RowLook],
        rows: range,
        spans: list[_Span],
        area: QRect,
    ) -> None:
        """Backgrounds and texts of ``rows`` × ``spans`` in ``area``, then the grid over them."""
        view = self._view
        pens = view_colours(view, view.palette(), colour_group(view, view.isActiveWindow()))
        highlight = pens.highlight.color()
        self._margin = text_margin(view)
        selection = view.selectionModel()
        selected = set() if selection is None else {i.row() for i in selection.selectedRows()}
        self._plain = self.face(view.font())
        if len(self._fits) > FITS_KEPT:
            self._fits.clear()
        left, right = spans[0].x, spans[-1].x + spans[-1].width
        font: QFont | None = None  # the painter's
        pen: QColor | QBrush | None = None
        bottoms: list[int] = []  # the grid's line under each row
        # per distinct alignments and fonts tuple (the same tuples row after row): each
        # column's alignment flags, whether it is right-aligned, and its face
        alignments: Sequence[int | None] = ()
        fonts: Sequence[QFont | None] = ()
        columns = _Columns([], [], [])
        for row in rows:
            y, height = view.rowViewportPosition(row), view.rowHeight(row)
            if height <= 0:
                continue
            bottoms.append(y + height - 1)
            look = looks(row)
            if look.alignments is not alignments or look.fonts is not fonts:
                alignments, fonts = look.alignments, look.fonts
                columns = self._columns(alignments, fonts)
            chosen = row in selected
            fill = highlight if chosen else (pens.alternate if row % 2 else None)
            if fill is not None:
                painter.fillRect(QRect(left, y, right - left, height), fill)
            pen, font = self._paint_cells(
                painter, look, y, height, spans, area, chosen, columns, (pens, pen, font)
            )
        if pens.grid is not None and bottoms:
            self._grid(painter, pens.grid, view.rowViewportPosition(rows[0]), bottoms, spans)

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
        """One row's cells; ``state``: the view's colours and the painter's pen and font (set
        only when they change), returned as they end."""
        pens, pen, font = state
        margin = self._margin
        texts, colours = look.texts, look.colours
        alignments, rightwards, faces = columns
        text_colour = pens.highlighted if chosen else pens.text
        backgrounds = None if chosen else look.backgrounds  # the highlight covers them
        for column, x, width in spans:
            if backgrounds is not None:
                background = backgrounds[column]
                if background is not None:
                    painter.fillRect(QRect(x, y, width, height), background)
            colour = text_colour if chosen else (colours[column] or text_colour)
            if colour is not pen:
                painter.setPen(_pen_colour(colour))
                pen = colour
            face = faces[column]
            if face.font is not font:
                painter.setFont(face.font)
                font = face.font
            text = texts[column]
            room = width - 2 * margin
            reach = face.reach(text)
            if reach > room:
                text = self._fitted(face, text, room)
            # a text wholly outside the area is not drawn (a cell repainted for a pixel of it,
            # e.g. the wide Age column next to a changed Spread)
            start = x + margin + room - min(room, reach) if rightwards[column] else x + margin
            if start <= area.right() and start + min(room, reach) >= area.left():
                painter.drawText(QRect(x + margin, y, room, height), alignments[column], text)
        return pen, font

    def _columns(self, alignments: Sequence[int | None], fonts: Sequence[QFont | None]) -> _Columns:
        """Each column's alignment flags, right-alignment and face, for rows that share their
        look's alignments and fonts."""
        plain = self._plain
        assert plain is not None
        flags = [DEFAULT_ALIGNMENT if a is None else a for a in alignments]
        faces = [plain if font is None else self._face_of(font) for font in fonts]
        return _Columns(flags, [bool(a & _RIGHT) for a in flags], faces)

    @staticmethod
    def _grid(
        painter: QPainter, colour: QColor, top: int, bottoms: list[int], spans: list[_Span]
    ) -> None:
        """The grid: a line under each row and right of each column."""
        left, right = spans[0].x, spans[-1].x + spans[-1].width
        lines = [QLine(left, y, right - 1, y) for y in bottoms]
        lines += [QLine(x + width - 1, top, x + width - 1, bottoms[-1]) for _, x, width in spans]
        painter.setPen(QPen(colour, 0))
        painter.drawLines(lines)
