"""The order book of one pair as a ladder: asks above (best ask nearest the middle), bids below.

Rows ``0 .. len(asks) - 1`` are the asks from the deepest down to the best; the bids follow
from the best down to the deepest. Columns: price, size, cumulative size (summed from the
best level outward on each side). Everything stays Decimal; only ``DisplayRole`` is text.

Held (``set_held(True)``, what the ladder panel does) the rows are price rows that stay put:
a new book is laid on the rows taken from an earlier one (``app.ui.models.ladder_rows``), so
a price never moves to another row under the trader's pointer; ``regrid`` takes the rows from
the current book again (the panel's recentre). Not held, every book brings its own rows.

A new snapshot with the same pair and the same number of levels on each side emits
``dataChanged`` only for the cells whose value changed (one signal per run of adjacent changed
cells in a row, so Qt merges the repaints), plus a bar-role-only signal for a column whose bar
scale (the largest value in the visible book) moved. A different pair or level count resets
the model.

Side colours (the price text, and ``DepthRole.SIDE_COLOUR`` for the size bars the panel
paints) come from the palette in force; a theme switch signals every cell once, for those two
roles only. While the order book feed is stale (``set_stale``) prices and bars are in the stale
grey instead of their side's colour.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from enum import IntEnum
from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QColor

from app.domain.display import Precision
from app.domain.records import OrderBook
from app.ui.models.columns import Column
from app.ui.models.keyed_table import Index, KeyedTableModel
from app.ui.models.ladder_rows import ASK, BID, INSIDE, SIDES, DepthRow, grid_of, ladder_rows
from app.ui.models.record_cells import Cell
from app.ui.palette import TradePalette

__all__ = [
    "ASK",
    "BID",
    "COLUMNS",
    "INSIDE",
    "SIDES",
    "DepthModel",
    "DepthRole",
    "DepthRow",
    "ladder_rows",
    "side_colour",
]


def side_colour(side: str, palette: TradePalette) -> QColor:
    """The price text and size bar colour of ``side`` (the bars use it translucent); a row
    inside the spread is in the ordinary text colour."""
    if side == INSIDE:
        return palette.text
    return palette.ask if side == ASK else palette.bid


class DepthRole(IntEnum):
    #: The cell's Decimal (price, size or cumulative size).
    VALUE = Qt.ItemDataRole.UserRole + 1
    #: ``"ask"``, ``"bid"`` or ``"inside"``.
    SIDE = Qt.ItemDataRole.UserRole + 2
    #: Decimal in [0, 1]: the cell's share of the largest value of its column in the visible
    #: book (size and cumulative columns; None for price). Computed when asked (paint time).
    BAR_FRACTION = Qt.ItemDataRole.UserRole + 3
    #: QColor of the row's side in the model's palette (every column), for painted bars.
    SIDE_COLOUR = Qt.ItemDataRole.UserRole + 4


#: Why a click on a held row inside the spread does nothing.
INSIDE_TIP = (
    "Inside the spread now: no bid or ask at this price. Click a bid to sell, an ask to buy."
)


def price_cell(row: DepthRow, precision: Precision) -> Cell:
    return Cell(precision.price_text(row.price, row.pair), row.price, None)


def base_column(
    key: str, header: str, value: Callable[[DepthRow], Decimal], tooltip: str
) -> Column[DepthRow]:
    """A column of an amount of the pair's base asset (sizes and their running sum)."""

    def cell(row: DepthRow, precision: Precision) -> Cell:
        amount = value(row)
        if amount == 0:  # a held row with no level left at its price (or inside the spread)
            return Cell("", amount, None)
        return Cell(precision.amount(amount, row.pair.partition("/")[0]), amount, None)

    return Column(key, header, cell, tooltip, numeric=True, fixed_pitch=False)


#: Right-aligned numbers in the table's own font (the ladder is narrow; the panel paints bars).
COLUMNS: tuple[Column[DepthRow], ...] = (
    Column(
        "price",
        "Price",
        price_cell,
        numeric=True,
        fixed_pitch=False,
        colour=lambda r, p: side_colour(r.side, p),
        tip=lambda r, _: INSIDE_TIP if r.side == INSIDE else None,
    ),
    base_column("size", "Size", lambda r: r.size, "Size at this price, in BASE"),
    base_column(
        "cumulative",
        "Cumulative",
        lambda r: r.cumulative,
        "Size from the touch out to this price (the running sum of the sizes), in BASE",
    ),
)
_PRICE, _SIZE, _CUMULATIVE = 0, 1, 2


def _largest(rows: list[DepthRow], column: int) -> Decimal:
    return max((row.value(column) for row in rows), default=Decimal(0))


