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
from enum import IntEnum
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QObject, Qt
from PySide6.QtGui import QColor

from app.services.ledger_view import LedgerRow, LedgerSnapshot
from app.ui.formatting import Precision
from app.ui.models.record_cells import (
    Cell,
    Index,
    RecordSortProxy,
    RecordTableModel,
    SortKey,
    number_cell,
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


class Column(IntEnum):
    TIME = 0
    TYPE = 1
    LEG = 2
    ASSET = 3
    AMOUNT = 4
    BALANCE = 5
    TRANSACTION_ID = 6
    ORDERING = 7


COLUMNS = tuple(Column)
HEADERS = {
    Column.TIME: "Time",
    Column.TYPE: "Type",
    Column.LEG: "Leg",
    Column.ASSET: "Asset",
    Column.AMOUNT: "Amount",
    Column.BALANCE: "Balance",
    Column.TRANSACTION_ID: "Transaction id",
    Column.ORDERING: "Ordering",
}
TOOLTIPS = {
    Column.TIME: "Event time (local; exported as UTC)",
    Column.TYPE: "eventType as the service sent it",
    Column.LEG: "subEventType: the source (paid) or destination (received) leg of a trade",
    Column.AMOUNT: "Change of the balance: negative when paid out",
    Column.BALANCE: "Running balance after the entry (filter on one asset to see it)",
    Column.ORDERING: "The ledger's global sequence number",
}
NUMERIC = frozenset(int(c) for c in (Column.AMOUNT, Column.BALANCE, Column.ORDERING))


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


def ledger_cells(row: LedgerRow, precision: Precision) -> tuple[Cell, ...]:
    entry = row.entry
    places = precision.asset(entry.asset)
    leg = text_cell(entry.sub_event_type)
    cells = {
        Column.TIME: time_cell(entry.event_time),
        Column.TYPE: text_cell(entry.event_type),
        Column.LEG: Cell(leg_text(row), leg.sort, leg.export),
        Column.ASSET: text_cell(entry.asset),
        Column.AMOUNT: number_cell(entry.amount, places, signed=True),
        Column.BALANCE: number_cell(row.balance, places),
        Column.TRANSACTION_ID: text_cell(entry.transaction_id),
        Column.ORDERING: Cell(str(entry.ordering), Decimal(entry.ordering), str(entry.ordering)),
    }
    return tuple(cells[column] for column in COLUMNS)


def row_key(row: LedgerRow) -> Hashable:
    entry = row.entry
    return (entry.ordering, entry.transaction_id, entry.asset, entry.sub_event_type)


class LedgerModel(RecordTableModel):
    colour_roles = (Qt.ItemDataRole.ForegroundRole, Qt.ItemDataRole.BackgroundRole)

    def __init__(self, precision: Precision, parent: QObject | None = None) -> None:
        super().__init__(
            [HEADERS[c] for c in Column], {int(k): v for k, v in TOOLTIPS.items()}, NUMERIC, parent
        )
        self._precision = precision
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
        rows = [(row_key(row), row, ledger_cells(row, self._precision)) for row in snapshot.rows]
        self.apply(rows, reset=snapshot.reset)
        self._first_of_group = {}
        self._group_keys = {}
        for index in range(self.rowCount()):
            self._first_of_group.setdefault(self.ledger_row(index).group, index)

    def ledger_row(self, row: int) -> LedgerRow:
        record: LedgerRow = self.record(row)
        return record

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
        record = self.ledger_row(row)
        if role == Qt.ItemDataRole.BackgroundRole:
            return self._tint if record.linked else None
        if role == Qt.ItemDataRole.ForegroundRole and column == Column.AMOUNT:
            return self.palette.error if record.entry.amount < 0 else None
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == Column.TIME:
                return f"{self.cell(row, column).export} (UTC)"
            if record.linked:
                return (
                    f"Leg {record.position + 1} of {record.size} of transaction "
                    f"{record.entry.transaction_id}"
                )
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
