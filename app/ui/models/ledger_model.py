"""The ledger table: one row per entry, newest first, the legs of one trade adjacent and
linked (a ┌ … └ bracket in the Leg column and a shared tint), with a running balance when the
query shows one asset.

Sorting keeps a trade's legs together: ``LedgerSortProxy`` sorts groups by the value of their
first leg in the sort column, then keeps the legs in their own order under it. It sorts key
lists, not by comparisons in Python (``app.ui.models.record_view``): at 100,000 rows it runs on
the records worker thread, and ``LedgerModel.show_snapshot`` takes a big page there too.

Colours follow the theme (``app.ui.palette``): negative amounts in the error colour, the legs'
tint the theme's bar blue made faint, so every text colour still reads on it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from decimal import Decimal
from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QColor

from app.domain.display import DASH, Precision
from app.services.ledger_browser import LedgerRow, LedgerSnapshot
from app.services.slices import Steps
from app.ui.column_widths import Fit
from app.ui.csv_export import export_value
from app.ui.models.columns import Column
from app.ui.models.record_cells import (
    Cell,
    amount_cell,
    text_cell,
    time_cell,
)
from app.ui.models.record_view import (
    BACKGROUND_ROLE,
    BLOCK,
    RecordTableModel,
    RecordView,
    blocks,
    stable_order,
)
from app.ui.palette import TradePalette

#: Opacity (0–255) of the tint shared by the legs of one trade.
LINKED_ALPHA = 40


def linked_tint(palette: TradePalette) -> QColor:
    """The background of a trade's legs: the theme's bar blue, faint."""
    colour = QColor(palette.bar)
    colour.setAlpha(LINKED_ALPHA)
    return colour


def leg_text(row: LedgerRow) -> str:
    leg = row.entry.sub_event_type
    if not row.linked:
        return leg
    if row.position == 0:
        mark = "┌"
    elif row.position == row.size - 1:
        mark = "└"
    else:
        mark = "├"
    return f"{mark} {leg}" if leg else mark


def leg_cell(row: LedgerRow, _: Precision) -> Cell:
    leg = text_cell(row.entry.sub_event_type)
    return Cell(leg_text(row), leg.sort, leg.export)


def ordering_cell(row: LedgerRow, _: Precision) -> Cell:
    ordering = row.entry.ordering
    return Cell(str(ordering), Decimal(ordering), str(ordering))


def leg_tip(row: LedgerRow, _: Precision) -> str | None:
    """Which leg of which transaction (linked legs only)."""
    if not row.linked:
        return None
    return f"Leg {row.position + 1} of {row.size} of transaction {row.entry.transaction_id}"


def time_tip(row: LedgerRow, _: Precision) -> str:
    return f"{export_value(row.entry.event_time)} (UTC)"


def trade_cell(row: LedgerRow, _: Precision) -> Cell:
    """``Buy BTC/USD`` on both legs of a trade."""
    return text_cell("" if row.trade is None else str(row.trade.pair_side))


def trade_price_cell(row: LedgerRow, precision: Precision) -> Cell:
    """The trade's average fill price from its legs, as every screen shows a fill's price
    (``app.domain.fill_price``): sorted and exported as shown."""
    trade = row.trade
    if trade is None:
        return Cell(DASH, None, "")
    fill = trade.fill_price
    shown = fill.rounded(precision)
    return Cell(fill.text(precision), shown, export_value(shown))


def trade_tip(row: LedgerRow, precision: Precision) -> str | None:
    """The trade in words: ``Bought 0.11 BTC at 90,893.91 USD (spent 10,000.00 USD)``."""
    return None if row.trade is None else row.trade.sentence(precision)


def amount_colour(row: LedgerRow, palette: TradePalette) -> QColor | None:
    return palette.error if row.entry.amount < 0 else None


COLUMNS: tuple[Column[LedgerRow], ...] = (
    Column(
        "time",
        "Time",
        lambda r, _: time_cell(r.entry.event_time),
        "Event time (local; exported as UTC)",
        tip=time_tip,
        fit=Fit.WHOLE,
    ),
    Column(
        "type",
        "Type",
        lambda r, _: text_cell(r.entry.event_type),
        "eventType as the service sent it",
        tip=leg_tip,
    ),
    Column(
        "leg",
        "Leg",
        leg_cell,
        "subEventType: the source (paid) or destination (received) leg of a trade",
        tip=leg_tip,
    ),
    Column("asset", "Asset", lambda r, _: text_cell(r.entry.asset), tip=leg_tip),
    Column(
        "amount",
        "Amount",
        lambda r, p: amount_cell(r.entry.amount, r.entry.asset, p, signed=True),
        "Change of the balance: negative when paid out",
        numeric=True,
        colour=amount_colour,
        tip=leg_tip,
    ),
    Column(
        "balance",
        "Balance",
        lambda r, p: amount_cell(r.balance, r.entry.asset, p),
        "Running balance after the entry (filter on one asset to see it)",
        numeric=True,
        tip=leg_tip,
    ),
    Column(
        "trade",
        "Trade",
        trade_cell,
        "What a trade's two legs did together: Buy or Sell of the pair's base",
        tip=trade_tip,
    ),
    Column(
        "price",
        "Avg fill price",
        trade_price_cell,
        "A trade's average fill price from its legs (the quote over the base), in QUOTE per "
        "BASE at the pair's price increment",
        numeric=True,
        tip=trade_tip,
    ),
    Column(
        "transaction_id",
        "Transaction id",
        lambda r, _: text_cell(r.entry.transaction_id),
        tip=leg_tip,
        fit=Fit.YIELD,
    ),
    Column(
        "ordering",
        "Ordering",
        ordering_cell,
        "The ledger's global sequence number",
        numeric=True,
        tip=leg_tip,
    ),
)


def row_key(row: LedgerRow) -> Hashable:
    entry = row.entry
    return (entry.ordering, entry.transaction_id, entry.asset, entry.sub_event_type)


class LedgerModel(RecordTableModel[LedgerRow]):
    colour_roles = (Qt.ItemDataRole.ForegroundRole, Qt.ItemDataRole.BackgroundRole)

    def __init__(self, precision: Precision, parent: QObject | None = None) -> None:
        super().__init__(COLUMNS, precision, parent)
        self._tint = linked_tint(self.palette)

    @property
    def tint(self) -> QColor:
        """The background of a trade's legs in the palette in force."""
        return self._tint

    def set_palette(self, palette: TradePalette) -> None:
        self._tint = linked_tint(palette)
        super().set_palette(palette)

    def set_snapshot(self, snapshot: LedgerSnapshot) -> None:
        self.apply([(row_key(row), row) for row in snapshot.rows], reset=snapshot.reset)

    async def show_snapshot(
        self, snapshot: LedgerSnapshot, wanted: Callable[[], bool] = lambda: True
    ) -> bool:
        """``set_snapshot`` that makes a big page's cells on the worker thread; False when
        ``wanted()`` turned false meanwhile (nothing changed)."""
        return await self.apply_async(snapshot.rows, row_key, reset=snapshot.reset, wanted=wanted)

    def reuse_cells(self, old: LedgerRow, new: LedgerRow) -> bool:
        """The browser regroups every page: a row whose entry (the same object), place in its
        transaction, balance and trade are unchanged keeps its cells (its group number, which
        the cells do not show, may have moved)."""
        return old is new or (
            old.entry is new.entry
            and old.position == new.position
            and old.size == new.size
            and old.balance == new.balance
            and old.trade == new.trade
        )

    def ledger_row(self, row: int) -> LedgerRow:
        return self.record(row)

    def extra_data(self, row: int, column: int, role: int) -> Any:
        return self.row_background(row) if role == BACKGROUND_ROLE else None

    def row_background(self, row: int) -> QColor | None:
        return self._tint if self.ledger_row(row).linked else None


