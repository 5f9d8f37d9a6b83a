"""The Working orders tables: one row per parent order, and the children of the one selected.

A parent (``app.services.algos.parents.Parent``) is mutable and changes in place, so each row
holds a frozen ``ParentRow`` read from it when the engine said it changed: the keyed model
then sees a new record only for the parents that changed and recomputes only their cells.
Children (``Child``) are frozen already and replaced on every change.

Amounts are in the asset sold (a buy spends the quote, a sell sells the base); prices are QUOTE
per BASE at the pair's increment; basis points are against the mid when the parent started
working, positive when worse for the trader. An armed or disarmed parent says it is armed in
this terminal (``ARMED_HERE``) in its note and in every cell's tooltip.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QColor

from app.domain.display import DASH, Precision
from app.services.algos.parents import ARMED_HERE, Child, Parent
from app.services.algos.preview import next_child_at
from app.ui.column_widths import Fit
from app.ui.models.columns import Column
from app.ui.models.keyed_table import KeyedTableModel
from app.ui.models.record_cells import (
    Cell,
    amount_cell,
    number_cell,
    pair_price_cell,
    text_cell,
    time_key,
)
from app.ui.palette import TradePalette

#: ``(filled, target)`` Decimals of a parent's progress column, for the bar's delegate.
PROGRESS_ROLE = int(Qt.ItemDataRole.UserRole) + 40
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole)

STATE_WORDS = {
    "waiting": "Waiting",
    "armed": "Armed here",
    "working": "Working",
    "paused": "Paused",
    "disarmed": "Disarmed",
    "done": "Done",
    "stopped": "Stopped",
}
#: The state's colour by name in the palette (None: ordinary text).
STATE_COLOURS = {
    "armed": "warning",
    "working": "success",
    "paused": "warning",
    "disarmed": "warning",
    "stopped": "error",
}
CHILD_WORDS = {
    "sending": "Sending",
    "resting": "Resting",
    "unknown": "Unknown — looking it up",
    "filled": "Filled",
    "empty": "Ended unfilled",
}


@dataclass(frozen=True)
class ParentRow:
    """What the table shows of a parent, read once when it changed."""

    id: str
    label: str
    pair: str
    side: str
    state: str
    note: str
    filled: Decimal
    target: Decimal
    source: str
    average: Decimal | None
    bps: Decimal | None
    next_at: datetime | None
    children: int
    armed_kind: bool

    @classmethod
    def of(cls, parent: Parent) -> ParentRow:
        spec = parent.spec
        return cls(
            parent.id,
            spec.info.label,
            spec.pair,
            spec.side,
            parent.state,
            parent.note,
            parent.filled,
            parent.target,
            spec.source,
            parent.average_price(),
            parent.slippage_bps(),
            next_child_at(parent),
            len(parent.children),
            spec.info.armed,
        )

    @property
    def armed_here(self) -> bool:
        """Armed (or disarmed and re-armable) in this terminal: said wherever it is shown."""
        return self.state in ("armed", "disarmed")

    @property
    def note_text(self) -> str:
        if self.armed_here and ARMED_HERE not in self.note:
            return f"{self.note} — {ARMED_HERE}" if self.note else ARMED_HERE
        return self.note


def progress_text(row: ParentRow, precision: Precision) -> str:
    """``250.00 / 1,000.00 USD``: filled of the target, in the asset sold."""
    filled = precision.exact(row.filled, row.source)
    return f"{filled} / {precision.exact(row.target, row.source)} {row.source}"


def _progress(row: ParentRow, precision: Precision) -> Cell:
    share = row.filled / row.target if row.target else Decimal(0)
    return Cell(progress_text(row, precision), share, str(row.filled))


def clock_text(moment: datetime | None) -> str:
    return DASH if moment is None else moment.astimezone().strftime("%H:%M:%S")


def _next(row: ParentRow, _: Precision) -> Cell:
    if row.next_at is None:
        return Cell(DASH, None, "")
    return Cell(clock_text(row.next_at), time_key(row.next_at), row.next_at.isoformat())


def _state_colour(row: ParentRow, palette: TradePalette) -> QColor | None:
    name = STATE_COLOURS.get(row.state)
    return None if name is None else QColor(getattr(palette, name))


PARENT_COLUMNS: tuple[Column[ParentRow], ...] = (
    Column("algo", "Algo", lambda r, _: text_cell(r.label)),
    Column("pair", "Pair", lambda r, _: text_cell(r.pair)),
    Column("side", "Side", lambda r, _: text_cell("Buy" if r.side == "buy" else "Sell")),
    Column(
        "state",
        "State",
        lambda r, _: text_cell(STATE_WORDS.get(r.state, r.state)),
        colour=_state_colour,
    ),
    Column(
        "progress",
        "Filled / target",
        _progress,
        "Filled of the target, in the asset sold (a buy spends the quote)",
        numeric=True,
    ),
    Column(
        "average",
        "Avg price",
        lambda r, p: pair_price_cell(r.average, r.pair, p),
        "Average fill price, QUOTE per BASE",
        numeric=True,
    ),
    Column(
        "bps",
        "bps vs arrival",
        lambda r, _: number_cell(
            r.bps.quantize(Decimal("0.1")) if r.bps is not None else None, 1, signed=True
        ),
        "Average price against the mid when it started; positive is worse for you",
        numeric=True,
    ),
    Column("next", "Next child", _next, "When the next child is due (local time)", numeric=True),
    Column("note", "Note", lambda r, _: text_cell(r.note_text), fit=Fit.YIELD),
)


class ParentsModel(KeyedTableModel[ParentRow]):
    """One row per parent, newest first."""

    def __init__(self, precision: Precision, parent: QObject | None = None) -> None:
        super().__init__(PARENT_COLUMNS, precision, parent)

    def reuse_cells(self, old: ParentRow, new: ParentRow) -> bool:
        return old == new

    def row_of(self, parent_id: str) -> ParentRow | None:
        row = self.position(parent_id)
        return None if row is None else self.record(row)

    def extra_data(self, row: int, column: int, role: int) -> Any:
        record = self.record(row)
        if role == PROGRESS_ROLE and column == self.column("progress"):
            return (record.filled, record.target)
        if role == _TOOLTIP and record.armed_here:
            return ARMED_HERE
        return None


@dataclass(frozen=True)
class ChildRow:
    """A child with the pair and the number it has in its parent."""

    number: int
    pair: str
    source: str
    destination: str
    child: Child


CHILD_COLUMNS: tuple[Column[ChildRow], ...] = (
    Column(
        "number",
        "#",
        lambda r, _: Cell(str(r.number), Decimal(r.number), str(r.number)),
        numeric=True,
    ),
    Column(
        "size",
        "Size",
        lambda r, p: amount_cell(r.child.size, r.source, p),
        "Asset sold",
        numeric=True,
    ),
    Column(
        "limit",
        "Limit",
        lambda r, p: pair_price_cell(r.child.limit, r.pair, p),
        "QUOTE per BASE",
        numeric=True,
    ),
    Column(
        "status", "Status", lambda r, _: text_cell(CHILD_WORDS.get(r.child.status, r.child.status))
    ),
    Column("filled", "Filled", lambda r, p: amount_cell(r.child.filled, r.source, p), numeric=True),
    Column(
        "received",
        "Received",
        lambda r, p: amount_cell(r.child.received, r.destination, p),
        numeric=True,
    ),
    Column(
        "sent",
        "Sent",
        lambda r, _: Cell(
            clock_text(r.child.sent_at), time_key(r.child.sent_at), r.child.sent_at.isoformat()
        ),
    ),
    Column("order", "Order id", lambda r, _: text_cell(r.child.order_id or DASH), fit=Fit.YIELD),
    Column("detail", "Detail", lambda r, _: text_cell(r.child.detail), fit=Fit.YIELD),
)


class ChildrenModel(KeyedTableModel[ChildRow]):
    """The children of one parent, first sent first."""

    def __init__(self, precision: Precision, parent: QObject | None = None) -> None:
        super().__init__(CHILD_COLUMNS, precision, parent)

    def reuse_cells(self, old: ChildRow, new: ChildRow) -> bool:
        return old == new

    def show_parent(self, parent: Parent | None) -> None:
        if parent is None:
            self.apply([])
            return
        spec = parent.spec
        self.apply(
            [
                (
                    child.client_order_id,
                    ChildRow(number, spec.pair, spec.source, spec.destination, child),
                )
                for number, child in enumerate(parent.children, start=1)
            ]
        )


def parent_rows(parents: list[Parent]) -> list[tuple[str, ParentRow]]:
    """Every parent, newest first."""
    ordered = sorted(parents, key=lambda p: p.created_at, reverse=True)
    return [(p.id, ParentRow.of(p)) for p in ordered]
