"""The audit trail table: one row per journal entry (an order or a quote accept the terminal
sent), newest first, in the trader's words.

Times show to the millisecond in local time and export as local ISO 8601 with the offset; the
UTC columns and the exact body sent are hidden on screen (the panel hides ``EXPORT_ONLY``) but
are in every CSV export, every copied row and the details. The outcome shows in words and
exports as the journal's status; an unknown or unanswered one is in the warning colour, a
refusal or failure in the error colour.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from datetime import datetime

from PySide6.QtCore import QObject
from PySide6.QtGui import QColor

from app.domain.display import DASH, Precision
from app.services.audit_trail import (
    KIND_WORDS,
    AuditPage,
    AuditRow,
    local_ms,
    local_ms_iso,
    utc_ms,
)
from app.ui.column_widths import Fit
from app.ui.models.columns import Column
from app.ui.models.keyed_table import Cells
from app.ui.models.record_cells import Cell, text_cell, time_key
from app.ui.models.record_view import RecordTableModel
from app.ui.palette import TradePalette

#: Columns in the CSV, the copied rows and the details, not on screen.
EXPORT_ONLY = ("intent_utc", "sent_utc", "updated_utc", "body")


def local_cell(moment: datetime | None) -> Cell:
    """Local time to the ms; sorts as a number; exports with its UTC offset."""
    if moment is None:
        return Cell(DASH, None, "")
    return Cell(local_ms(moment), time_key(moment), local_ms_iso(moment))


def utc_cell(moment: datetime | None) -> Cell:
    if moment is None:
        return Cell(DASH, None, "")
    text = utc_ms(moment)
    return Cell(text, time_key(moment), text)


def utc_tip(when: Callable[[AuditRow], datetime | None]) -> Callable[[AuditRow, Precision], str]:
    def tip(row: AuditRow, _: Precision) -> str:
        moment = when(row)
        return f"{utc_ms(moment)} (UTC)" if moment is not None else "not sent"

    return tip


def outcome_colour(row: AuditRow, palette: TradePalette) -> QColor | None:
    if row.status in ("unknown", "sending"):
        return palette.warning
    if row.status in ("rejected", "failed"):
        return palette.error
    if row.status == "dismissed":
        return palette.stale
    return None


def _sent(row: AuditRow) -> datetime | None:
    return row.sent_at


def _intent(row: AuditRow) -> datetime:
    return row.intent_at


def _updated(row: AuditRow) -> datetime:
    return row.updated_at


def local_column(
    key: str, header: str, when: Callable[[AuditRow], datetime | None], tooltip: str
) -> Column[AuditRow]:
    """A local-time column (ms): its cell and its UTC tooltip read the one moment ``when``."""
    return Column(
        key,
        header,
        lambda r, _: local_cell(when(r)),
        tooltip,
        fixed_pitch=True,
        tip=utc_tip(when),
        fit=Fit.WHOLE,
    )


COLUMNS: tuple[Column[AuditRow], ...] = (
    local_column(
        "intent",
        "Intent (local)",
        _intent,
        "Journaled before it was sent (local time, ms; exported with UTC too)",
    ),
    local_column(
        "sent",
        "Sent (local)",
        _sent,
        "When the request left (local time, ms); — when it never left",
    ),
    Column(
        "what",
        "Order / accept",
        lambda r, _: text_cell(r.what),
        "What was sent, in pair terms (the exact body is in Details and the CSV)",
    ),
    Column(
        "outcome",
        "Outcome",
        lambda r, _: Cell(r.outcome, r.outcome, r.status),
        "The journal's last word on it (exported as its status)",
        colour=outcome_colour,
        tip=lambda r, _: r.detail or None,
    ),
    Column(
        "order_id",
        "Order id",
        lambda r, _: text_cell(r.order_id),
        "The server's order id (none while the outcome is unknown)",
        fit=Fit.YIELD,
    ),
    Column(
        "client_order_id",
        "Client order id",
        lambda r, _: text_cell(r.client_order_id),
        "The id this terminal gave the request (clientOrderId)",
        fit=Fit.YIELD,
    ),
    local_column(
        "updated",
        "Last update (local)",
        _updated,
        "The entry's last change: its outcome, a look-up or a dismissal (local time, ms)",
    ),
    Column(
        "detail", "Detail", lambda r, _: text_cell(r.detail), "The outcome in words", fit=Fit.YIELD
    ),
    Column(
        "kind",
        "Type",
        lambda r, _: Cell(KIND_WORDS.get(r.kind, r.kind), r.kind, r.kind),
        "Market order, limit order or RFQ accept",
    ),
    Column("account", "Account", lambda r, _: text_cell(r.account), fit=Fit.YIELD),
    Column("intent_utc", "Intent (UTC)", lambda r, _: utc_cell(r.intent_at)),
    Column("sent_utc", "Sent (UTC)", lambda r, _: utc_cell(r.sent_at)),
    Column("updated_utc", "Last update (UTC)", lambda r, _: utc_cell(r.updated_at)),
    Column("body", "Body sent (JSON)", lambda r, _: text_cell(r.body)),
)


class AuditModel(RecordTableModel[AuditRow]):
    """The trail's rows keyed by clientOrderId, in the order read (newest first).

    The cells of new rows can be made off the GUI thread first (``prepare``: plain Python, no
    Qt), so applying a page of thousands of rows only moves them into place."""

    def __init__(self, precision: Precision, parent: QObject | None = None) -> None:
        super().__init__(COLUMNS, precision, parent)
        self._prepared: dict[AuditRow, Cells] = {}

    def prepare(
        self, page: AuditPage, shown: tuple[AuditRow, ...] = ()
    ) -> dict[AuditRow, Cells] | None:
        """The cells of ``page``'s rows that are not among ``shown`` (the rows of the page shown
        now); None when the page is ``shown`` as it is (nothing to apply). Safe on a worker
        thread: it reads only its arguments and the column specs."""
        if page.rows == shown:
            return None
        known = frozenset(shown)
        return {row: self.cells_of(row) for row in page.rows if row not in known}

    def set_page(self, page: AuditPage, prepared: dict[AuditRow, Cells] | None = None) -> None:
        self._prepared = prepared or {}
        try:
            self.apply([(row.client_order_id, row) for row in page.rows])
        finally:
            self._prepared = {}

    def _cells_for(self, key: Hashable, record: AuditRow) -> Cells:
        cells = self._prepared.get(record)
        return cells if cells is not None else super()._cells_for(key, record)

    def reuse_cells(self, old: AuditRow, new: AuditRow) -> bool:
        return old == new  # an entry read again unchanged keeps its cells

    def audit_row(self, row: int) -> AuditRow:
        return self.record(row)
