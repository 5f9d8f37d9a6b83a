"""Column widths of a record table: each column as wide as its title and the widest value in
view, shared out by ``app.ui.column_widths`` (numbers and times whole, ids and notes give
width first), and the widths the trader dragged kept, per table, in the settings.

Cheap at any size (the orders table can hold 100,000 rows): only the rows in view are measured
— their display texts, in the fonts the cells are painted in, with the view's own font metrics
and text margins (what ``CellPainter`` elides by) — and only when something that can change
the widths happened: new content, a scroll, a resize, a column shown or hidden. Those only ask
the shared frame clock (``app.ui.frame_clock``) for a frame; the work is done once in it,
whatever number of changes came before. A hidden table (a dock tab behind another) does
nothing until it is shown. The widest value seen stays wanted until the model is reset (a new
query): a column does not shrink and grow back as rows scroll by.

A width the trader drags (a mouse press on the header, then a resize) is pinned: kept as it is,
saved under ``columnWidths/<table>/<column key>``, and restored when the table is made again.
A double-click on the column's edge gives it back to the automatic width.

A cell drawn cut (an id or a note giving way, words in a narrow dock, a column the trader made
narrow) shows its whole text in its tooltip, before what the model's tooltip says.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import (
    QAbstractItemModel,
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSettings,
    Qt,
)
from PySide6.QtGui import QFont, QFontMetrics, QFontMetricsF, QHelpEvent
from PySide6.QtWidgets import QHeaderView, QTableView, QToolTip

from app.ui.column_widths import Fit, Need, plan_widths
from app.ui.frame_clock import FrameClock, shared_frame_clock
from app.ui.widgets.cell_painter import RowLooks, elided, text_margin

Index = QModelIndex | QPersistentModelIndex
SETTINGS_GROUP = "columnWidths"
#: A yielding column (an id, a note) is not cut below this many average characters (or its
#: title): a stub long enough to tell two ids apart.
YIELD_CHARS = 10
#: A word column is not cut below this many average characters (or its title).
TEXT_CHARS = 6
#: Pixels added to a measured text: the layout Qt elides by may round a glyph up where the
#: fractional metrics here did not.
SLACK = 1
#: Measured texts kept (a few screens of cells) before the cache starts afresh.
TEXTS_KEPT = 8192

_DISPLAY = int(Qt.ItemDataRole.DisplayRole)
_FONT = int(Qt.ItemDataRole.FontRole)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole)
_HELP = QEvent.Type.ToolTip
_PRESS = QEvent.Type.MouseButtonPress
_RELEASE = QEvent.Type.MouseButtonRelease
_REFIT_EVENTS = frozenset((QEvent.Type.Resize, QEvent.Type.Show))
_RESTYLE_EVENTS = frozenset((QEvent.Type.FontChange, QEvent.Type.StyleChange))


def specs_of(model: QAbstractItemModel | None) -> Sequence[Any]:
    """The column specs (``Column``) of ``model`` or of the model under its proxies; empty for
    a model that declares none."""
    seen = 0
    while model is not None and seen < 8:
        columns = getattr(model, "columns", None)
        if isinstance(columns, tuple):
            return columns
        source = getattr(model, "sourceModel", None)
        model = source() if callable(source) else None
        seen += 1
    return ()


def read_pins(settings: QSettings, table: str) -> dict[str, int]:
    """The widths the trader chose for ``table``'s columns, by column key."""
    settings.beginGroup(f"{SETTINGS_GROUP}/{table}")
    try:
        pins: dict[str, int] = {}
        for key in settings.childKeys():
            try:
                width = int(str(settings.value(key)))
            except ValueError:
                continue
            if width > 0:
                pins[key] = width
        return pins
    finally:
        settings.endGroup()


