"""The ledger table: one row per entry, newest first, the legs of one trade adjacent and
linked (a ┌ … └ bracket in the Leg column and a shared tint), with a running balance when the
query shows one asset.

Sorting keeps a trade's legs together: ``LedgerSortProxy`` sorts groups by the value of their
first leg in the sort column, then keeps the legs in their own order under it.

Colours follow the theme (``app.ui.palette``): negative amounts in the error colour, the legs'
tint the theme's bar blue made faint, so every text colour still reads on it.
"""

from __future__ import annotations

from collections.abc import Hashable
from decimal import Decimal
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QObject, Qt
from PySide6.QtGui import QColor

from app.domain.display import Precision
from app.services.ledger_browser import LedgerRow, LedgerSnapshot
from app.ui.csv_export import export_value
from app.ui.models.columns import Column
from app.ui.models.keyed_table import KeyedTableModel
from app.ui.models.record_cells import (
    Cell,
    Index,
    RecordSortProxy,
    SortKey,
    amount_cell,
    pair_price_cell,
    text_cell,
    time_cell,
)
from app.ui.models.sorting import sort_less
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
    """The trade's price from its legs, QUOTE per BASE at the pair's price increment."""
    trade = row.trade
    if trade is None:
        return pair_price_cell(None, "", precision)
    return pair_price_cell(trade.price, str(trade.pair_side.pair), precision)


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
        "Price",
        trade_price_cell,
        "A trade's price from its legs, in QUOTE per BASE at the pair's price increment",
        numeric=True,
        tip=trade_tip,
    ),
    Column(
        "transaction_id",
        "Transaction id",
        lambda r, _: text_cell(r.entry.transaction_id),
        tip=leg_tip,
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


class LedgerModel(KeyedTableModel[LedgerRow]):
    colour_roles = (Qt.ItemDataRole.ForegroundRole, Qt.ItemDataRole.BackgroundRole)

    def __init__(self, precision: Precision, parent: QObject | None = None) -> None:
        super().__init__(COLUMNS, precision, parent)
        self._first_of_group: dict[int, int] = {}
        self._group_keys: dict[int, list[SortKey]] = {}
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
        self._first_of_group = {}
        self._group_keys = {}
        for index in range(self.rowCount()):
            self._first_of_group.setdefault(self.ledger_row(index).group, index)

    def ledger_row(self, row: int) -> LedgerRow:
        return self.record(row)

    def group_key(self, row: int, column: int) -> SortKey:
        """The sort key of ``row``'s group: its first leg's value in ``column``."""
        keys = self._group_keys.get(column)
        if keys is None:  # once per column and snapshot: sorting asks for it N log N times
            first = self._first_of_group
            keys = [
                self.cell(first.get(self.ledger_row(r).group, r), column).sort
                for r in range(self.rowCount())
            ]
            self._group_keys[column] = keys
        return keys[row]

    def extra_data(self, row: int, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.BackgroundRole:
            return self._tint if self.ledger_row(row).linked else None
        return None


class LedgerSortProxy(RecordSortProxy):
    """Sorts transactions by their first leg's value; a transaction's legs stay together and
    in their own order whichever way the column is sorted."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._ledger: LedgerModel | None = None

    def setSourceModel(self, model: QAbstractItemModel) -> None:
        self._ledger = model if isinstance(model, LedgerModel) else None
        super().setSourceModel(model)

    def lessThan(self, source_left: Index, source_right: Index) -> bool:
        model = self._ledger
        assert model is not None, "LedgerSortProxy sorts a LedgerModel"
        column = source_left.column()
        left, right = source_left.row(), source_right.row()
        a, b = model.ledger_row(left), model.ledger_row(right)
        if a.group != b.group:
            key_a, key_b = model.group_key(left, column), model.group_key(right, column)
            if sort_less(key_a, key_b):
                return True
            if sort_less(key_b, key_a):
                return False
            return a.group < b.group
        # Qt sorts descending by asking lessThan(right, left): flip so the legs keep their order.
        if self.sortOrder() == Qt.SortOrder.DescendingOrder:
            return a.position > b.position
        return a.position < b.position
