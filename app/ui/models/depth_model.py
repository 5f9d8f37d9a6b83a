"""The order book of one pair as a ladder: asks above (best ask nearest the middle), bids below.

Rows ``0 .. len(asks) - 1`` are the asks from the deepest down to the best; the bids follow
from the best down to the deepest. Columns: price, the trader's own resting size at the row
(``set_own``: buys and sells, see ``app.services.own_orders`` for which row an order between
rows is on), size, cumulative size (summed from the best level outward on each side).
Everything stays Decimal; only ``DisplayRole`` is text.

Amounts are in BASE, at the base asset's precision without noise: each amount column shows
every row with the same number of decimals (so the digits align on the decimal point in the
ladder's fixed-pitch font), the fewest that show every value of the column exactly, at most
the asset's decimals: sizes of 23.5, 20.625 and 7 read 23.500, 20.625 and 7.000, not
23.50000000. The count only grows while the price rows are held, and starts afresh with new
rows (a recentre, another pair): a size with one more decimal in the next book would
otherwise shift every number of the column sideways under the trader's eyes four times a
second.

Held (``set_held(True)``, what the ladder panel does) the rows are price rows that stay put:
a new book is laid on the rows taken from an earlier one (``app.ui.models.ladder_rows``), so
a price never moves to another row under the trader's pointer; ``regrid`` takes the rows from
the current book again (the panel's recentre). Not held, every book brings its own rows.

A new snapshot with the same pair and the same number of levels on each side emits
``dataChanged`` only for the cells whose value changed (one signal per run of adjacent changed
cells in a row, so Qt merges the repaints), plus a bar-role-only signal for a column whose bar
scale (the largest value in the visible book) moved. A different pair or level count resets
the model.

Side colours (the price text, the own orders' text, and ``DepthRole.SIDE_COLOUR`` for the
size bars the panel paints) are the palette's bid and ask colours, the ones the watchlist's
Bid and Ask columns wear; the touch (the rows of the best ask and the best bid) has a faint
background of its side's colour, and an own order's cell a stronger one. A theme switch
signals every cell once, for the colour roles only. While the order book feed is stale
(``set_stale``) prices, sizes, bars and the touch are in the stale grey instead of their
side's colour (the own orders come from another feed and keep theirs).

Painting: ``row_look`` gives a row's texts, colours and backgrounds in one call, kept until the
row changes (``app.ui.widgets.cell_painter``), and ``bar_fraction_at``, ``bar_colour`` and
``widest_text`` give the painter what it needs for the bars without a Qt role call per cell.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from enum import IntEnum
from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QColor, QFont

from app.domain.display import Precision
from app.domain.records import OrderBook
from app.services.own_orders import OwnOrder
from app.ui.models.columns import ALIGN_NUMBER, Column
from app.ui.models.keyed_table import Cells, Index, KeyedTableModel
from app.ui.models.ladder_cells import (
    INSIDE_TIP,
    OWN_TIP,
    Looks,
    amount_text,
    base_cell,
    own_colour,
    own_text,
    own_tip,
    places_of,
    price_cell,
    side_colour,
)
from app.ui.models.ladder_rows import ASK, BID, INSIDE, SIDES, DepthRow, grid_of, ladder_rows
from app.ui.models.record_cells import Cell
from app.ui.palette import TradePalette
from app.ui.widgets.cell_painter import RowLook

__all__ = [
    "ASK",
    "BID",
    "COLUMNS",
    "INSIDE",
    "INSIDE_TIP",
    "SIDES",
    "DepthModel",
    "DepthRole",
    "DepthRow",
    "ladder_rows",
    "side_colour",
]


class DepthRole(IntEnum):
    #: The cell's Decimal (price, own size, size or cumulative size).
    VALUE = Qt.ItemDataRole.UserRole + 1
    #: ``"ask"``, ``"bid"`` or ``"inside"``.
    SIDE = Qt.ItemDataRole.UserRole + 2
    #: Decimal in [0, 1]: the cell's share of the largest value of its column in the visible
    #: book (size and cumulative columns; None for the others).
    BAR_FRACTION = Qt.ItemDataRole.UserRole + 3
    #: QColor of the row's side in the model's palette (every column), for painted bars.
    SIDE_COLOUR = Qt.ItemDataRole.UserRole + 4
    #: ``"ask"`` on the best ask's row, ``"bid"`` on the best bid's, else None: the touch.
    TOUCH = Qt.ItemDataRole.UserRole + 5


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
    Column(
        "own",
        "Own",
        lambda r, p: base_cell(r.own_size, r, p),
        OWN_TIP,
        numeric=True,
        fixed_pitch=False,
        colour=own_colour,
        tip=own_tip,
    ),
    Column(
        "size",
        "Size",
        lambda r, p: base_cell(r.size, r, p),
        "Size at this price, in BASE",
        numeric=True,
        fixed_pitch=False,
    ),
    Column(
        "cumulative",
        "Cumulative",
        lambda r, p: base_cell(r.cumulative, r, p),
        "Size from the touch out to this price (the running sum of the sizes), in BASE",
        numeric=True,
        fixed_pitch=False,
    ),
)
_PRICE, _OWN, _SIZE, _CUMULATIVE = 0, 1, 2, 3
#: The columns of amounts of the base asset, each with its own number of decimals.
AMOUNT_COLUMNS = (_OWN, _SIZE, _CUMULATIVE)
#: The columns with a size bar.
BAR_COLUMNS = (_SIZE, _CUMULATIVE)


def _price(row: DepthRow) -> Decimal:
    return row.price


def _own_size(row: DepthRow) -> Decimal:
    return row.own_size


def _size(row: DepthRow) -> Decimal:
    return row.size


def _cumulative(row: DepthRow) -> Decimal:
    return row.cumulative


#: Each column's Decimal of a row.
_VALUES: tuple[Callable[[DepthRow], Decimal], ...] = (_price, _own_size, _size, _cumulative)
_FOREGROUND = int(Qt.ItemDataRole.ForegroundRole)
_BACKGROUND = int(Qt.ItemDataRole.BackgroundRole)
_SIDE_COLOUR = int(DepthRole.SIDE_COLOUR)
_ALIGNMENTS = [int(ALIGN_NUMBER.value)] * len(COLUMNS)


def _largest(rows: list[DepthRow], column: int) -> Decimal:
    value = _VALUES[column]
    return max((value(row) for row in rows), default=Decimal(0))


def _places(rows: list[DepthRow], column: int) -> int:
    """The decimals the values of ``column`` need (an own cell with both sides: both)."""
    if column == _OWN:
        return max(
            (places_of(a) for row in rows if row.own for a in (row.own_buy, row.own_sell)),
            default=0,
        )
    value = _VALUES[column]
    return max((places_of(value(row)) for row in rows), default=0)


class DepthModel(KeyedTableModel[DepthRow]):
    colour_roles = (Qt.ItemDataRole.ForegroundRole, DepthRole.SIDE_COLOUR, _BACKGROUND)

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
        #: Each bar column's fractions by row (floats: the painter's, made once per book).
        self._fractions: dict[int, list[float]] = {column: [] for column in BAR_COLUMNS}
        #: The decimals of each amount column (grow while the rows are held, see the module).
        self._decimals: dict[int, int] = dict.fromkeys(AMOUNT_COLUMNS, 0)
        self._fresh_decimals = True
        self._widest: dict[int, str] = dict.fromkeys(AMOUNT_COLUMNS, "")
        #: The trader's resting orders of ``_own_pair`` and those beyond the rows.
        self._own: tuple[OwnOrder, ...] = ()
        self._own_pair = ""
        self._beyond: tuple[OwnOrder, ...] = ()
        self._looks = Looks(self._palette)
        self._row_looks: dict[int, RowLook] = {}
        self._own_font = QFont(self.number_font)
        self._own_font.setBold(True)

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

    def touch_rows(self) -> tuple[int | None, int | None]:
        """The rows of the best ask and the best bid (None: that side is not shown)."""
        return self.best_ask_row, self.best_bid_row

    def touch_of(self, row: int) -> str | None:
        """``"ask"`` for the best ask's row, ``"bid"`` for the best bid's, else None."""
        if row == self.best_ask_row:
            return ASK
        return BID if row == self.best_bid_row else None

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

    @property
    def own_orders(self) -> tuple[OwnOrder, ...]:
        """The trader's resting orders the ladder was given (its pair's)."""
        return self._own

    @property
    def own_beyond(self) -> tuple[OwnOrder, ...]:
        """The trader's resting orders on no row (beyond the deepest rows)."""
        return self._beyond

    def decimals(self, column: int) -> int:
        """The decimals the amount ``column`` shows now."""
        return self._decimals[column]

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
        lines: the ladder's columns share a narrow dock, and "Cumulative (BTC)" on one line
        was wider than its column at 1920×1080 (clipped to "umulative (BTC)")."""
        title = super().header(column)
        if self._book is None:
            return title
        unit = self._book.pair.quote if column == _PRICE else self._book.pair.base
        return f"{title}\n({unit})"

    # -- what the painter asks (no Qt role call per cell) ---------------------------------------

    def bar_fraction_at(self, row: int, column: int) -> float:
        """The bar of a cell of a bar column: its share of the column's largest value."""
        fractions = self._fractions.get(column)
        return fractions[row] if fractions is not None and row < len(fractions) else 0.0

    def bar_colour(self, row: int) -> QColor:
        """The translucent colour of a row's bars (stale grey while the book is stale)."""
        looks = self._looks
        if self._stale:
            return looks.bar_stale
        side = self._records[row].side
        return looks.bar[side] if side != INSIDE else looks.bar_stale

    def touch_colour(self, row: int) -> QColor | None:
        """The colour of the line between the touch and the spread, on the touch rows."""
        touch = self.touch_of(row)
        if touch is None:
            return None
        return self._looks.stale if self._stale else self._looks.side[touch]

    def widest_text(self, column: int) -> str:
        """The longest text of an amount column now: its digits' room in every row."""
        return self._widest.get(column, "")

    def row_look(self, row: int) -> RowLook | None:
        """Every cell of ``row`` as the painter needs it, made once per change of the row."""
        look = self._row_looks.get(row)
        if look is not None:
            return look
        if not 0 <= row < len(self._records):
            return None
        record, looks = self._records[row], self._looks
        colours: list[QColor | None]
        if self._stale:
            colours = [looks.stale, own_colour(record, self._palette), looks.stale, looks.stale]
        else:
            colours = [looks.side[record.side], own_colour(record, self._palette), None, None]
        backgrounds = [self._background(row, column) for column in range(len(COLUMNS))]
        fonts: list[QFont | None] = [None, self._own_font if record.own else None, None, None]
        texts = [cell.display for cell in self._cells[row]]
        look = self._row_looks[row] = RowLook(texts, _ALIGNMENTS, fonts, colours, backgrounds)
        return look

    def _background(self, row: int, column: int) -> QColor | None:
        record, looks = self._records[row], self._looks
        if column == _OWN and record.own:
            if record.own_buy and record.own_sell:
                return looks.own["both"]
            return looks.own["buy" if record.own_buy else "sell"]
        touch = self.touch_of(row)
        if touch is None:
            return None
        return looks.touch_stale if self._stale else looks.touch[touch]

    # -- updates --------------------------------------------------------------------------------

    @property
    def held(self) -> bool:
        return self._held

    def set_held(self, held: bool) -> None:
        """Hold the price rows from book to book (True) or take each book's own (False)."""
        self._held = held

    def set_palette(self, palette: TradePalette) -> None:
        if palette != self._palette:
            self._looks = Looks(palette)
            self._row_looks.clear()
        super().set_palette(palette)

    def set_stale(self, stale: bool) -> None:
        if stale != self._stale:
            self._row_looks.clear()
        super().set_stale(stale)

    def set_own(self, pair: str, orders: tuple[OwnOrder, ...]) -> None:
        """The trader's resting orders of ``pair`` (from the order feed): shown on their rows
        while the ladder shows that pair; only the cells that change are signalled."""
        if (pair, orders) == (self._own_pair, self._own):
            return
        self._own_pair, self._own = pair, orders
        if self._book is not None:
            self._show(self._book)

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
            self._fresh_decimals = True
        self._show(old)
        return regrid

    def regrid(self) -> None:
        """Take the rows from the current book again (the ladder recentres)."""
        if self._book is None:
            return
        grid = grid_of(self._book)
        if grid != self._grid or self._needed_decimals(self._records) != self._decimals:
            self._grid = grid
            self._fresh_decimals = True  # and the amounts their fewest decimals again
            self._show(self._book)

    def _show(self, old: OrderBook | None) -> None:
        """Lay the book on the grid; ``old``: the book shown before (its pair decides a reset)."""
        book = self._book
        own = self._own if book is not None and str(book.pair) == self._own_pair else ()
        if book is None:
            rows, ask_count, bid_count, self._beyond = [], 0, 0, ()
        else:
            ladder = ladder_rows(book, self._grid, own)
            rows, ask_count, bid_count = ladder.rows, ladder.ask_count, ladder.bid_count
            self._beyond = ladder.beyond
        same_shape = (
            old is not None
            and book is not None
            and book.pair == old.pair
            and len(rows) == len(self._records)
            and (self._held or ask_count == self._ask_count)
        )
        old_sides = [record.side for record in self._records]
        old_touch = (self.best_ask_row, self.best_bid_row)
        old_largest = self._largest
        self._ask_count, self._bid_count = ask_count, bid_count
        self._largest = {column: _largest(rows, column) for column in old_largest}
        self._fractions = {column: self._fractions_of(rows, column) for column in BAR_COLUMNS}
        self._set_decimals(rows, fresh=self._fresh_decimals or not same_shape)
        self._fresh_decimals = False
        self._row_looks.clear()
        # Keyed by place in the ladder: the same shape keeps every key, so only cells change.
        self.apply(list(enumerate(rows)), reset=not same_shape)
        self._widest = {
            column: max(self.column_texts(column), key=len, default="") for column in AMOUNT_COLUMNS
        }
        last = len(rows) - 1
        if not same_shape or last < 0:
            return
        # A held row that changed sides (the touch moved across it) changes colour only, and
        # so do the rows the touch left or came to (their background).
        turned = {row for row, record in enumerate(rows) if record.side != old_sides[row]}
        for row in (*old_touch, self.best_ask_row, self.best_bid_row):
            if row is not None and row not in turned and old_touch != self.touch_rows():
                turned.add(row)
        self.signal_rows(sorted(turned), self.colour_roles)
        for column, value in self._largest.items():
            if value != old_largest[column]:
                self.dataChanged.emit(
                    self.index(0, column), self.index(last, column), [DepthRole.BAR_FRACTION]
                )

    def _fractions_of(self, rows: list[DepthRow], column: int) -> list[float]:
        largest = self._largest[column]
        if largest <= 0:
            return [0.0] * len(rows)
        top = float(largest)
        value = _VALUES[column]
        return [min(1.0, max(0.0, float(value(row)) / top)) for row in rows]

    def _set_decimals(self, rows: list[DepthRow], *, fresh: bool) -> None:
        """Each amount column's decimals for ``rows``: the fewest that show every value
        exactly, at most the base asset's; never fewer than before unless ``fresh``."""
        for column, needed in self._needed_decimals(rows).items():
            self._decimals[column] = needed if fresh else max(needed, self._decimals[column])

    def _needed_decimals(self, rows: list[DepthRow]) -> dict[int, int]:
        """The fewest decimals that show every amount of ``rows`` exactly, per amount column,
        at most the base asset's."""
        cap = 8 if self._book is None else self._precision.asset(self._book.pair.base)
        return {column: min(cap, _places(rows, column)) for column in AMOUNT_COLUMNS}

    def cells_of(self, record: DepthRow) -> Cells:
        """The row's cells with each amount column's decimals."""
        decimals = self._decimals
        return (
            price_cell(record, self._precision),
            Cell(own_text(record, decimals[_OWN]), record.own_size, None),
            Cell(amount_text(record.size, decimals[_SIZE]), record.size, None),
            Cell(amount_text(record.cumulative, decimals[_CUMULATIVE]), record.cumulative, None),
        )

    # -- more roles -----------------------------------------------------------------------------

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if (
            self._stale
            and role in (_FOREGROUND, _SIDE_COLOUR)
            and index.isValid()
            and index.column() != _OWN
        ):
            return self._palette.stale
        return super().data(index, role)

    def extra_data(self, row: int, column: int, role: int) -> Any:
        record = self._records[row]
        if role == DepthRole.SIDE_COLOUR:
            return side_colour(record.side, self._palette)
        if role == _BACKGROUND:
            return self._background(row, column)
        if role == DepthRole.VALUE:
            return _VALUES[column](record)
        if role == DepthRole.SIDE:
            return record.side
        if role == DepthRole.BAR_FRACTION:
            return self._bar_fraction(record, column)
        if role == DepthRole.TOUCH:
            return self.touch_of(row)
        if role == Qt.ItemDataRole.FontRole and column == _OWN and record.own:
            return self._own_font
        return None

    def _bar_fraction(self, row: DepthRow, column: int) -> Decimal | None:
        if column not in BAR_COLUMNS:
            return None
        largest = self._largest[column]
        if largest <= 0:
            return Decimal(0)
        return max(Decimal(0), min(Decimal(1), _VALUES[column](row) / largest))
