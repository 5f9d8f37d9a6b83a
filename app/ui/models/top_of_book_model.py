"""The watchlist table: best bid and ask of each watched pair, with mid, spread and data age.

One row per watched pair. The display text of a cell is computed once per change (never per
paint) and only for the rows in view; sort keys are the raw values. The model tells the view
exactly which cells in view changed: one ``dataChanged`` per run of changed cells in a row,
never a reset on a tick.

The model holds the only tick buffer (``_pending``): the panel stages each snapshot into it
(``stage``: the newest tick per pair and the time it came, nothing else) and the frame clock
flushes it (``_on_frame``): the waiting ticks of the rows in view are applied, formatted and
signalled once per frame; the others wait until their row is read. So a tick goes bridge ->
panel -> ``stage`` -> frame -> ``dataChanged`` -> paint, and whatever reads a row (a paint, a
test, a sort, a row scrolled into view) sees its newest tick.

Rows out of view cost almost nothing per tick (most ticks of a long watchlist go to
rows nobody sees): the tick is only kept — the newest per pair, with the time it came — and
applied when anything reads the row (a paint, ``record``, ``cell``, ``is_stale``,
``flashing``, a row coming into view with ``set_visible``). Applied then, it is as if it had
been applied when it came, except for the ▲/▼ sign: that is the row's net move since it was
last brought up to date, not the last of the moves it did not show. A fade starts at the
tick's receive time (a row scrolled into view within the fade shows the rest of it; after the
fade, none), and a row whose newest tick is older than ``stale_after`` is grey when shown.
Sorting reads a waiting tick's keys without applying it; the age refresh skips such rows
(their waiting tick decides when they are read).

Colours have one meaning each (``app.ui.palette``): every number is in the theme's neutral
text colour; the Bid and Ask columns are told apart by their headers, which carry a swatch of
the side's colour (the themes' style sheets colour header text themselves). A price that moves
keeps a ▲/▼ sign of its last move and fades in the palette's up or down tint over
``FLASH_SECONDS`` — only the cells whose value changed, never a whole row on every tick. The
fade's strength is the trader's setting (``palette.flash_mode``: off, subtle, full); the fades
step (``FADE_STEPS`` steps) in the application's frame clock (``app.ui.frame_clock``), not with a
timer of their own, signalling only the cells still fading.
A row whose data is older than ``stale_after`` seconds greys out; the age column is refreshed
once a second, also from the frame clock. Colours come from the palette in force and follow a
theme switch: one ``dataChanged`` over the whole table for the foreground and background roles
only.

Sorting is the model's own (no proxy): rows are shown in watchlist order or sorted by one
column's raw key (Decimal: numbers sort as numbers) with the tables' one sort
(``app.ui.models.sorting``); a tick never re-sorts, ``resort()`` does, at most once every
``RESORT_MS`` from the frame clock while staged ticks changed the keys.

Columns the trader hid (``set_hidden_columns``) are not formatted on a tick (a cell read
through ``data``/``cell`` is formatted on the spot; a column shown again is formatted as its
rows are painted), and a tick's changed cells are one signal across them.

The watchlist's view paints rows itself from ``row_look`` (one call per row, the same
answers as ``data``: ``app.ui.panels.watchlist_table``); ``data`` serves every other reader.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from decimal import Decimal
from typing import Any, NamedTuple

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor, QFont, QIcon, QPixmap

from app.domain.display import DASH, Precision, format_number
from app.domain.money import MONEY_CONTEXT
from app.domain.records import TopOfBook
from app.ui.frame_clock import FRAME_MS, FrameClock, shared_frame_clock
from app.ui.models.columns import ALIGN_NUMBER, ALIGN_TEXT, Column
from app.ui.models.keyed_table import Cells, Index, KeyedTableModel, changed_columns, runs
from app.ui.models.record_cells import Cell
from app.ui.models.sorting import SORT_ROLE as SORT_ROLE
from app.ui.models.sorting import order_of
from app.ui.palette import (
    TradePalette,
    flash_colour,
    flash_mode,
    flash_mode_changed,
)
from app.ui.widgets.cell_painter import RowLook

Clock = Callable[[], float]


FLASH_SECONDS = 0.6
#: A fade steps down this many times (a repaint of the fading cells each step) before it ends.
FADE_STEPS = 3
AGE_TICK_MS = 1000
#: A sorted table is re-sorted at most this often (ms) while its data changes.
RESORT_MS = 1000
BPS_DECIMALS = 2
UP_SIGN = "▲ "
DOWN_SIGN = "▼ "
_TEN_THOUSAND = Decimal(10_000)
#: A flash ending within this many seconds of a timer shot is cleared by that shot.
_FLASH_SLACK = 0.005


#: Keys of the price columns that flash and carry a ▲/▼ sign when they move.
FLASH_KEYS = ("bid", "ask", "mid")

_DISPLAY = int(Qt.ItemDataRole.DisplayRole)
_ALIGNMENT = int(Qt.ItemDataRole.TextAlignmentRole)
_FONT = int(Qt.ItemDataRole.FontRole)
_FOREGROUND = int(Qt.ItemDataRole.ForegroundRole)
_BACKGROUND = int(Qt.ItemDataRole.BackgroundRole)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole)
_DECORATION = int(Qt.ItemDataRole.DecorationRole)
#: Side of the swatch on the Bid and Ask headers (px).
SWATCH = 10


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


class BookRow(NamedTuple):
    """One watched pair as the table shows it: its last prices and sizes (None before any
    data), the last move of each flashing price (+1 up, -1 down, 0 none yet) and the display
    decimals. (A NamedTuple: one is built for every pair on every tick, and it is cheaper to
    build than a frozen dataclass.)"""

    pair: str
    base: str
    bid: Decimal | None = None
    bid_size: Decimal | None = None
    ask: Decimal | None = None
    ask_size: Decimal | None = None
    mid: Decimal | None = None
    spread: Decimal | None = None
    bps: Decimal | None = None
    moves: tuple[int, int, int] = (0, 0, 0)  # bid, ask, mid
    price_places: int = 2
    size_places: int = 2
    received: float | None = None  # clock time of the last update
    stale: bool = True


#: The sign a price keeps after its last move.
SIGNS = {1: UP_SIGN, -1: DOWN_SIGN, 0: ""}


# Cell functions, one per column (spelled out: they run for every pair on every tick).


def pair_cell(q: BookRow, _: Precision) -> Cell:
    return Cell(q.pair, q.pair, None)


def bid_cell(q: BookRow, _: Precision) -> Cell:
    return Cell(SIGNS[q.moves[0]] + format_number(q.bid, q.price_places), q.bid, None)


def bid_size_cell(q: BookRow, _: Precision) -> Cell:
    return Cell(format_number(q.bid_size, q.size_places), q.bid_size, None)


def ask_cell(q: BookRow, _: Precision) -> Cell:
    return Cell(SIGNS[q.moves[1]] + format_number(q.ask, q.price_places), q.ask, None)


def ask_size_cell(q: BookRow, _: Precision) -> Cell:
    return Cell(format_number(q.ask_size, q.size_places), q.ask_size, None)


def mid_cell(q: BookRow, _: Precision) -> Cell:
    return Cell(SIGNS[q.moves[2]] + format_number(q.mid, q.price_places), q.mid, None)


def spread_cell(q: BookRow, _: Precision) -> Cell:
    return Cell(format_number(q.spread, q.price_places), q.spread, None)


def bps_cell(q: BookRow, _: Precision) -> Cell:
    return Cell(format_number(q.bps, BPS_DECIMALS), q.bps, None)


def age_cell(q: BookRow, _: Precision) -> Cell:
    """``0 s`` when data just came (the model's timer ages it), ``—`` before any."""
    return Cell(age_text(None if q.received is None else 0.0), None, None)


def moved(value: Decimal | None, before: Decimal | None, move: int) -> int:
    """The last move of a price: +1 up, -1 down; ``move`` when it did not change."""
    if value is None or before is None or value == before:
        return move
    return 1 if value > before else -1


def swatch(colour: QColor) -> QIcon:
    """A small square of ``colour``: the side's mark on its column header."""
    pixmap = QPixmap(SWATCH, SWATCH)
    pixmap.fill(colour)
    return QIcon(pixmap)


COLUMNS: tuple[Column[BookRow], ...] = (
    Column(
        "pair",
        "Pair",
        pair_cell,
        "BASE/QUOTE; prices are in QUOTE per one BASE",
        alignment=ALIGN_TEXT,
    ),
    Column(
        "bid",
        "Bid",
        bid_cell,
        "Best bid: the highest price a buyer offers (QUOTE per BASE)",
        numeric=True,
    ),
    Column(
        "bid_size",
        "Bid size",
        bid_size_cell,
        "Size at the best bid, in BASE",
        numeric=True,
    ),
    Column(
        "ask",
        "Ask",
        ask_cell,
        "Best ask: the lowest price a seller asks (QUOTE per BASE)",
        numeric=True,
    ),
    Column(
        "ask_size",
        "Ask size",
        ask_size_cell,
        "Size at the best ask, in BASE",
        numeric=True,
    ),
    Column(
        "mid",
        "Mid",
        mid_cell,
        "(bid + ask) / 2",
        numeric=True,
    ),
    Column(
        "spread",
        "Spread",
        spread_cell,
        "Ask − bid, in QUOTE (a sort keeps each quote asset's pairs together)",
        numeric=True,
    ),
    Column(
        "spread_bps",
        "Spread (bp)",
        bps_cell,
        "Spread in basis points of the mid (1 bp = 0.01 %)",
        numeric=True,
    ),
    Column(
        "age",
        "Age",
        age_cell,
        "Time since this pair's last update; the row greys out when it is stale",
        numeric=True,
    ),
)
COLUMN_COUNT = len(COLUMNS)
_PAIR, _BID, _ASK, _MID, _AGE = 0, 1, 3, 5, COLUMN_COUNT - 1
#: Column of each entry of ``BookRow.moves``.
_MOVED = (_BID, _ASK, _MID)


class TopOfBookModel(KeyedTableModel[BookRow]):
    """The watchlist's rows, in the order shown: watchlist order, or sorted by one column.

    Why it keeps its own order instead of a ``QSortFilterProxyModel``: a proxy doubles the
    Python calls of every painted cell (index mapping, ``data`` through the proxy) and its
    re-sort compares through a Python ``lessThan``; here a sort is one ``sorted`` over raw
    keys and a layout change (the view keeps selection and current row), done only when a
    sort key changed and the owner asks (``resort``), never on a tick.

    Why rows out of view are lazy: a tick for a row in view updates its record, formats its
    changed cells and signals them; a tick for a row out of view (``set_visible``) is only
    kept (``_pending``) and applied when the row is read (``_materialise``), then formatted
    when painted. At 1,000 rows with ~40 in view that took a tick from ~7 µs to ~1 µs.
    """

    #: A frame applied staged ticks to rows in view (a view may fit its columns).
    flushed = Signal()
    #: The rows were re-sorted by a frame (a view may put its highlight back in view).
    resorted = Signal()

    colour_roles = (Qt.ItemDataRole.ForegroundRole, Qt.ItemDataRole.BackgroundRole)
    move_rows = True  # a reordered watchlist keeps the data, flashes and selection of its pairs

    def __init__(
        self,
        precision: Precision,
        parent: QObject | None = None,
        *,
        palette: TradePalette | None = None,
        clock: Clock = time.monotonic,
        stale_after: float = 1.5,
        frames: FrameClock | None = None,
    ) -> None:
        """``palette``: None (the default) follows the theme; a palette given here stays.
        ``frames``: the frame clock that steps fades and ages (the application's by default).
        """
        super().__init__(COLUMNS, precision, parent, palette=palette)
        self._clock = clock
        self._stale_after = stale_after
        self._selected: str | None = None
        #: Pair -> column -> clock time its fade started (pairs with a fade running only).
        self._flashes: dict[str, dict[int, float]] = {}
        #: Pair -> column -> the fade step last signalled (0 at the change).
        self._steps: dict[str, dict[int, int]] = {}
        #: Model-clock time of the next fade step (inf: no fade running).
        self._flash_due = math.inf
        self._flash_mode = flash_mode()
        #: (a rise, fade step) -> the fade's colour in the palette and mode in force.
        self._fades: dict[tuple[bool, int], QColor | None] = {}
        self._swatches = self._side_swatches()
        self._bold = QFont()
        self._bold.setBold(True)
        #: Each column's font in a row (plain, traded) and the number font they were made of.
        self._fonts: tuple[tuple[QFont | None, ...], tuple[QFont | None, ...]] = ((), ())
        self._fonts_for: QFont | None = None
        #: Each column's colour in a stale row.
        self._stale_row: tuple[QColor | None, ...] = (None,)
        self._watchlist: list[str] = []
        self._sort_column = -1
        self._sort_order = Qt.SortOrder.AscendingOrder
        self._sort_dirty = False
        #: Rows in view (first, last); None: every row.
        self._visible: tuple[int, int] | None = None
        #: Pairs whose cells are older than their record (formatted when next read).
        self._unformatted: set[str] = set()
        #: Pair -> (top of book, clock time it came) of the newest tick of a row out of view,
        #: not applied to its record yet (applied when anything reads the row).
        self._pending: dict[str, tuple[TopOfBook, float]] = {}
        #: Columns the view hides (not formatted on a tick) and each column's cell function
        #: (None for a hidden one).
        self._hidden: frozenset[int] = frozenset()
        self._makers: tuple[Callable[[BookRow, Precision], Cell] | None, ...] = ()
        #: (a, b): shown columns with only hidden ones between them.
        self._joins: frozenset[tuple[int, int]] = frozenset()
        #: Per column, the longest display text formatted so far (characters).
        self._widest = [0] * COLUMN_COUNT
        self._longest = [""] * COLUMN_COUNT  # the text behind each ``_widest``
        self._frames = frames if frames is not None else shared_frame_clock()
        self._age_due = math.inf
        #: Frame-clock time of the last frame that applied staged ticks, and of the last sort.
        self._flushed_at = -math.inf
        self._sorted_at = -math.inf
        #: Frame-clock time a re-sort is asked for (inf: none).
        self._resort_due = math.inf
        self._frames.listen(self._on_frame)
        flash_mode_changed.connect(self.set_flash_mode)

    # -- what the panel drives ----------------------------------------------------------------

    @property
    def pairs(self) -> list[str]:
        """The pair of each row, in the order shown (watchlist order unless sorted)."""
        return [quote.pair for quote in self._records]

    def pair_at(self, row: int) -> str:
        return self._records[row].pair

    def row_of(self, pair: str) -> int | None:
        return self.position(pair)

    @property
    def stale_after(self) -> float:
        return self._stale_after

    @stale_after.setter
    def stale_after(self, seconds: float) -> None:
        if seconds != self._stale_after:
            self._stale_after = seconds
            self.refresh_ages()

    def set_visible(self, rows: tuple[int, int] | None) -> None:
        """The rows in view (first, last), None for all: only they are formatted and
        signalled on a tick. Rows that come into view with a tick waiting take it (and are
        repainted) now."""
        if rows == self._visible:
            return
        self._visible = rows
        self._bring_up_visible()

    def _bring_up_visible(self) -> None:
        """Apply (and signal) the waiting ticks of the rows in view."""
        self.flush_staged()

    def set_pairs(self, pairs: Sequence[str]) -> None:
        """Show ``pairs`` (in this order, or sorted): rows removed, moved and inserted, never a
        reset, so the data, flashes and selection of the pairs that stay are kept."""
        self._watchlist = list(dict.fromkeys(pairs))
        records = {
            pair: self._records[row]
            if (row := self.position(pair)) is not None
            else new_quote(pair)
            for pair in self._watchlist
        }
        self.apply([(pair, records[pair]) for pair in self._target_order(records)])
        for gone in set(self._flashes) - set(self._index):
            del self._flashes[gone]
            self._steps.pop(gone, None)
        self._unformatted &= set(self._index)
        for gone in set(self._pending) - set(self._index):
            del self._pending[gone]
        self._schedule_ages()

    def set_selected(self, pair: str | None) -> None:
        """The session's selected pair is shown in bold."""
        previous, self._selected = self._selected, pair
        if previous == pair:
            return
        for name in (previous, pair):
            row = None if name is None else self._index.get(name)
            if row is not None:
                self.signal_cells(row, (_PAIR,))

    def update(self, books: Mapping[str, TopOfBook]) -> None:
        """New top of book for some pairs; pairs not shown are ignored, pairs whose wire values
        did not change only get younger. A tick for a row out of view is only kept (the
        newest per pair, with the time it came) and applied when anything reads the row
        (``_materialise``): most ticks go to rows nobody sees."""
        now = self._clock()
        index, pending = self._index, self._pending
        first, last = self._visible or (0, len(self._records) - 1)
        for pair, book in books.items():
            row = index.get(pair)
            if row is None:
                continue
            if first <= row <= last:
                self._show(row, pair, book, now)
            else:
                pending[pair] = (book, now)
        if books:
            self._sort_dirty = True
            if self._age_due == math.inf:  # (else the ages are already due)
                self._schedule_ages()

    def stage(self, books: Mapping[str, TopOfBook]) -> None:
        """New top of book, to be shown at the next frame: only kept (the newest per pair,
        with the time it came; pairs not shown are ignored) and a frame asked for. Fresh
        prices do not queue behind another view's frame (a fade step just painted): this
        model's own flushes stay at most one per ``FRAME_MS``, so a tick is on screen within
        a frame."""
        now = self._clock()
        index, pending = self._index, self._pending
        staged = False
        for pair, book in books.items():
            if pair in index:
                pending[pair] = (book, now)
                staged = True
        if staged:
            self._sort_dirty = True
            if self._age_due == math.inf:  # (else the ages are already due)
                self._schedule_ages()
            frames = self._frames
            frames.request(soon=frames.now() - self._flushed_at >= FRAME_MS / 1000)

    def staged(self) -> dict[str, TopOfBook]:
        """The ticks waiting in the buffer, by pair (a copy)."""
        return {pair: tick[0] for pair, tick in self._pending.items()}

    def has_staged(self) -> bool:
        """Ticks are waiting in the buffer."""
        return bool(self._pending)

    def flush_staged(self) -> bool:
        """Apply the waiting ticks of the rows in view (their changed cells formatted and
        signalled); whether any was. Rows out of view keep theirs until read."""
        pending = self._pending
        if not pending:
            return False
        first, last = self._visible or (0, len(self._records) - 1)
        records = self._records
        now = self._clock()
        shown = False
        for row in range(max(0, first), min(last, len(records) - 1) + 1):
            pair = records[row].pair
            if pair in pending:
                self._apply_in_view(row, pair, now)
                shown = True
        if shown:
            self._flushed_at = self._frames.now()
            self.flushed.emit()
        return shown

    def _apply_in_view(self, row: int, pair: str, now: float) -> None:
        """The waiting tick of ``row``, in view: a fresh one (within a fade step) as it comes,
        only its changed cells signalled; an older one (the row was out of view) as of when
        it came (``_materialise``: its fade's step, its staleness), the whole row signalled."""
        book, received = self._pending[pair]
        if now - received < FLASH_SECONDS / FADE_STEPS:
            del self._pending[pair]
            self._show(row, pair, book, now, received)
        else:
            self._materialise(row)
            self.signal_cells(row, range(COLUMN_COUNT))

    def _show(
        self, row: int, pair: str, book: TopOfBook, now: float, received: float | None = None
    ) -> None:
        """A tick for a row in view (received at ``received``, ``now`` by default): its
        record, then its changed cells formatted and signalled."""
        if pair in self._pending:  # it came into view with a tick waiting: that one first
            self._materialise(row)
        old = self._records[row]
        unformatted = self._unformatted
        if not self._take(row, book, now if received is None else received, now, 0):
            if pair not in unformatted and self._cells[row][_AGE].display != _FRESH_AGE:
                self.set_cell(row, _AGE, Cell(_FRESH_AGE, None, None))
                self.signal_cells(row, (_AGE,))
            return
        new = self.cells_of(self._records[row])
        changed: Sequence[int]
        if old.stale or pair in unformatted:
            changed = range(COLUMN_COUNT)
            unformatted.discard(pair)
        else:
            changed = changed_columns(self._cells[row], new)
        self._cells[row] = new
        self._measure(new, changed)
        self.signal_cells(row, changed)

    def _take(self, row: int, book: TopOfBook, received: float, now: float, step: int) -> bool:
        """``book`` (received at ``received``) into ``row``'s record, a fade on each price
        that moved at fade step ``step`` (none from ``FADE_STEPS`` on); whether a value
        changed (else the row only got younger). Cells are not touched."""
        records = self._records
        old = records[row]
        if (
            not old.stale
            and book.bid == old.bid
            and book.ask == old.ask
            and book.bid_size == old.bid_size
            and book.ask_size == old.ask_size
        ):
            records[row] = old._replace(received=received)
            return False
        quote = records[row] = self._quote(old, book, received)
        if (
            old.bid is not None
            and self._flash_mode != "off"
            and step < FADE_STEPS
            and self._flash(old, quote, received, step)
            and self._flash_due == math.inf  # else the running cadence steps it
        ):
            self._flash_due = now + FLASH_SECONDS / FADE_STEPS
            self._frames.request(FLASH_SECONDS / FADE_STEPS)
        return True

    def _materialise(self, row: int) -> None:
        """Apply the tick that waited while ``row`` was out of view, as of when it came: the
        ▲/▼ signs are its net move since the row's record was last brought up to date, a
        fade starts at its receive time (a row scrolled into view within the fade shows the
        rest of it), and the row is stale if that tick is older than ``stale_after`` now. Its
        cells are formatted when read."""
        pair = self._records[row].pair
        book, received = self._pending.pop(pair)
        now = self._clock()
        age = now - received
        self._take(row, book, received, now, int(age / (FLASH_SECONDS / FADE_STEPS)))
        if age > self._stale_after:
            self._records[row] = self._records[row]._replace(stale=True)
        self._unformatted.add(pair)

    def _current(self, row: int) -> BookRow:
        """``row``'s record with any waiting tick applied: a row in view as a frame would
        (its changed cells signalled: the view repaints what was read), one out of view as of
        when the tick came."""
        quote = self._records[row]
        pair = quote.pair
        if pair in self._pending:
            first, last = self._visible or (0, len(self._records) - 1)
            if first <= row <= last:
                self._apply_in_view(row, pair, self._clock())
            else:
                self._materialise(row)
            quote = self._records[row]
        return quote

    def refresh_ages(self) -> None:
        """The age column (one signal per run of rows in view whose age text changed) and the
        stale state (the whole row when it flips). Called each second from the frame clock."""
        self._bring_up_visible()  # rows moved into view by a sort or a new watchlist
        now = self._clock()
        aged: list[int] = []
        first, last = self._visible or (0, len(self._records) - 1)
        unformatted, pending = self._unformatted, self._pending
        for number, quote in enumerate(self._records):
            if quote.pair in pending:  # its waiting tick decides, when the row is read
                continue
            age = None if quote.received is None else now - quote.received
            stale = age is None or age > self._stale_after
            shown = first <= number <= last
            if stale != quote.stale:
                self._records[number] = quote._replace(stale=stale)
                if shown:
                    self.set_cell(number, _AGE, Cell(age_text(age), None, None))
                    self.signal_cells(number, range(COLUMN_COUNT))
                continue
            if quote.pair in unformatted:
                continue
            text = age_text(age)
            if text != self._cells[number][_AGE].display:
                self.set_cell(number, _AGE, Cell(text, None, None))
                if shown:
                    aged.append(number)
        for first_row, last_row in runs(aged):
            self.dataChanged.emit(
                self.createIndex(first_row, _AGE), self.createIndex(last_row, _AGE)
            )

    def expire_flashes(self) -> None:
        """Step the fades: signal the cells in view whose fade moved a step or ended (only
        those), forget the ended ones, and ask the frame clock for the next step (one cadence
        for all fades, so concurrent fades share each repaint)."""
        now = self._clock() + _FLASH_SLACK
        step_length = FLASH_SECONDS / FADE_STEPS
        first, last = self._visible or (0, len(self._records) - 1)
        for pair, flashes in list(self._flashes.items()):
            steps = self._steps.setdefault(pair, {})
            moved_cells = []
            for column, started in list(flashes.items()):
                step = min(FADE_STEPS, int((now - started) / step_length))
                if step >= FADE_STEPS:
                    del flashes[column]
                    steps.pop(column, None)
                    moved_cells.append(column)
                    continue
                if step != steps.get(column, 0):
                    steps[column] = step
                    moved_cells.append(column)
            if not flashes:
                del self._flashes[pair]
                self._steps.pop(pair, None)
            row = self._index[pair]
            if moved_cells and first <= row <= last:
                self.signal_cells(row, sorted(moved_cells))
        # One cadence for every fade (one repaint per step for all rows, as a shared timer
        # would): a fade that began between two steps moves at the next one.
        self._flash_due = self._clock() + step_length if self._flashes else math.inf
        if self._flashes:
            self._frames.request(step_length)

    def set_flash_mode(self, mode: str) -> None:
        """The trader chose how prices fade (off, subtle, full): the running fades repaint in
        it (off clears them)."""
        if mode == self._flash_mode:
            return
        self._flash_mode = mode
        self._fades.clear()
        if mode == "off":
            self._flashes.clear()
            self._steps.clear()
            self._flash_due = math.inf
        if self._records:
            self.dataChanged.emit(
                self.createIndex(0, 0),
                self.createIndex(len(self._records) - 1, COLUMN_COUNT - 1),
                [Qt.ItemDataRole.BackgroundRole],
            )

    def set_palette(self, palette: TradePalette) -> None:
        """A theme switch: the cells' colours (the base class) and the headers' swatches."""
        self._fades.clear()
        super().set_palette(palette)
        self._swatches = self._side_swatches()
        self.headerDataChanged.emit(Qt.Orientation.Horizontal, _BID, _ASK)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = _DISPLAY) -> Any:
        """The Bid and Ask headers carry their side's colour: a swatch (drawn under any style
        sheet) and the foreground (for views without one)."""
        if orientation == Qt.Orientation.Horizontal and section in (_BID, _ASK):
            if role == _DECORATION:
                return self._swatches[section]
            if role == _FOREGROUND:
                return self.side_colour(section)
        return super().headerData(section, orientation, role)

    def side_colour(self, column: int) -> QColor | None:
        """The identity colour of a column: the bid's, the ask's, None for the others."""
        if column == _BID:
            return self._palette.bid
        return self._palette.ask if column == _ASK else None

    def flashing(self, row: int, column: int) -> int:
        """+1 or -1 while the cell fades for a rise or a fall, else 0."""
        quote = self._current(row)
        flashes = self._flashes.get(quote.pair)
        if flashes is None or column not in flashes:
            return 0
        return quote.moves[_MOVED.index(column)]

    def is_stale(self, row: int) -> bool:
        return self._current(row).stale

    # -- sorting --------------------------------------------------------------------------------

    @property
    def sort_column(self) -> int:
        """The sort column, -1 for watchlist order."""
        return self._sort_column

    @property
    def sort_order(self) -> Qt.SortOrder:
        return self._sort_order

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort by ``column`` now (numbers as numbers, pairs without data last when
        ascending); -1 goes back to watchlist order. The view calls this on header clicks."""
        self._sort_column = column if 0 <= column < COLUMN_COUNT else -1
        self._sort_order = order
        self._sort_dirty = True
        self.resort()

    def resort(self) -> None:
        """Sort again if a sort key may have changed since the last sort: one ``sorted`` of
        raw keys and, only when the order changed, one layout change."""
        if not self._sort_dirty:
            return
        self._sort_dirty = False
        self._sorted_at = self._frames.now()
        order: list[Hashable] = list(self._target_order({q.pair: q for q in self._records}))
        if order != self._keys:
            self._move(order)

    def _target_order(self, records: Mapping[str, BookRow]) -> list[str]:
        """``records``' pairs in the order shown: the watchlist's, or sorted (stable: equal
        keys keep watchlist order)."""
        pairs = [pair for pair in self._watchlist if pair in records]
        column = self._sort_column
        if column < 0:
            return pairs
        value, waiting = _SORT_VALUES[column], _WAITING_SORT_VALUES[column]
        descending = self._sort_order == Qt.SortOrder.DescendingOrder
        pending = self._pending

        def key(pair: str) -> Any:
            tick = pending.get(pair)  # a row's waiting tick sorts it, without applying it
            return value(records[pair]) if tick is None or waiting is None else waiting(*tick)

        unit = _SORT_UNITS[column]
        groups: dict[str, list[str]] = {}
        for pair in pairs:
            groups.setdefault("" if unit is None else unit(pair), []).append(pair)
        ordered: list[str] = []
        for name in sorted(groups):  # one asset's rows together, assets by name both ways
            members = groups[name]
            order = order_of([key(pair) for pair in members], descending=descending)
            ordered += [members[position] for position in order]
        return ordered

    def in_sort_order(
        self, built: list[tuple[Hashable, BookRow, Cells]], *, dynamic: bool | None = None
    ) -> list[tuple[Hashable, BookRow, Cells]]:
        """As given: ``set_pairs`` and ``resort`` put the rows in order themselves (sorting by
        a waiting tick's keys)."""
        return built

    # -- reading --------------------------------------------------------------------------------

    def widest(self, column: int) -> int:
        """The longest text (characters) ``column`` has shown: its width grows only when this
        does."""
        return self._widest[column]

    def longest_text(self, column: int) -> str:
        """The longest text ``column`` has shown (what a column is fitted to): kept as rows
        are formatted, so fitting reads no row and applies no waiting tick."""
        return self._longest[column]

    def record(self, row: int) -> BookRow:
        """``row``'s record, with any waiting tick applied (what the row shows when painted)."""
        return self._current(row)

    def cell(self, row: int, column: int) -> Cell:
        if column in self._hidden:
            return self._unshown_cell(row, column)
        self._formatted(row)
        return self._cells[row][column]

    def row_look(self, row: int) -> RowLook:
        """``row``'s look (its cells formatted now if they were not): what the tables' painter
        (``app.ui.widgets.cell_painter.RowPainter``) needs, in one call per row instead of one
        per cell and role. The same answers as ``data``; only the texts and the backgrounds
        of fading cells are made per row, the rest are the same tuples row after row."""
        self._formatted(row)
        quote = self._records[row]
        flashes = self._flashes.get(quote.pair)
        backgrounds: Sequence[QColor | None] = _NO_BACKGROUNDS
        if flashes:
            backgrounds = list(_NO_BACKGROUNDS)
            for column in flashes:
                backgrounds[column] = self._fade(quote, column)
        fonts = self._row_fonts(quote.pair == self._selected)
        colours = self._stale_colours() if quote.stale else _NO_COLOURS
        texts = [cell.display for cell in self._cells[row]]
        return RowLook(texts, self.alignments, fonts, colours, backgrounds)

    def _row_fonts(self, bold: bool) -> tuple[QFont | None, ...]:
        """Each column's font: the view's for the pair (bold for the traded pair), the number
        font for the others (the same two tuples until the number font changes)."""
        if self._fonts_for is not self.number_font:
            self._fonts_for = self.number_font
            numbers = (self.number_font,) * (COLUMN_COUNT - 1)
            self._fonts = (None, *numbers), (self._bold, *numbers)
        return self._fonts[bold]

    def _stale_colours(self) -> tuple[QColor | None, ...]:
        """Every column's colour in a stale row (the palette's grey; one tuple per palette)."""
        grey = self._palette.stale
        if self._stale_row[0] is not grey:
            self._stale_row = (grey,) * COLUMN_COUNT
        return self._stale_row

    #: Each column's text alignment.
    alignments: tuple[int | None, ...] = tuple(
        int(ALIGN_TEXT if c.key == "pair" else ALIGN_NUMBER) for c in COLUMNS
    )

    def column_texts(self, column: int) -> list[str]:
        if column in self._hidden:
            return [self._unshown_cell(row, column).display for row in range(len(self._records))]
        for row in range(len(self._records)):
            self._formatted(row)
        return super().column_texts(column)

    # -- hidden columns -------------------------------------------------------------------------

    def set_hidden_columns(self, columns: Collection[int]) -> None:
        """The columns the view hides: a tick does not format their cells (read through
        ``data`` or ``cell``, they are formatted on the spot); a column shown again is
        formatted as its rows are painted."""
        hidden = frozenset(columns)
        if hidden == self._hidden:
            return
        shown = self._hidden - hidden
        self._hidden = hidden
        self._makers = tuple(
            None if column in hidden else function
            for column, function in enumerate(self._cell_functions)
        )
        visible = [column for column in range(COLUMN_COUNT) if column not in hidden]
        self._joins = frozenset(
            (left, right) for left, right in itertools.pairwise(visible) if right > left + 1
        )
        if shown and self._records:
            self._unformatted.update(quote.pair for quote in self._records)
            self.dataChanged.emit(
                self.createIndex(0, min(shown)),
                self.createIndex(len(self._records) - 1, max(shown)),
            )

    def signal_cells(self, row: int, columns: Sequence[int]) -> None:
        """One ``dataChanged`` per run of adjacent ``columns`` (ascending) of ``row``, a run
        going on over hidden columns (they take no room, so nothing more is repainted, and a
        tick's bid, ask and spread are one signal, not three)."""
        if not columns:
            return
        joins = self._joins
        first = last = columns[0]
        for column in columns[1:]:
            if column != last + 1 and (last, column) not in joins:
                self.dataChanged.emit(self.createIndex(row, first), self.createIndex(row, last))
                first = column
            last = column
        self.dataChanged.emit(self.createIndex(row, first), self.createIndex(row, last))

    def cells_of(self, record: BookRow) -> Cells:
        """Every shown column's cell of ``record`` (a blank for each hidden one)."""
        if not self._hidden:
            return super().cells_of(record)
        precision = self._precision
        return tuple(
            [_UNSHOWN if make is None else make(record, precision) for make in self._makers]
        )

    def _unshown_cell(self, row: int, column: int) -> Cell:
        """A hidden column's cell, formatted now (not kept)."""
        quote = self._current(row)
        if column == _AGE and quote.received is not None:
            return Cell(age_text(self._clock() - quote.received), None, None)
        return self._cell_functions[column](quote, self._precision)

    # -- Qt model interface -------------------------------------------------------------------

    def data(self, index: Index, role: int = _DISPLAY) -> Any:
        """Every role answered here in one call (this runs for each visible cell and role on
        every paint)."""
        number = index.row()
        if number < 0:
            return None
        column = index.column()
        quote = self._current(number)
        if role == _DISPLAY:
            return self.cell(number, column).display
        if role == SORT_ROLE:
            return self._age_key(quote) if column == _AGE else _SORT_VALUES[column](quote)
        if role == _FONT:
            if column != _PAIR:
                return self.number_font
            return self._bold if quote.pair == self._selected else None
        if role == _ALIGNMENT:
            return ALIGN_TEXT if column == _PAIR else ALIGN_NUMBER
        if role == _FOREGROUND:
            return self._foreground(quote, column)
        if role == _BACKGROUND:
            return None if self._flash_of(quote, column) is None else self._fade(quote, column)
        if role == _TOOLTIP and quote.stale:
            if quote.received is None:
                return f"{quote.pair}: no data yet"
            age = self.cell(number, _AGE).display
            return f"{quote.pair}: no fresh data (last update {age} ago)"
        return None

    def _fade(self, quote: BookRow, column: int) -> QColor | None:
        """A fading cell's background: the move's tint at the fade's step (made once per
        palette, mode, direction and step: every fading cell asks on every paint)."""
        up = quote.moves[_MOVED.index(column)] > 0
        step = self._steps.get(quote.pair, {}).get(column, 0)
        key = (up, step)
        if key not in self._fades:
            base = self._palette.up_flash if up else self._palette.down_flash
            self._fades[key] = flash_colour(base, self._flash_mode, 1 - step / FADE_STEPS)
        return self._fades[key]

    def _foreground(self, quote: BookRow, column: int) -> QColor | None:
        """Grey when stale, else the theme's neutral text: a number's colour never says its
        side or its move (the header and the ▲/▼ sign do)."""
        return self._palette.stale if quote.stale else None

    def _side_swatches(self) -> dict[int, QIcon]:
        return {_BID: swatch(self._palette.bid), _ASK: swatch(self._palette.ask)}

    # -- internals ----------------------------------------------------------------------------

    def _formatted(self, row: int) -> None:
        """Format ``row``'s cells if they are older than its record (it was out of view)."""
        quote = self._current(row)
        if quote.pair not in self._unformatted:
            return
        self._unformatted.discard(quote.pair)
        cells = self.cells_of(quote)
        if quote.received is not None:
            age = Cell(age_text(self._clock() - quote.received), None, None)
            cells = (*cells[:_AGE], age, *cells[_AGE + 1 :])
        self._cells[row] = cells
        self._measure(cells, range(COLUMN_COUNT))

    def _measure(self, cells: Cells, columns: Sequence[int]) -> None:
        """Keep the longest text of each column up to date."""
        widest, longest = self._widest, self._longest
        for column in columns:
            text = cells[column].display
            if len(text) > widest[column]:
                widest[column] = len(text)
                longest[column] = text

    def _on_frame(self, now: float) -> None:
        """The frame clock's tick: the staged ticks of the rows in view, a re-sort when due,
        a fade step when one is due, the ages once a second."""
        if self._pending:
            self.flush_staged()
        if self._sort_dirty and self._sort_column >= 0:
            self._resort_when_due(now)
        if self._flashes and self._clock() + _FLASH_SLACK >= self._flash_due:
            self.expire_flashes()
        if now >= self._age_due:
            self._age_due = math.inf
            self.refresh_ages()
            self._schedule_ages()

    def _resort_when_due(self, now: float) -> None:
        """Re-sort at most once every ``RESORT_MS`` (one frame asked for the moment it is
        due, not one per tick)."""
        due = self._sorted_at + RESORT_MS / 1000
        if now >= due:
            self._resort_due = math.inf
            self.resort()
            self.flush_staged()  # rows the sort brought into view, in this frame's paint
            self.resorted.emit()
        elif due != self._resort_due:
            self._resort_due = due
            self._frames.request(due - now)

    def _schedule_ages(self) -> None:
        """One frame a second while any row has data (its age text moves)."""
        if self._age_due < math.inf or not self._records:
            return
        if not self._pending and all(quote.received is None for quote in self._records):
            return
        self._age_due = self._frames.now() + AGE_TICK_MS / 1000
        self._frames.request(AGE_TICK_MS / 1000)

    def _quote(self, old: BookRow, book: TopOfBook, now: float) -> BookRow:
        """``old`` with ``book``: each flashing price keeps its last move unless it moved."""
        bid, ask, spread = book.bid, book.ask, book.spread
        mid = (bid + ask) / 2  # TopOfBook.mid, computed once
        moves = old.moves
        if old.bid is not None:
            moves = (
                moved(bid, old.bid, moves[0]),
                moved(ask, old.ask, moves[1]),
                moved(mid, old.mid, moves[2]),
            )
        return BookRow(
            old.pair,
            old.base,
            bid,
            book.bid_size,
            ask,
            book.ask_size,
            mid,
            spread,
            MONEY_CONTEXT.divide(MONEY_CONTEXT.multiply(spread, _TEN_THOUSAND), mid)
            if mid > 0
            else None,
            moves,
            self._precision.price(old.pair),
            self._precision.asset(old.base),
            now,
            False,
        )

    def _flash(self, old: BookRow, new: BookRow, now: float, step: int) -> bool:
        """Start a fade (at ``now``, shown at step ``step``) on each price that moved; whether
        any did."""
        moved_columns = [
            column
            for column, value, before in (
                (_BID, new.bid, old.bid),
                (_ASK, new.ask, old.ask),
                (_MID, new.mid, old.mid),
            )
            if value != before
        ]
        if not moved_columns:
            return False
        # the pair's two dicts, found or made once (not an empty dict made per call to throw away)
        flashes = self._flashes.get(new.pair)
        if flashes is None:
            flashes = self._flashes[new.pair] = {}
        steps = self._steps.get(new.pair)
        if steps is None:
            steps = self._steps[new.pair] = {}
        for column in moved_columns:
            flashes[column] = now
            steps[column] = step
        return True

    def _flash_of(self, quote: BookRow, column: int) -> float | None:
        flashes = self._flashes.get(quote.pair)
        return None if flashes is None else flashes.get(column)

    def _age_key(self, quote: BookRow) -> Decimal | None:
        if quote.received is None:
            return None
        return Decimal(round((self._clock() - quote.received) * 1000)).scaleb(-3)


def _older_first(quote: BookRow) -> float | None:
    """The age column's sort key without reading the clock: a later update is younger."""
    return None if quote.received is None else -quote.received


#: Each column's raw sort key (Decimal for numbers, the name for the pair).
_SORT_VALUES: tuple[Callable[[BookRow], Any], ...] = (
    lambda q: q.pair.casefold(),
    lambda q: q.bid,
    lambda q: q.bid_size,
    lambda q: q.ask,
    lambda q: q.ask_size,
    lambda q: q.mid,
    lambda q: q.spread,
    lambda q: q.bps,
    _older_first,
)


def quote_asset(pair: str) -> str:
    return pair.rpartition("/")[2]


def base_asset(pair: str) -> str:
    return pair.partition("/")[0]


#: The asset each column's values are in, per pair (None: the same for every row). Numbers in
#: different assets do not compare — 50 USD is not "more" than 0.0001 BTC — so a sort by such a
#: column keeps each asset's rows together, in order within it.
_SORT_UNITS: tuple[Callable[[str], str] | None, ...] = (
    None,
    quote_asset,
    base_asset,
    quote_asset,
    base_asset,
    quote_asset,
    quote_asset,
    None,
    None,
)
#: Each column's sort key from a waiting tick (top of book, receive time), the same as
#: ``_SORT_VALUES`` gives once it is applied; None where the record's own key stays (the pair).
_WAITING_SORT_VALUES: tuple[Callable[[TopOfBook, float], Any] | None, ...] = (
    None,
    lambda b, _: b.bid,
    lambda b, _: b.bid_size,
    lambda b, _: b.ask,
    lambda b, _: b.ask_size,
    lambda b, _: (b.bid + b.ask) / 2,
    lambda b, _: b.spread,
    lambda b, _: spread_bps(b),
    lambda _, received: -received,
)
_FRESH_AGE = age_text(0.0)
#: A row's colours and backgrounds when it has none of its own.
_NO_COLOURS: tuple[QColor | None, ...] = (None,) * COLUMN_COUNT
_NO_BACKGROUNDS: tuple[QColor | None, ...] = (None,) * COLUMN_COUNT
#: The cell kept for a hidden column.
_UNSHOWN = Cell("", None, None)


def new_quote(pair: str) -> BookRow:
    return BookRow(pair, pair.partition("/")[0])
