"""The deposits table: one row per deposit (or withdrawal) record, in the server's order.

A ``RecordTableModel`` (``app.ui.models.record_cells``): amounts are Decimal, shown at the
asset's precision or more (never rounded), exact under ``EXPORT_ROLE`` for export and copy;
times are shown in local time, with the UTC wire form in the tooltip, and sort by their instant.
A new page with the same records only signals the cells that changed (a pending deposit
completing); a different set of records resets the model. The status is in the theme's
success colour once completed, its warning colour before (``app.ui.palette``), and recoloured
on a theme switch.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from enum import IntEnum
from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QColor

from app.domain import format_timestamp
from app.domain.money import format_trimmed
from app.domain.records import DepositRecord, TransferStep
from app.ui.formatting import Precision
from app.ui.models.record_cells import RECORD_ROLE as RECORD_ROLE
from app.ui.models.record_cells import (
    Cell,
    RecordTableModel,
    exact_number,
    text_cell,
    time_cell,
)
from app.ui.models.sorting import SORT_ROLE as SORT_ROLE
from app.ui.models.sorting import DecimalSortProxy
from app.ui.palette import TradePalette

#: The palette colour of a completed record's status; any other status (pending) is a warning.
COMPLETED_COLOUR = "success"
PENDING_COLOUR = "warning"


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


def status_colour(status: str, palette: TradePalette) -> QColor:
    """Completed in the success colour; pending (or anything not yet completed) a warning."""
    colour: QColor = getattr(palette, COMPLETED_COLOUR if status == "completed" else PENDING_COLOUR)
    return colour


def who(step: TransferStep | None) -> str:
    """The name of whoever did a step, else their email, else their id."""
    if step is None:
        return ""
    user = step.user
    return user.name or user.email or user.id


def deposit_cells(record: DepositRecord, places: int) -> tuple[Cell, ...]:
    """Each column's display text, sort key and exact text (amounts trimmed: ``10``, not
    ``10.00``; times in the UTC wire form)."""
    created = record.created.at if record.created else None
    completed = record.completed.at if record.completed else None
    ordering = str(record.ordering)
    cells = {
        Column.ORDERING: Cell(ordering, Decimal(record.ordering), ordering),
        Column.ASSET: text_cell(record.asset),
        Column.AMOUNT: Cell(
            exact_number(record.amount, places), record.amount, format_trimmed(record.amount)
        ),
        Column.NETWORK: text_cell(record.network or record.method),
        Column.STATUS: text_cell(record.status),
        Column.HASH: text_cell(record.hash),
        Column.CREATED: time_cell(created),
        Column.CREATED_BY: text_cell(who(record.created)),
        Column.COMPLETED: time_cell(completed),
        Column.COMPLETED_BY: text_cell(who(record.completed)),
        Column.ADDRESS: text_cell(record.address),
    }
    return tuple(cells[column] for column in Column)


class DepositsModel(RecordTableModel):
    colour_roles = (Qt.ItemDataRole.ForegroundRole,)

    def __init__(self, precision: Precision, parent: QObject | None = None) -> None:
        super().__init__(
            [HEADERS[c] for c in Column], {int(k): v for k, v in TOOLTIPS.items()}, NUMERIC, parent
        )
        self._precision = precision

    # -- feeding ----------------------------------------------------------------------------

    def set_records(self, records: Sequence[DepositRecord]) -> None:
        """Show ``records`` in the given order; signal only changed cells when the set is kept."""
        rows = [
            ((r.ordering, r.transaction_id), r, deposit_cells(r, self._precision.asset(r.asset)))
            for r in records
        ]
        self.apply(rows, reset=[key for key, _, _ in rows] != self.keys())

    # -- reading ----------------------------------------------------------------------------

    @property
    def records(self) -> tuple[DepositRecord, ...]:
        return tuple(self.record(row) for row in range(self.rowCount()))

    def record(self, row: int) -> DepositRecord:
        record: DepositRecord = super().record(row)
        return record

    def orderings(self) -> list[int]:
        return [record.ordering for record in self.records]

    # -- more roles -------------------------------------------------------------------------

    def extra_data(self, row: int, column: int, role: int) -> Any:
        record = self.record(row)
        if role == Qt.ItemDataRole.FontRole and column in MONOSPACE:
            return self.number_font
        if role == Qt.ItemDataRole.ForegroundRole and column == Column.STATUS:
            return status_colour(record.status, self.palette)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(record, Column(column))
        return None

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
            return (record.hash if column is Column.HASH else record.address) or None
        return None


class DepositsSortProxy(DecimalSortProxy):
    """Missing times (a pending deposit's completion) sort before every time."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent, missing_first=True)
