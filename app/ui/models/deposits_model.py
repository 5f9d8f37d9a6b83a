"""The deposits table: one row per deposit (or withdrawal) record, in the server's order.

A ``RecordTableModel`` (a ``KeyedTableModel`` whose rows ``CellPainter`` paints from one
``row_look`` per row) over ``COLUMNS``: amounts are Decimal,
shown at the asset's precision or more (never rounded), exact under ``EXPORT_ROLE`` for export
and copy;
times are shown in local time, with the UTC wire form in the tooltip, and sort by their instant.
A new page with the same records only signals the cells that changed (a pending deposit
completing); a different set of records resets the model. The status is in the theme's
success colour once completed, its warning colour before (``app.ui.palette``), and recoloured
on a theme switch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import Decimal

from PySide6.QtCore import QObject
from PySide6.QtGui import QColor

from app.domain import format_timestamp
from app.domain.display import Precision
from app.domain.money import format_trimmed
from app.domain.records import DepositRecord, TransferStep
from app.ui.column_widths import Fit
from app.ui.models.columns import Column
from app.ui.models.record_cells import RECORD_ROLE as RECORD_ROLE
from app.ui.models.record_cells import (
    Cell,
    text_cell,
    time_cell,
)
from app.ui.models.record_cells import amount_cell as asset_amount_cell
from app.ui.models.record_view import RecordTableModel, RecordView
from app.ui.models.sorting import SORT_ROLE as SORT_ROLE
from app.ui.palette import TradePalette

#: The palette colour of a completed record's status; any other status (pending) is a warning.
COMPLETED_COLOUR = "success"
PENDING_COLOUR = "warning"


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


def step_tip(step: TransferStep | None) -> str | None:
    """When (UTC) and by whom a step was done."""
    if step is None:
        return None
    return f"{format_timestamp(step.at)} (UTC) by {who(step)} {step.user.email}".strip()


def email_tip(step: TransferStep | None) -> str | None:
    return step.user.email or None if step else None


def ordering_cell(record: DepositRecord, _: Precision) -> Cell:
    ordering = str(record.ordering)
    return Cell(ordering, Decimal(record.ordering), ordering)


def amount_cell(record: DepositRecord, precision: Precision) -> Cell:
    """Shown at the asset's precision or more, exported with the same decimals (``10.00``
    where the table shows ``10.00``: every amount of an asset with one number of decimals)."""
    return asset_amount_cell(record.amount, record.asset, precision)


def whole_text_column(
    key: str, header: str, value: Callable[[DepositRecord], str], tooltip: str
) -> Column[DepositRecord]:
    """A long fixed-pitch text (a hash, an address) the cell may cut: the whole of it in the
    cell's tooltip (and right-click or Ctrl+C copies it whole)."""
    return Column(
        key,
        header,
        lambda r, _: text_cell(value(r)),
        tooltip,
        fixed_pitch=True,
        tip=lambda r, _: value(r) or None,
        fit=Fit.YIELD,
    )


def step_columns(
    key: str,
    header: str,
    step: Callable[[DepositRecord], TransferStep | None],
    tooltip: str,
) -> tuple[Column[DepositRecord], Column[DepositRecord]]:
    """When a step was done and by whom (``key`` and ``key_by``): both read the one ``step``."""
    return (
        Column(
            key,
            header,
            lambda r, _: time_cell(at.at if (at := step(r)) else None),
            tooltip,
            tip=lambda r, _: step_tip(step(r)),
            fit=Fit.WHOLE,
        ),
        Column(
            f"{key}_by",
            f"{header} by",
            lambda r, _: text_cell(who(step(r))),
            tip=lambda r, _: email_tip(step(r)),
            fit=Fit.YIELD,
        ),
    )


COLUMNS: tuple[Column[DepositRecord], ...] = (
    Column(
        "ordering",
        "#",
        ordering_cell,
        "The service's sequence number: larger is newer",
        numeric=True,
    ),
    Column("asset", "Asset", lambda r, _: text_cell(r.asset)),
    Column(
        "amount",
        "Amount",
        amount_cell,
        numeric=True,
        tip=lambda r, _: f"{format_trimmed(r.amount)} {r.asset} (exact)",
    ),
    Column(
        "network",
        "Network",
        lambda r, _: text_cell(r.network or r.method),
        "Blockchain network (or wire) the funds moved on",
    ),
    Column(
        "status",
        "Status",
        lambda r, _: text_cell(r.status),
        colour=lambda r, palette: status_colour(r.status, palette),
    ),
    whole_text_column(
        "hash",
        "Hash",
        lambda r: r.hash,
        "Blockchain transaction hash (right-click or Ctrl+C to copy it whole)",
    ),
    *step_columns(
        "created",
        "Created",
        lambda r: r.created,
        "When the record was created (local time; UTC in the cell's tooltip)",
    ),
    *step_columns(
        "completed",
        "Completed",
        lambda r: r.completed,
        "When the funds were credited (local time); empty while pending",
    ),
    whole_text_column(
        "address", "Address", lambda r: r.address, "Destination address of a withdrawal"
    ),
)


class DepositsModel(RecordTableModel[DepositRecord]):
    def __init__(self, precision: Precision, parent: QObject | None = None) -> None:
        super().__init__(COLUMNS, precision, parent)

    def set_records(self, records: Sequence[DepositRecord]) -> None:
        """Show ``records`` in the given order; signal only changed cells when the set is kept."""
        rows = [((r.ordering, r.transaction_id), r) for r in records]
        self.apply(rows, reset=[key for key, _ in rows] != self.keys())

    @property
    def records(self) -> tuple[DepositRecord, ...]:
        return tuple(self.record(row) for row in range(self.rowCount()))

    def orderings(self) -> list[int]:
        return [record.ordering for record in self.records]


class DepositsSortProxy(RecordView):
    """Missing times (a pending deposit's completion) sort before every time."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent, missing_first=True)