class DepthModel(KeyedTableModel[DepthRow]):
    colour_roles = (Qt.ItemDataRole.ForegroundRole, DepthRole.SIDE_COLOUR)

    def __init__(
        self,
        precision: Precision,
        parent: QObject | None = None,
        *,
        palette: TradePalette | None = None,
    ) -> None:
        """``palette``: None (the default) follows the theme; a palette given here stays."""
        super().__init__(COLUMNS, precision, parent, palette=palette)
        self._book: OrderBook | None = None
        self._ask_count = 0
        self._bid_count = 0
        self._held = False
        #: The rows' prices, highest first: the book's own, or held from an earlier book.
        self._grid: list[Decimal] = []
        self._largest: dict[int, Decimal] = {_SIZE: Decimal(0), _CUMULATIVE: Decimal(0)}

    # -- what the panel asks --------------------------------------------------------------------

    @property
    def book(self) -> OrderBook | None:
        return self._book

    @property
    def pair(self) -> str | None:
        return None if self._book is None else str(self._book.pair)

    @property
    def ask_count(self) -> int:
        """How many rows (the first ones) are asks."""
        return self._ask_count

    @property
    def bid_count(self) -> int:
        """How many rows (the last ones) are bids; held rows between them are ``INSIDE``."""
        return self._bid_count

    @property
    def best_ask_row(self) -> int | None:
        """The row where the best ask is shown (None: no ask on the rows)."""
        return self._ask_count - 1 if self._ask_count else None

    @property
    def best_bid_row(self) -> int | None:
        """The row where the best bid is shown (None: no bid on the rows)."""
        return len(self._records) - self._bid_count if self._bid_count else None

    def row(self, row: int) -> DepthRow:
        return self._records[row]

    def row_of_price(self, price: Decimal) -> int | None:
        """The row showing ``price`` (None when no row has that price)."""
        return next(
            (row for row, record in enumerate(self._records) if record.price == price), None
        )

    @property
    def rows(self) -> list[DepthRow]:
        return list(self._records)

    def best_ask(self) -> Decimal | None:
        """The book's best ask (a held row may show it on a row priced above it)."""
        asks = [] if self._book is None else self._book.asks
        return min((price for price, _ in asks), default=None)

    def best_bid(self) -> Decimal | None:
        bids = [] if self._book is None else self._book.bids
        return max((price for price, _ in bids), default=None)

    def spread(self) -> Decimal | None:
        ask, bid = self.best_ask(), self.best_bid()
        return None if ask is None or bid is None else ask - bid

    def header(self, column: int) -> str:
        """The title with its unit under it: QUOTE for the price, BASE for the sizes. On two
        lines: the ladder's three columns share a narrow dock, and "Cumulative (BTC)" on one
        line was wider than its column at 1920×1080 (clipped to "umulative (BTC)")."""
        title = super().header(column)
        if self._book is None:
            return title
        unit = self._book.pair.quote if column == _PRICE else self._book.pair.base
        return f"{title}\n({unit})"

    # -- updates --------------------------------------------------------------------------------

    @property
    def held(self) -> bool:
        return self._held

    def set_held(self, held: bool) -> None:
        """Hold the price rows from book to book (True) or take each book's own (False)."""
        self._held = held

    def set_book(self, book: OrderBook | None) -> bool:
        """A new book: the cells that changed, or a reset for another pair or row count; the
        same book again (a quiet market) costs one comparison and no signal. Held, the book is
        laid on the rows already shown (new rows only for a first book or another pair).
        Returns whether the rows were taken from this book (a new grid)."""
        if book is not None and book == self._book:
            return False
        old = self._book
        regrid = (
            not self._held or book is None or old is None or book.pair != old.pair or not self._grid
        )
        self._book = book
        if regrid:
            self._grid = [] if book is None else grid_of(book)
        self._show(old)
        return regrid

    def regrid(self) -> None:
        """Take the rows from the current book again (the ladder recentres)."""
        if self._book is None:
            return
        grid = grid_of(self._book)
        if grid != self._grid:
            self._grid = grid
            self._show(self._book)

    def _show(self, old: OrderBook | None) -> None:
        """Lay the book on the grid; ``old``: the book shown before (its pair decides a reset)."""
        book = self._book
        rows, ask_count, bid_count = ([], 0, 0) if book is None else ladder_rows(book, self._grid)
        same_shape = (
            old is not None
            and book is not None
            and book.pair == old.pair
            and len(rows) == len(self._records)
            and (self._held or ask_count == self._ask_count)
        )
        old_sides = [record.side for record in self._records]
        old_largest = self._largest
        self._ask_count, self._bid_count = ask_count, bid_count
        self._largest = {column: _largest(rows, column) for column in old_largest}
        # Keyed by place in the ladder: the same shape keeps every key, so only cells change.
        self.apply(list(enumerate(rows)), reset=not same_shape)
        last = len(rows) - 1
        if not same_shape or last < 0:
            return
        # A held row that changed sides (the touch moved across it) changes colour only.
        turned = [row for row, record in enumerate(rows) if record.side != old_sides[row]]
        self.signal_rows(turned, self.colour_roles)
        for column, value in self._largest.items():
            if value != old_largest[column]:
                self.dataChanged.emit(
                    self.index(0, column), self.index(last, column), [DepthRole.BAR_FRACTION]
                )

    # -- more roles -----------------------------------------------------------------------------

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if self._stale and role in self.colour_roles and index.isValid():
            return self._palette.stale
        return super().data(index, role)

    def extra_data(self, row: int, column: int, role: int) -> Any:
        record = self._records[row]
        if role == DepthRole.SIDE_COLOUR:
            return side_colour(record.side, self._palette)
        if role == DepthRole.VALUE:
            return record.value(column)
        if role == DepthRole.SIDE:
            return record.side
        if role == DepthRole.BAR_FRACTION:
            return self._bar_fraction(record, column)
        return None

    def _bar_fraction(self, row: DepthRow, column: int) -> Decimal | None:
        if column == _PRICE:
            return None
        largest = self._largest[column]
        if largest <= 0:
            return Decimal(0)
        return max(Decimal(0), min(Decimal(1), row.value(column) / largest))