class LedgerSortProxy(RecordView):
    """Sorts transactions by their first leg's value; a transaction's legs stay together and
    in their own order whichever way the column is sorted. Ties between transactions keep the
    ledger's order ascending and the reverse descending (as the comparison sort did)."""

    def order_rows(
        self, rows: list[int], keys: list[Any], records: Sequence[Any], descending: bool
    ) -> Steps[list[int]]:
        first: dict[int, int] = {}  # group -> its first row in the model (its first leg)
        for number, record in enumerate(records):
            first.setdefault(record.group, number)
            if number % BLOCK == 0:
                yield
        legs: dict[int, list[int]] = {}
        for number, row in enumerate(rows):
            legs.setdefault(records[row].group, []).append(row)
            if number % BLOCK == 0:
                yield
        groups = sorted(legs)
        yield
        group_keys: dict[int, Any] = {}
        present: list[int] = []
        missing: list[int] = []
        for block in blocks(groups):
            for group in block:
                value = group_keys[group] = keys[first[group]]
                (missing if value is None else present).append(group)
            yield
        ordered = (yield from stable_order(present, group_keys)) + missing  # "—" last
        if descending:
            ordered.reverse()
        result: list[int] = []
        for number, group in enumerate(ordered):
            members = legs[group]
            if len(members) > 1:
                members = sorted(members, key=lambda row: records[row].position)
            result.extend(members)
            if number % BLOCK == 0:
                yield
        return result
