"""The deposits table: one row per deposit (or withdrawal) record, in the server's order.

Amounts are Decimal, shown at the asset's precision or more (never rounded); the exact amount
(every digit the server sent) is under ``EXPORT_ROLE`` for export and copy. Times are shown in
local time, with the UTC wire form in the tooltip, and sort by their instant (``SORT_ROLE``
gives a Decimal of microseconds since the epoch, so the generic Decimal proxy sorts them as
numbers). A new page with the same records only signals the rows that changed (a pending deposit
completing); a different set of records resets the model.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from enum import IntEnum
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase

from app.domain import format_timestamp
from app.domain.money import format_trimmed
from app.domain.records import DepositRecord, TransferStep
from app.ui.csv_export import EXPORT_ROLE
from app.ui.formatting import DASH, Precision, format_number
from app.ui.models.sorting import SORT_ROLE as SORT_ROLE
from app.ui.models.sorting import DecimalSortProxy

Index = QModelIndex | QPersistentModelIndex

#: The record behind a row (any column).
RECORD_ROLE = int(Qt.ItemDataRole.UserRole) + 11

PENDING_COLOUR = QColor("#b26a00")
COMPLETED_COLOUR = QColor("#2e8b57")
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MICROSECOND = timedelta(microseconds=1)


class Column(IntEnum):
    ORDERING = 0
    ASSET = 1
    AMOUNT = 2
    NETWORK = 3
    STATUS = 4
    HASH = 5
    CREATED = 6
    CREATED_BY = 7
    COMPLETED = 8
    COMPLETED_BY = 9
    ADDRESS = 10


HEADERS = {
    Column.ORDERING: "#",
    Column.ASSET: "Asset",
    Column.AMOUNT: "Amount",
    Column.NETWORK: "Network",
    Column.STATUS: "Status",
    Column.HASH: "Hash",
    Column.CREATED: "Created",
    Column.CREATED_BY: "Created by",
    Column.COMPLETED: "Completed",
    Column.COMPLETED_BY: "Completed by",
    Column.ADDRESS: "Address",
}

TOOLTIPS = {
    Column.ORDERING: "The service's sequence number: larger is newer",
    Column.NETWORK: "Blockchain network (or wire) the funds moved on",
    Column.HASH: "Blockchain transaction hash (right-click or Ctrl+C to copy it whole)",
    Column.CREATED: "When the record was created (local time; UTC in the cell's tooltip)",
    Column.COMPLETED: "When the funds were credited (local time); empty while pending",
    Column.ADDRESS: "Destination address of a withdrawal",
}

NUMERIC = frozenset({Column.ORDERING, Column.AMOUNT})
MONOSPACE = frozenset({Column.ORDERING, Column.AMOUNT, Column.HASH, Column.ADDRESS})


def time_key(moment: datetime) -> Decimal:
    """An instant as a Decimal of microseconds since the epoch: exact, sorts numerically."""
    return Decimal((moment - EPOCH) // MICROSECOND)


def local_time_text(moment: datetime | None) -> str:
    if moment is None:
        return DASH
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S")


def amount_text(value: Decimal, places: int) -> str:
    """At least the asset's display decimals, and never fewer than the amount has: a deposit's
    amount is shown to the last digit credited, never rounded."""
    exponent = value.as_tuple().exponent
    own = max(0, -exponent) if isinstance(exponent, int) else 0
    return format_number(value, max(places, own))


def who(step: TransferStep | None) -> str:
    """The name of whoever did a step, else their email, else their id."""
    if step is None:
        return ""
    user = step.user
    return user.name or user.email or user.id


class DepositsModel(QAbstractTableModel):
    def __init__(self, precision: Precision, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._precision = precision
        self._rows: list[DepositRecord] = []
        self._number_font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)

    # -- feeding ----------------------------------------------------------------------------

    def set_records(self, records: Sequence[DepositRecord]) -> None:
        """Show ``records`` in the given order; signal only changed rows when the set is kept."""
        new = list(records)
        if [r.transaction_id for r in new] != [r.transaction_id for r in self._rows]:
            self.beginResetModel()
            self._rows = new
            self.endResetModel()
            return
        old, self._rows = self._rows, new
        last = len(Column) - 1
        for row, (before, after) in enumerate(zip(old, new, strict=True)):
            if before != after:
                self.dataChanged.emit(self.index(row, 0), self.index(row, last))

    # -- reading ----------------------------------------------------------------------------

    @property
    def records(self) -> tuple[DepositRecord, ...]:
        return tuple(self._rows)

    def record(self, row: int) -> DepositRecord:
        return self._rows[row]

    def orderings(self) -> list[int]:
        return [r.ordering for r in self._rows]

    # -- cells ------------------------------------------------------------------------------

    @staticmethod
    def raw(record: DepositRecord, column: Column) -> Decimal | str | None:
        """The value a column sorts by."""
        if column is Column.ORDERING:
            return Decimal(record.ordering)
        if column is Column.AMOUNT:
            return record.amount
        if column is Column.CREATED:
            return None if record.created is None else time_key(record.created.at)
        if column is Column.COMPLETED:
            return None if record.completed is None else time_key(record.completed.at)
        return DepositsModel.exact(record, column)

    @staticmethod
    def exact(record: DepositRecord, column: Column) -> str:
        """The full text of a cell: nothing rounded, nothing elided, times in UTC wire form."""
        if column is Column.ORDERING:
            return str(record.ordering)
        if column is Column.ASSET:
            return record.asset
        if column is Column.AMOUNT:
            return format_trimmed(record.amount)
        if column is Column.NETWORK:
            return record.network or record.method
        if column is Column.STATUS:
            return record.status
        if column is Column.HASH:
            return record.hash
        if column is Column.CREATED:
            return "" if record.created is None else format_timestamp(record.created.at)
        if column is Column.CREATED_BY:
            return who(record.created)
        if column is Column.COMPLETED:
            return "" if record.completed is None else format_timestamp(record.completed.at)
        if column is Column.COMPLETED_BY:
            return who(record.completed)
        return record.address

    def _text(self, record: DepositRecord, column: Column) -> str:
        if column is Column.AMOUNT:
            return amount_text(record.amount, self._precision.asset(record.asset))
        if column is Column.CREATED:
            return local_time_text(record.created.at if record.created else None)
        if column is Column.COMPLETED:
            return local_time_text(record.completed.at if record.completed else None)
        return self.exact(record, column)

    def _tooltip(self, record: DepositRecord, column: Column) -> str | None:
        step = {Column.CREATED: record.created, Column.COMPLETED: record.completed}.get(column)
        if step is not None:
            return f"{format_timestamp(step.at)} (UTC) by {who(step)} {step.user.email}".strip()
        if column in (Column.CREATED_BY, Column.COMPLETED_BY):
            step = record.created if column is Column.CREATED_BY else record.completed
            return step.user.email or None if step else None
        if column is Column.AMOUNT:
            return f"{format_trimmed(record.amount)} {record.asset} (exact)"
        if column in (Column.HASH, Column.ADDRESS):
            return self.exact(record, column) or None
        return None

    # -- Qt model interface -----------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(Column)

    def headerData(
        self,
        section: int,
        orientation: Qt.Orientation,
        role: int = Qt.ItemDataRole.DisplayRole,
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(Column):
            return None
        column = Column(section)
        if role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[column]
        if role == Qt.ItemDataRole.ToolTipRole:
            return TOOLTIPS.get(column)
        if role == Qt.ItemDataRole.TextAlignmentRole and column in NUMERIC:
            return Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        if not 0 <= index.column() < len(Column):
            return None
        record, column = self._rows[index.row()], Column(index.column())
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(record, column)
        if role == EXPORT_ROLE:
            return self.exact(record, column)
        if role == SORT_ROLE:
            return self.raw(record, column)
        if role == RECORD_ROLE:
            return record
        if role == Qt.ItemDataRole.TextAlignmentRole:
            if column in NUMERIC:
                return Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
            return Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        if role == Qt.ItemDataRole.FontRole:
            return self._font(column)
        if role == Qt.ItemDataRole.ForegroundRole and column is Column.STATUS:
            if record.status == "completed":
                return COMPLETED_COLOUR
            return PENDING_COLOUR
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(record, column)
        return None

    def _font(self, column: Column) -> QFont | None:
        return self._number_font if column in MONOSPACE else None


class DepositsSortProxy(DecimalSortProxy):
    """Missing times (a pending deposit's completion) sort before every time."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent, missing_first=True)
