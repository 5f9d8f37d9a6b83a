"""The watchlist table: best bid and ask of each watched pair, with mid, spread and data age.

One row per watched pair, in watchlist order. The display text and sort key of every cell are
computed once per update (not on every paint), and the model tells the view exactly which cells
changed: one ``dataChanged`` per run of changed cells in a row, never a reset on a tick. A
price that moves flashes in the palette's up (blue) or down (orange) tint for
``FLASH_SECONDS`` and keeps a ▲/▼ sign of its last move, so direction never rests on colour
alone; one single-shot timer clears the flashes, signalling only the cells whose flash ended.
A row whose data is older than ``stale_after`` seconds greys out; the age column is refreshed
by one timer each second. Colours come from the palette in force and follow a theme switch:
one ``dataChanged`` over the whole table for the foreground and background roles only.

Sorting goes through ``TopOfBookSortProxy``: Decimal keys from ``SORT_ROLE`` (numbers sort as
numbers), dynamic sorting off so a tick never re-sorts; the panel re-sorts at most once a
second.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from enum import IntEnum
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    QTimer,
)
from PySide6.QtGui import QColor, QFont, QFontDatabase

from app.domain.money import MONEY_CONTEXT
from app.domain.records import TopOfBook
from app.ui.formatting import DASH, Precision, format_number
from app.ui.models.sorting import SORT_ROLE as SORT_ROLE
from app.ui.models.sorting import DecimalSortProxy
from app.ui.palette import TradePalette, current_palette, follow_palette

Index = QModelIndex | QPersistentModelIndex
SortKey = Decimal | str | None
Clock = Callable[[], float]


FLASH_SECONDS = 0.3
AGE_TICK_MS = 1000
#: A row is stale when its data is older than this many top-of-book poll intervals.
STALE_FACTOR = 3
BPS_DECIMALS = 2
UP_SIGN = "▲ "
DOWN_SIGN = "▼ "
_TEN_THOUSAND = Decimal(10_000)
#: A flash ending within this many seconds of a timer shot is cleared by that shot.
_FLASH_SLACK = 0.005


class Column(IntEnum):
    PAIR = 0
    BID = 1
    BID_SIZE = 2
    ASK = 3
    ASK_SIZE = 4
    MID = 5
    SPREAD = 6
    SPREAD_BPS = 7
    AGE = 8


COLUMN_COUNT = len(Column)
#: Price columns that flash and carry a ▲/▼ sign when they move.
FLASH_COLUMNS = (Column.BID, Column.ASK, Column.MID)
# Plain ints for the hot paths (IntEnum members are slower to compare and hash).
_PAIR, _AGE = int(Column.PAIR), int(Column.AGE)
_BID, _ASK = int(Column.BID), int(Column.ASK)
_FLASHING = frozenset(int(c) for c in FLASH_COLUMNS)
_SIZES = frozenset((int(Column.BID_SIZE), int(Column.ASK_SIZE)))
_BPS = int(Column.SPREAD_BPS)

HEADERS = {
    Column.PAIR: "Pair",
    Column.BID: "Bid",
    Column.BID_SIZE: "Bid size",
    Column.ASK: "Ask",
    Column.ASK_SIZE: "Ask size",
    Column.MID: "Mid",
    Column.SPREAD: "Spread",
    Column.SPREAD_BPS: "Spread (bp)",
    Column.AGE: "Age",
}

TOOLTIPS = {
    Column.PAIR: "BASE/QUOTE; prices are in QUOTE per one BASE",
    Column.BID: "Best bid: the highest price a buyer offers (QUOTE per BASE)",
    Column.BID_SIZE: "Size at the best bid, in BASE",
    Column.ASK: "Best ask: the lowest price a seller asks (QUOTE per BASE)",
    Column.ASK_SIZE: "Size at the best ask, in BASE",
    Column.MID: "(bid + ask) / 2",
    Column.SPREAD: "Ask − bid, in QUOTE",
    Column.SPREAD_BPS: "Spread in basis points of the mid (1 bp = 0.01 %)",
    Column.AGE: "Time since this pair's last update; the row greys out when it is stale",
}

_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren
_ALIGN_NUMBER = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
_ALIGN_TEXT = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter

_DISPLAY = int(Qt.ItemDataRole.DisplayRole)
_ALIGNMENT = int(Qt.ItemDataRole.TextAlignmentRole)
_FONT = int(Qt.ItemDataRole.FontRole)
_FOREGROUND = int(Qt.ItemDataRole.ForegroundRole)
_BACKGROUND = int(Qt.ItemDataRole.BackgroundRole)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole)


def age_text(age: float | None) -> str:
    """Whole seconds below a minute, then minutes, then hours; ``—`` without data."""
    if age is None:
        return DASH
    seconds = max(0, int(age))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h"


def spread_bps(book: TopOfBook) -> Decimal | None:
    """The spread in basis points of the mid (exact Decimal); None for a non-positive mid."""
    mid = book.mid
    if mid <= 0:
        return None
    return MONEY_CONTEXT.divide(MONEY_CONTEXT.multiply(book.spread, _TEN_THOUSAND), mid)


def runs(numbers: Iterable[int]) -> list[tuple[int, int]]:
    """Contiguous runs of sorted distinct integers: ``[1, 2, 5]`` -> ``[(1, 2), (5, 5)]``."""
    result: list[tuple[int, int]] = []
    for number in sorted(set(numbers)):
        if result and result[-1][1] == number - 1:
            result[-1] = (result[-1][0], number)
        else:
            result.append((number, number))
    return result


@dataclass(eq=False)
class _Row:
    pair: str
    base: str
    received: float | None = None  # clock time of the last update
    texts: list[str] = field(default_factory=list)
    keys: list[SortKey] = field(default_factory=list)
    #: Last move of each price column: +1 up, -1 down, 0 none yet.
    moves: list[int] = field(default_factory=lambda: [0] * COLUMN_COUNT)
    #: Column -> clock time its flash ends.
    flashes: dict[int, float] = field(default_factory=dict)
    stale: bool = True
    #: Display decimals (price, base asset) the texts were formatted with.
    places: tuple[int, int] = (-1, -1)

    def __post_init__(self) -> None:
        if not self.texts:
            self.texts = [self.pair] + [DASH] * (COLUMN_COUNT - 1)
        if not self.keys:
            self.keys = [self.pair] + [None] * (COLUMN_COUNT - 1)


class TopOfBookModel(QAbstractTableModel):
    def __init__(
        self,
        precision: Precision,
        parent: QObject | None = None,
        *,
        palette: TradePalette | None = None,
        clock: Clock = time.monotonic,
        stale_after: float = 1.5,
    ) -> None:
        """``palette``: None (the default) follows the theme; a palette given here stays."""
        super().__init__(parent)
        self._precision = precision
        self._palette = current_palette() if palette is None else palette
        if palette is None:
            follow_palette(self.set_palette)
        self._clock = clock
        self._stale_after = stale_after
        self._rows: list[_Row] = []
        self._index: dict[str, int] = {}
        self._selected: str | None = None
        self._flashing: set[str] = set()
        self._mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self._bold = QFont()
        self._bold.setBold(True)
        self._flash_timer = QTimer(self)
        self._flash_timer.setSingleShot(True)
        self._flash_timer.timeout.connect(self.expire_flashes)
        self._age_timer = QTimer(self)
        self._age_timer.setInterval(AGE_TICK_MS)
        self._age_timer.timeout.connect(self.refresh_ages)
        self._age_timer.start()

    # -- what the panel drives ----------------------------------------------------------------

    @property
    def pairs(self) -> list[str]:
        return [row.pair for row in self._rows]

    def pair_at(self, row: int) -> str:
        return self._rows[row].pair

    def row_of(self, pair: str) -> int | None:
        return self._index.get(pair)

    @property
    def stale_after(self) -> float:
        return self._stale_after

    @stale_after.setter
    def stale_after(self, seconds: float) -> None:
        if seconds != self._stale_after:
            self._stale_after = seconds
            self.refresh_ages()

    def set_pairs(self, pairs: Sequence[str]) -> None:
        """Show ``pairs`` in this order: rows removed, moved and inserted, never a reset, so
        the data, flashes and selection of the pairs that stay are kept."""
        wanted = list(dict.fromkeys(pairs))
        keep = set(wanted)
        row = len(self._rows) - 1
        while row >= 0:  # removals, bottom up, one signal per run
            if self._rows[row].pair in keep:
                row -= 1
                continue
            last = row
            while row > 0 and self._rows[row - 1].pair not in keep:
                row -= 1
            self.beginRemoveRows(QModelIndex(), row, last)
            for gone in self._rows[row : last + 1]:
                self._flashing.discard(gone.pair)
            del self._rows[row : last + 1]
            self._reindex()
            self.endRemoveRows()
            row -= 1
        present = set(self._index)
        target = [pair for pair in wanted if pair in present]
        if self.pairs != target:
            self._reorder(target)
        position = 0
        while position < len(wanted):  # insertions, top down, one signal per run
            if wanted[position] in present:
                position += 1
                continue
            first = position
            while position + 1 < len(wanted) and wanted[position + 1] not in present:
                position += 1
            self.beginInsertRows(QModelIndex(), first, position)
            self._rows[first:first] = [self._new_row(p) for p in wanted[first : position + 1]]
            self._reindex()
            self.endInsertRows()
            position += 1

    @property
    def palette(self) -> TradePalette:
        return self._palette

    def set_palette(self, palette: TradePalette) -> None:
        """Recolour: the texts, sort keys and layout stay, so one signal for the whole table
        with the two colour roles tells the views all they need."""
        if palette == self._palette:
            return
        self._palette = palette
        if self._rows:
            self.dataChanged.emit(
                self.createIndex(0, 0),
                self.createIndex(len(self._rows) - 1, COLUMN_COUNT - 1),
                [Qt.ItemDataRole.ForegroundRole, Qt.ItemDataRole.BackgroundRole],
            )

    def set_selected(self, pair: str | None) -> None:
        """The session's selected pair is shown in bold."""
        previous, self._selected = self._selected, pair
        if previous == pair:
            return
        for name in (previous, pair):
            row = None if name is None else self._index.get(name)
            if row is not None:
                self._signal(row, _PAIR, _PAIR)

    def update(self, books: Mapping[str, TopOfBook]) -> None:
        """New top of book for some pairs; pairs not shown are ignored."""
        now = self._clock()
        flashed = False
        for pair, book in books.items():
            row = self._index.get(pair)
            if row is None:
                continue
            changed, started = self._apply(self._rows[row], book, now)
            flashed = flashed or started
            for first, last in runs(changed):
                self._signal(row, first, last)
        if flashed:
            self._schedule_flash_clear()

    def refresh_ages(self) -> None:
        """The age column (one signal per run of rows whose age text changed) and the stale
        state (the whole row when it flips). Called each second by the model's own timer."""
        now = self._clock()
        aged: list[int] = []
        for number, row in enumerate(self._rows):
            age = None if row.received is None else now - row.received
            text = age_text(age)
            stale = age is None or age > self._stale_after
            if stale != row.stale:
                row.stale = stale
                row.texts[_AGE] = text
                self._signal(number, 0, COLUMN_COUNT - 1)
            elif text != row.texts[_AGE]:
                row.texts[_AGE] = text
                aged.append(number)
        for first, last in runs(aged):
            self.dataChanged.emit(self.createIndex(first, _AGE), self.createIndex(last, _AGE))

    def expire_flashes(self) -> None:
        """Clear the flashes that ended (signalling only those cells), then wait for the next."""
        now = self._clock() + _FLASH_SLACK
        for pair in list(self._flashing):
            number = self._index[pair]
            row = self._rows[number]
            ended = [column for column, until in row.flashes.items() if until <= now]
            for column in ended:
                del row.flashes[column]
            if not row.flashes:
                self._flashing.discard(pair)
            for first, last in runs(ended):
                self._signal(number, first, last)
        self._schedule_flash_clear()

    def flashing(self, row: int, column: int) -> int:
        """+1 or -1 while the cell flashes for a rise or a fall, else 0."""
        data = self._rows[row]
        return data.moves[column] if column in data.flashes else 0

    def is_stale(self, row: int) -> bool:
        return self._rows[row].stale

    def column_texts(self, column: int) -> list[str]:
        """The display text of ``column`` in every row (for fitting column widths)."""
        return [row.texts[column] for row in self._rows]

    @property
    def number_font(self) -> QFont:
        """The fixed-pitch font of the numeric columns."""
        return self._mono

    # -- Qt model interface -------------------------------------------------------------------

    # Every Python override is a virtual call from C++ (several µs each through PySide), made
    # for each visible cell and role on every paint: these stay small, and ``index`` is
    # overridden so that mapping a proxy index costs one call, not rowCount + columnCount.

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        if 0 <= row < len(self._rows) and 0 <= column < COLUMN_COUNT and not parent.isValid():
            return self.createIndex(row, column)
        return QModelIndex()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else COLUMN_COUNT

    def flags(self, index: Index) -> Qt.ItemFlag:
        return _FLAGS if index.isValid() else Qt.ItemFlag.NoItemFlags

    def data(self, index: Index, role: int = _DISPLAY) -> Any:
        number = index.row()
        if number < 0:
            return None
        row = self._rows[number]
        column = index.column()
        if role == _DISPLAY:
            return row.texts[column]
        if role == _FONT:
            return self._font(row, column)
        if role == _ALIGNMENT:
            return _ALIGN_TEXT if column == _PAIR else _ALIGN_NUMBER
        if role == _FOREGROUND:
            return self._foreground(row, column)
        if role == _BACKGROUND:
            return self._background(row, column)
        if role == SORT_ROLE:
            if column == _AGE:
                return self._age_key(row)
            return row.keys[column]
        if role == _TOOLTIP and row.stale:
            if row.received is None:
                return f"{row.pair}: no data yet"
            return f"{row.pair}: no fresh data (last update {row.texts[_AGE]} ago)"
        return None

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = _DISPLAY) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < COLUMN_COUNT:
            return None
        role = int(role)
        column = Column(section)
        if role == _DISPLAY:
            return HEADERS[column]
        if role == _TOOLTIP:
            return TOOLTIPS[column]
        if role == _ALIGNMENT:
            return _ALIGN_TEXT if column == Column.PAIR else _ALIGN_NUMBER
        return None

    # -- internals ----------------------------------------------------------------------------

    def _font(self, row: _Row, column: int) -> QFont | None:
        if column != _PAIR:
            return self._mono
        return self._bold if row.pair == self._selected else None

    def _foreground(self, row: _Row, column: int) -> QColor | None:
        if row.stale:
            return self._palette.stale
        if column in row.flashes:  # default text on the tinted background reads best
            return None
        if column == _BID:
            return self._palette.bid
        if column == _ASK:
            return self._palette.ask
        return None

    def _background(self, row: _Row, column: int) -> QColor | None:
        if column in row.flashes:
            return self._palette.up_flash if row.moves[column] > 0 else self._palette.down_flash
        return None

    def _new_row(self, pair: str) -> _Row:
        return _Row(pair, pair.partition("/")[0])

    def _signal(self, row: int, first: int, last: int) -> None:
        """dataChanged for columns ``first``..``last`` of ``row`` (createIndex: no bounds
        checks through the Python rowCount/columnCount on the hot path)."""
        self.dataChanged.emit(self.createIndex(row, first), self.createIndex(row, last))

    def _reindex(self) -> None:
        self._index = {row.pair: number for number, row in enumerate(self._rows)}

    def _reorder(self, target: list[str]) -> None:
        self.layoutAboutToBeChanged.emit()
        old_pairs = self.pairs
        by_pair = {row.pair: row for row in self._rows}
        self._rows = [by_pair[pair] for pair in target]
        self._reindex()
        before = self.persistentIndexList()
        after = [self.index(self._index[old_pairs[i.row()]], i.column()) for i in before]
        self.changePersistentIndexList(before, after)
        self.layoutChanged.emit()

    def _text(self, row: _Row, column: int, value: Decimal | None) -> str:
        if column in _SIZES:
            return format_number(value, row.places[1])
        if column == _BPS:
            return format_number(value, BPS_DECIMALS)
        text = format_number(value, row.places[0])
        if column in _FLASHING:
            move = row.moves[column]
            if move > 0:
                return UP_SIGN + text
            if move < 0:
                return DOWN_SIGN + text
        return text

    def _apply(self, row: _Row, book: TopOfBook, now: float) -> tuple[list[int], bool]:
        """Store ``book`` in ``row``; the columns whose text or key changed, and whether a
        flash started. Only cells whose value (or display precision) changed are formatted."""
        changed: list[int] = []
        started = False
        places = (self._precision.price(row.pair), self._precision.asset(row.base))
        reformat = places != row.places
        row.places = places
        mid = book.mid
        values = (
            book.bid,
            book.bid_size,
            book.ask,
            book.ask_size,
            mid,
            book.spread,
            spread_bps(book) if mid > 0 else None,
        )
        keys = row.keys
        for column, value in enumerate(values, start=1):
            old = keys[column]
            if value == old and not reformat:
                continue
            if (
                column in _FLASHING
                and value is not None
                and isinstance(old, Decimal)
                and value != old
            ):
                row.moves[column] = 1 if value > old else -1
                row.flashes[column] = now + FLASH_SECONDS
                started = True
            text = self._text(row, column, value)
            if value != old or text != row.texts[column]:
                keys[column] = value
                row.texts[column] = text
                changed.append(column)
        if row.flashes:
            self._flashing.add(row.pair)
        row.received = now
        text = age_text(0.0)
        if row.stale:  # fresh again: every cell's colour changes
            row.stale = False
            row.texts[_AGE] = text
            return list(range(COLUMN_COUNT)), started
        if text != row.texts[_AGE]:
            row.texts[_AGE] = text
            changed.append(_AGE)
        return changed, started

    def _schedule_flash_clear(self) -> None:
        deadlines = [
            until
            for pair in self._flashing
            for until in self._rows[self._index[pair]].flashes.values()
        ]
        if not deadlines:
            self._flash_timer.stop()
            return
        delay = max(0.0, min(deadlines) - self._clock())
        self._flash_timer.start(math.ceil(delay * 1000))

    def _age_key(self, row: _Row) -> Decimal | None:
        if row.received is None:
            return None
        return Decimal(round((self._clock() - row.received) * 1000)).scaleb(-3)


class TopOfBookSortProxy(DecimalSortProxy):
    """Never re-sorts on its own (prices tick several times a second): the panel calls
    ``resort()`` on a slow timer. Pairs without data sort last."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent, dynamic=False)