class ColumnSizer(QObject):
    """Sizes the columns of ``view`` (see the module). ``remember`` keeps the trader's widths
    in the settings; ``follow`` is called when the view gets another model."""

    def __init__(self, view: QTableView, *, clock: FrameClock | None = None) -> None:
        super().__init__(view)
        self._view = view
        self._clock = shared_frame_clock() if clock is None else clock
        self._model: QAbstractItemModel | None = None
        self._looks: RowLooks | None = None
        self._keys: list[str] = []
        self._fits: list[Fit] = []
        #: Column -> the widest value seen in view since the last reset (px, margins included).
        self._widest: dict[int, int] = {}
        #: Column -> its title's width (Qt's section size hint), asked once per reset.
        self._titles: dict[int, int] = {}
        self._pins: dict[str, int] = {}
        self._settings: QSettings | None = None
        self._table = ""
        self._asked = False
        self._all_rows = True  # every row in view is to be measured
        self._rows: list[tuple[int, int]] = []  # else these (view rows) only
        self._in_view = (0, -1)
        self._sizing = False  # our own resizes: never the trader's
        self._pressed = False  # a mouse button is down on the header
        self._dragged = False  # the trader resized a column during this press
        self._texts: dict[tuple[str, str], int] = {}
        self._metrics: dict[str, QFontMetricsF] = {}
        #: id(font) -> (font, its key) for the fonts of one measuring pass (the row looks
        #: carry the same font objects row after row).
        self._font_keys: dict[int, tuple[QFont, str]] = {}
        #: Fits done (tests and benchmarks), and the viewport width the last one planned for.
        self.fits = 0
        self.room = -1
        header = view.horizontalHeader()
        header.setStretchLastSection(False)  # the plan gives the last column what is left
        header.setResizeContentsPrecision(0)  # Qt's own fit (a double-click) reads rows in view
        header.sectionResized.connect(self._section_resized)
        header.sectionHandleDoubleClicked.connect(self._handle_double_clicked)
        self._header_area = header.viewport()
        self._header_area.installEventFilter(self)
        self._cells_area = view.viewport()
        self._cells_area.installEventFilter(self)
        view.installEventFilter(self)
        view.verticalScrollBar().valueChanged.connect(self._scrolled)
        self._clock.listen(self._on_frame)
        self.follow(view.model())

    # -- what the panels call -----------------------------------------------------------------

    def remember(self, settings: QSettings, table: str) -> None:
        """Keep the trader's widths under ``columnWidths/<table>``; the saved ones apply now."""
        self._settings, self._table = settings, table
        self._pins = read_pins(settings, table)
        self.ask()

    def follow(self, model: QAbstractItemModel | None) -> None:
        """Measure ``model``'s rows (the view's new model) from now on."""
        old = self._model
        if old is not None:
            for signal, slot in self._connections(old):
                signal.disconnect(slot)
        self._model = model
        self._looks = model if isinstance(model, RowLooks) else None
        specs = specs_of(model)
        count = 0 if model is None else model.columnCount()
        self._keys = [spec.key for spec in specs] if specs else [str(n) for n in range(count)]
        self._fits = [spec.fitting for spec in specs] if specs else [Fit.TEXT] * count
        if model is not None:
            for signal, slot in self._connections(model):
                signal.connect(slot)
        self._reset()

    def _connections(self, model: QAbstractItemModel) -> list[tuple[Any, Any]]:
        return [
            (model.modelReset, self._reset),
            (model.layoutChanged, self._rows_moved),
            (model.rowsInserted, self._rows_inserted),
            (model.rowsRemoved, self._rows_moved),
            (model.dataChanged, self._data_changed),
            (model.headerDataChanged, self._titles_changed),
        ]

    @property
    def pins(self) -> dict[str, int]:
        """The trader's widths by column key."""
        return dict(self._pins)

    def unpin(self, key: str) -> None:
        """Give column ``key`` back to the automatic width (and forget the saved one)."""
        if self._pins.pop(key, None) is not None and self._settings is not None:
            self._settings.remove(f"{SETTINGS_GROUP}/{self._table}/{key}")
        self.ask()

    def unpin_all(self) -> None:
        """Every column back to the automatic width."""
        for key in list(self._pins):
            self.unpin(key)

    @property
    def pending(self) -> bool:
        """A fit is asked for and not done yet."""
        return self._asked

    def ask(self, *, all_rows: bool = True) -> None:
        """Fit in the next frame (measuring every row in view when ``all_rows``)."""
        if all_rows:
            self._all_rows = True
            self._rows.clear()
        if not self._asked:
            self._asked = True
            self._clock.request()

    # -- what changes the widths ----------------------------------------------------------------

    def _reset(self, *_: object) -> None:
        self._widest.clear()
        self._titles.clear()
        self.ask()

    def _titles_changed(self, *_: object) -> None:
        self._titles.clear()
        self.ask(all_rows=False)

    def _rows_moved(self, *_: object) -> None:
        self.ask()

    def _rows_inserted(self, _parent: Index, first: int, last: int) -> None:
        self._rows_changed(first, last, inserted=True)

    def _data_changed(self, top: Index, bottom: Index, *_: object) -> None:
        self._rows_changed(top.row(), bottom.row())

    def _rows_changed(self, first: int, last: int, *, inserted: bool = False) -> None:
        """Rows changed: measured only when they are in view (an insert above the view moves
        the rows in it: every row in view again)."""
        low, high = self._in_view
        if inserted and first <= high:
            self.ask()
        elif first <= high and last >= low:
            if not self._all_rows:
                self._rows.append((max(first, low), min(last, high)))
            self.ask(all_rows=False)
        elif high < low:  # nothing measured yet (the first rows)
            self.ask()

    def _scrolled(self, *_: object) -> None:
        self.ask(all_rows=False)  # the rows that came into view are measured (``fit_now``)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        view = self._view
        if watched is self._header_area:
            if kind == _PRESS:
                self._pressed, self._dragged = True, False
            elif kind == _RELEASE:
                self._pressed = False
                if self._dragged:
                    self._dragged = False
                    self.ask(all_rows=False)  # the other columns make room or take the rest
        elif kind in _REFIT_EVENTS:
            self.ask(all_rows=False)  # a new room; rows new in view are measured
        elif kind == _HELP and watched is self._cells_area and isinstance(event, QHelpEvent):
            return self._whole_text_tip(event)
        elif watched is view and kind in _RESTYLE_EVENTS:
            self._texts.clear()
            self._metrics.clear()
            self._reset()
        return False

    def _section_resized(self, column: int, _old: int, new: int) -> None:
        if self._sizing:
            return
        if self._pressed and new > 0 and 0 <= column < len(self._keys):
            key = self._keys[column]
            self._pins[key] = new
            self._dragged = True
            if self._settings is not None:
                self._settings.setValue(f"{SETTINGS_GROUP}/{self._table}/{key}", new)
            return
        self.ask(all_rows=False)  # shown, hidden or fitted by someone else: plan again

    def _handle_double_clicked(self, column: int) -> None:
        if 0 <= column < len(self._keys):
            self._widest.pop(column, None)  # Qt fitted it to the rows in view: measure again
            self.unpin(self._keys[column])
            self.ask()

    # -- the frame ------------------------------------------------------------------------------

    def _on_frame(self, _now: float) -> None:
        if not self._asked:
            return
        if not self._view.isVisible():
            self._asked, self._all_rows = False, True  # asked again when shown (``Show``)
            return
        self.fit_now()

    def fit_now(self) -> None:
        """Measure what changed in view and set the widths (the frame does this)."""
        self._asked = False
        model, view = self._model, self._view
        if model is None or len(self._keys) != model.columnCount():
            self.follow(model)
            self._asked = False
        self.fits += 1
        rows = model.rowCount() if model is not None else 0
        first = view.rowAt(0)
        last = view.rowAt(max(0, view.viewport().height() - 1))
        if first < 0:
            first, last = 0, -1
        elif last < 0:
            last = rows - 1
        moved = (first, last) != self._in_view  # other rows came into view
        self._in_view = (first, last)
        spans = [(first, last)] if self._all_rows or moved else self._rows
        self._all_rows, self._rows = False, []
        for low, high in spans:
            if low <= high:
                self._measure(max(low, first), min(high, last))
        self._apply()

    def widths_wanted(self) -> dict[int, int]:
        """Column -> the width its title and the widest value in view want (px)."""
        header = self._view.horizontalHeader()
        return {
            column: max(self._title(column), self._widest.get(column, 0))
            for column in range(header.count())
        }

    def _apply(self) -> None:
        view = self._view
        header = view.horizontalHeader()
        shown = [
            column
            for column in (header.logicalIndex(visual) for visual in range(header.count()))
            if 0 <= column < len(self._keys) and not header.isSectionHidden(column)
        ]
        average = view.fontMetrics().averageCharWidth()
        needs = []
        for column in shown:
            title = self._title(column)
            wanted = max(title, self._widest.get(column, 0))
            fit = self._fits[column]
            floor = wanted
            if fit is Fit.YIELD:
                floor = min(wanted, max(title, YIELD_CHARS * average))
            elif fit is Fit.TEXT:
                floor = min(wanted, max(title, TEXT_CHARS * average))
            needs.append(Need(fit, wanted, floor, self._pins.get(self._keys[column])))
        self.room = view.viewport().width()
        widths = plan_widths(needs, self.room)
        self._sizing = True
        try:
            for column, width in zip(shown, widths, strict=True):
                if header.sectionSize(column) != width:
                    header.resizeSection(column, width)
        finally:
            self._sizing = False

    def _title(self, column: int) -> int:
        width = self._titles.get(column)
        if width is None:
            width = self._titles[column] = self._view.horizontalHeader().sectionSizeHint(column)
        return width

    # -- a cut cell's tooltip -------------------------------------------------------------------

    def drawn(self, row: int, column: int) -> tuple[str, str]:
        """The whole text of the view's cell and the text drawn in it (as ``CellPainter``
        elides it to the cell's room)."""
        view, model = self._view, self._model
        if model is None:
            return "", ""
        texts, fonts = self._look(model, row, [column])
        if not texts:
            return "", ""
        text, font = texts[column], fonts[column]
        room = view.visualRect(model.index(row, column)).width() - 2 * text_margin(view)
        metrics = QFontMetrics(view.font() if font is None else font)
        return text, elided(text, metrics, room, view.textElideMode())

    def _whole_text_tip(self, event: QHelpEvent) -> bool:
        """Show a cut cell's whole text (then the model's tooltip); False: Qt's own tooltip."""
        view, model = self._view, self._model
        index = view.indexAt(event.pos())
        if model is None or not index.isValid():
            return False
        whole, shown = self.drawn(index.row(), index.column())
        if shown == whole:
            return False
        more = model.data(index, _TOOLTIP)
        tip = whole if not more or whole in str(more) else f"{whole}\n{more}"
        QToolTip.showText(event.globalPos(), tip, self._cells_area, view.visualRect(index))
        return True

    # -- measuring ------------------------------------------------------------------------------

    def _measure(self, first: int, last: int) -> None:
        """The widest value of each shown, unpinned column in view rows ``first``..``last``."""
        view, model = self._view, self._model
        if model is None:
            return
        header: QHeaderView = view.horizontalHeader()
        pins, keys = self._pins, self._keys
        columns = [
            column
            for column in range(len(keys))
            if not header.isSectionHidden(column) and keys[column] not in pins
        ]
        delegated = [c for c in columns if view.itemDelegateForColumn(c) is not None]
        plain = [c for c in columns if c not in delegated]
        # Qt's text margins each side, and the grid line the cell's rect leaves out
        margins = 2 * text_margin(view) + (1 if view.showGrid() else 0) + SLACK
        widest = self._widest
        view_font = view.font()
        for row in range(first, last + 1):
            texts, fonts = self._look(model, row, plain)
            if not texts:
                continue
            for column in plain:
                text = texts[column]
                if not text:
                    continue
                font = fonts[column]
                width = self._text_width(text, view_font if font is None else font) + margins
                if width > widest.get(column, 0):
                    widest[column] = width
        self._font_keys.clear()
        for column in delegated:  # a painted cell (a bar): its delegate says what it needs
            width = view.sizeHintForColumn(column)
            if width > widest.get(column, 0):
                widest[column] = width

    def _look(
        self, model: QAbstractItemModel, row: int, columns: Sequence[int]
    ) -> tuple[Sequence[str], Sequence[QFont | None]]:
        """A row's texts and fonts (at least of ``columns``): in one call from a model with
        ``row_look``, else cell by cell; empty for a row the model cannot say."""
        if self._looks is not None:
            look = self._looks.row_look(row)
            return ((), ()) if look is None else (look.texts, look.fonts)
        count = model.columnCount()
        texts = [""] * count
        fonts: list[QFont | None] = [None] * count
        for column in columns:
            index = model.index(row, column)
            text = model.data(index, _DISPLAY)
            texts[column] = "" if text is None else str(text)
            font = model.data(index, _FONT)
            fonts[column] = font if isinstance(font, QFont) else None
        return texts, fonts

    def _text_width(self, text: str, font: QFont) -> int:
        known = self._font_keys.get(id(font))
        if known is None or known[0] is not font:
            known = self._font_keys[id(font)] = (font, font.key())
        key = known[1]
        found = self._texts.get((key, text))
        if found is not None:
            return found
        metrics = self._metrics.get(key)
        if metrics is None:
            metrics = self._metrics[key] = QFontMetricsF(font)
        lines = text.split("\n") if "\n" in text else (text,)
        width = math.ceil(max(metrics.horizontalAdvance(line) for line in lines))
        if len(self._texts) >= TEXTS_KEPT:
            self._texts.clear()
        self._texts[(key, text)] = width
        return width
