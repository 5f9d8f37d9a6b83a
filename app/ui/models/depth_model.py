"""The order book of one pair as a ladder: asks above (best ask nearest the middle), bids below.

Rows ``0 .. len(asks) - 1`` are the asks from the deepest down to the best; the bids follow
from the best down to the deepest. Columns: price, size, cumulative size (summed from the
best level outward on each side). Everything stays Decimal; only ``DisplayRole`` is text.

A new snapshot with the same pair and the same number of levels on each side emits
``dataChanged`` only for the cells whose value changed (one signal per run of adjacent changed
cells in a row, so Qt merges the repaints), plus a bar-role-only signal for a column whose bar
scale (the largest value in the visible book) moved. A different pair or level count resets
the model.

Side colours (the price text, and ``DepthRole.SIDE_COLOUR`` for the size bars the panel
paints) come from the palette in force; a theme switch signals every cell once, for those two
roles only.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from enum import IntEnum
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)
from PySide6.QtGui import QColor

from app.domain.records import OrderBook
from app.ui.formatting import Precision
from app.ui.palette import TradePalette, current_palette, follow_palette

ModelIndex = QModelIndex | QPersistentModelIndex

ASK = "ask"
BID = "bid"

SIDES = (ASK, BID)


def side_colour(side: str, palette: TradePalette) -> QColor:
    """The price text and size bar colour of ``side`` (the bars use it translucent)."""
    return palette.ask if side == ASK else palette.bid


class Column(IntEnum):
    PRICE = 0
    SIZE = 1
    CUMULATIVE = 2


class DepthRole(IntEnum):
    #: The cell's Decimal (price, size or cumulative size).
    VALUE = Qt.ItemDataRole.UserRole + 1
    #: ``"ask"`` or ``"bid"``.
    SIDE = Qt.ItemDataRole.UserRole + 2
    #: Decimal in [0, 1]: the cell's share of the largest value of its column in the visible
    #: book (size and cumulative columns; None for price). Computed when asked (paint time).
    BAR_FRACTION = Qt.ItemDataRole.UserRole + 3
    #: QColor of the row's side in the model's palette (every column), for painted bars.
    SIDE_COLOUR = Qt.ItemDataRole.UserRole + 4


@dataclass(frozen=True)
class DepthRow:
    side: str
    price: Decimal
    size: Decimal
    cumulative: Decimal

    def value(self, column: int) -> Decimal:
        if column == Column.PRICE:
            return self.price
        if column == Column.SIZE:
            return self.size
        return self.cumulative


def _side_rows(side: str, levels: list[tuple[Decimal, Decimal]]) -> list[DepthRow]:
    """``levels`` best first -> rows with the running total from the best level outward."""
    rows: list[DepthRow] = []
    total = Decimal(0)
    for price, size in levels:
        total += size
        rows.append(DepthRow(side, price, size, total))
    return rows


def ladder_rows(book: OrderBook) -> tuple[list[DepthRow], int]:
    """The ladder of ``book`` and how many of its rows are asks (bids descending, asks
    ascending by price whatever order the server sent)."""
    asks = _side_rows(ASK, sorted(book.asks, key=lambda level: level[0]))
    bids = _side_rows(BID, sorted(book.bids, key=lambda level: level[0], reverse=True))
    return [*reversed(asks), *bids], len(asks)


def _largest(rows: list[DepthRow], column: Column) -> Decimal:
    return max((row.value(column) for row in rows), default=Decimal(0))


class DepthModel(QAbstractTableModel):
    def __init__(
        self,
        precision: Precision,
        parent: QObject | None = None,
        *,
        palette: TradePalette | None = None,
    ) -> None:
        """``palette``: None (the default) follows the theme; a palette given here stays."""
        super().__init__(parent)
        self._precision = precision
        self._palette = current_palette() if palette is None else palette
        if palette is None:
            follow_palette(self.set_palette)
        self._book: OrderBook | None = None
        self._rows: list[DepthRow] = []
        self._ask_count = 0
        self._largest: dict[Column, Decimal] = {
            Column.SIZE: Decimal(0),
            Column.CUMULATIVE: Decimal(0),
        }

    # -- what the panel asks --------------------------------------------------------------------

    @property
    def book(self) -> OrderBook | None:
        return self._book

    @property
    def pair(self) -> str | None:
        return None if self._book is None else str(self._book.pair)

    @property
    def ask_count(self) -> int:
        return self._ask_count

    @property
    def bid_count(self) -> int:
        return len(self._rows) - self._ask_count

    def row(self, row: int) -> DepthRow:
        return self._rows[row]

    @property
    def rows(self) -> list[DepthRow]:
        return list(self._rows)

    def best_ask(self) -> Decimal | None:
        return self._rows[self._ask_count - 1].price if self._ask_count else None

    def best_bid(self) -> Decimal | None:
        return self._rows[self._ask_count].price if self.bid_count else None

    def spread(self) -> Decimal | None:
        ask, bid = self.best_ask(), self.best_bid()
        return None if ask is None or bid is None else ask - bid

    @property
    def palette(self) -> TradePalette:
        return self._palette

    def set_palette(self, palette: TradePalette) -> None:
        """Recolour every cell: one signal, the two colour roles only."""
        if palette == self._palette:
            return
        self._palette = palette
        if self._rows:
            self.dataChanged.emit(
                self.index(0, 0),
                self.index(len(self._rows) - 1, len(Column) - 1),
                [Qt.ItemDataRole.ForegroundRole, DepthRole.SIDE_COLOUR],
            )

    # -- updates --------------------------------------------------------------------------------

    def set_book(self, book: OrderBook | None) -> None:
        if book is None:
            rows: list[DepthRow] = []
            ask_count = 0
        else:
            rows, ask_count = ladder_rows(book)
        same_shape = (
            self._book is not None
            and book is not None
            and book.pair == self._book.pair
            and ask_count == self._ask_count
            and len(rows) == len(self._rows)
        )
        largest = {column: _largest(rows, column) for column in self._largest}
        if not same_shape:
            self.beginResetModel()
            self._book, self._rows, self._ask_count, self._largest = book, rows, ask_count, largest
            self.endResetModel()
            return
        old_rows, old_largest = self._rows, self._largest
        self._book, self._rows, self._largest = book, rows, largest
        for row, (old, new) in enumerate(zip(old_rows, rows, strict=True)):
            self._signal_changed_cells(row, old, new)
        last = len(rows) - 1
        for column, value in largest.items():
            if value != old_largest[column] and last >= 0:
                self.dataChanged.emit(
                    self.index(0, column), self.index(last, column), [DepthRole.BAR_FRACTION]
                )

    def _signal_changed_cells(self, row: int, old: DepthRow, new: DepthRow) -> None:
        start: int | None = None
        for column in (*Column, None):
            changed = column is not None and old.value(column) != new.value(column)
            if changed and start is None:
                start = column
            elif not changed and start is not None:
                end = Column.CUMULATIVE if column is None else column - 1
                self.dataChanged.emit(self.index(row, start), self.index(row, end), [])
                start = None

    # -- the Qt model contract ------------------------------------------------------------------

    def rowCount(self, parent: ModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: ModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(Column)

    def flags(self, index: ModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(Column):
            return None
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        title = ("Price", "Size", "Total")[section]
        if self._book is None:
            return title
        unit = self._book.pair.quote if section == Column.PRICE else self._book.pair.base
        return f"{title} ({unit})"

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or self._book is None:
            return None
        row_number, column = index.row(), index.column()
        if not (0 <= row_number < len(self._rows) and 0 <= column < len(Column)):
            return None
        row = self._rows[row_number]
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(row, Column(column))
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole and column == Column.PRICE:
            return side_colour(row.side, self._palette)
        if role == DepthRole.SIDE_COLOUR:
            return side_colour(row.side, self._palette)
        if role == DepthRole.VALUE:
            return row.value(column)
        if role == DepthRole.SIDE:
            return row.side
        if role == DepthRole.BAR_FRACTION:
            return self._bar_fraction(row, Column(column))
        return None

    def _text(self, row: DepthRow, column: Column) -> str:
        assert self._book is not None
        if column == Column.PRICE:
            return self._precision.price_text(row.price, str(self._book.pair))
        return self._precision.amount(row.value(column), self._book.pair.base)

    def _bar_fraction(self, row: DepthRow, column: Column) -> Decimal | None:
        if column == Column.PRICE:
            return None
        largest = self._largest[column]
        if largest <= 0:
            return Decimal(0)
        return max(Decimal(0), min(Decimal(1), row.value(column) / largest))
