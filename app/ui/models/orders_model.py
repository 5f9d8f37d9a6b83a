"""The order list table: one row per order, newest first, columns from the Order fields.

Prices appear in both directions: ``Price`` is the wire's SOURCE/DESTINATION (destination
received per source sold), ``Inverse price`` the other way round; each cell names its unit.
Statuses are shown exactly as the server sent them; the ones this version knows get a colour
and an explanation, any other keeps the plain text and says it is not known. Orders that
appear on top after the first load, and known orders that just filled, are highlighted for
``HIGHLIGHT_SECONDS``; one single-shot timer ends the highlights.

Colours follow the theme (``app.ui.palette``): filled in the success colour, rejected in the
error colour, resting in the rising blue, canceled in the stale grey; the highlight is the
theme's amber bar colour, translucent so the row's text and status colours still read on it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Iterable
from datetime import datetime
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QColor, QFont

from app.services.order_feed import OrderRow, OrdersSnapshot
from app.ui.csv_export import export_value
from app.ui.formatting import Precision
from app.ui.models.columns import Column
from app.ui.models.keyed_table import KeyedTableModel
from app.ui.models.record_cells import (
    Cell,
    RecordSortProxy,
    number_cell,
    price_cell,
    text_cell,
    time_cell,
)
from app.ui.palette import TradePalette

HIGHLIGHT_SECONDS = 3.0
#: Opacity (0–255) of the highlight: a quarter, so text and status colours read through it.
HIGHLIGHT_ALPHA = 64
#: The palette colour each known status is shown in (others: ordinary text).
STATUS_COLOURS = {
    "filled": "success",
    "submitted": "up",
    "canceled": "stale",
    "rejected": "error",
}
STATUS_MEANING = {
    "filled": "Filled in full",
    "submitted": "Resting: a limit order waiting for its price; its size is locked",
    "canceled": "Canceled: its end time passed; the locked size was released",
    "rejected": "Rejected by the service",
}


def status_colour(status: str, palette: TradePalette) -> QColor | None:
    """The status column's colour for ``status`` in ``palette`` (None: ordinary text)."""
    name = STATUS_COLOURS.get(status)
    if name is None:
        return None
    colour: QColor = getattr(palette, name)
    return colour


def highlight_colour(palette: TradePalette) -> QColor:
    """The background of an order that just appeared or filled: the theme's amber, translucent."""
    colour = QColor(palette.bar_warn)
    colour.setAlpha(HIGHLIGHT_ALPHA)
    return colour


def status_tip(row: OrderRow, _: Precision) -> str:
    meaning = STATUS_MEANING.get(
        row.order.result.status, "Not a status this version knows: shown as the server sent it"
    )
    error = row.order.result.error
    return f"{meaning}\n{error}" if error else meaning


def utc_tip(
    moment: Callable[[OrderRow], datetime | None],
) -> Callable[[OrderRow, Precision], str | None]:
    def tip(row: OrderRow, _: Precision) -> str | None:
        text = export_value(moment(row))
        return f"{text} (UTC)" if text else None

    return tip


def submitted(row: OrderRow) -> datetime | None:
    return row.order.submitted_at


def executed(row: OrderRow) -> datetime | None:
    result = row.order.result
    return result.executed_at or result.updated_at


def natural(row: OrderRow) -> str:
    return f"{row.order.source}/{row.order.destination}"


def inverse(row: OrderRow) -> str:
    return f"{row.order.destination}/{row.order.source}"


def total_cell(row: OrderRow, precision: Precision) -> Cell:
    total = row.order.result.total
    if total is None:
        return number_cell(None, precision.asset(row.order.destination))
    return number_cell(total.value, precision.asset(total.asset))


COLUMNS: tuple[Column[OrderRow], ...] = (
    Column(
        "submitted",
        "Submitted",
        lambda r, _: time_cell(submitted(r)),
        "When the order was submitted (local time; exported as UTC)",
        tip=utc_tip(submitted),
    ),
    Column("type", "Type", lambda r, _: text_cell(r.order.type)),
    Column("source", "Source", lambda r, _: text_cell(r.order.source), "Asset sold"),
    Column(
        "destination", "Destination", lambda r, _: text_cell(r.order.destination), "Asset bought"
    ),
    Column(
        "size",
        "Size",
        lambda r, p: number_cell(r.order.size.value, p.asset(r.order.size.asset)),
        "Amount of the source asset sold",
        numeric=True,
    ),
    Column(
        "status",
        "Status",
        lambda r, _: text_cell(r.order.result.status),
        colour=lambda r, palette: status_colour(r.order.result.status, palette),
        tip=status_tip,
    ),
    Column(
        "limit",
        "Limit",
        lambda r, p: price_cell(r.order.limit, p.price(natural(r))),
        "Least destination per source accepted (SOURCE/DESTINATION)",
        numeric=True,
    ),
    Column(
        "price",
        "Price",
        lambda r, p: price_cell(r.order.result.price, p.price(natural(r))),
        "Execution price: destination received per source sold (SOURCE/DESTINATION)",
        numeric=True,
    ),
    Column(
        "inverse_price",
        "Inverse price",
        lambda r, p: price_cell(r.order.result.inverted_price, p.price(inverse(r))),
        "The same price the other way: source per destination",
        numeric=True,
    ),
    Column("total", "Total", total_cell, "Amount of the destination asset received", numeric=True),
    Column(
        "executed",
        "Executed / updated",
        lambda r, _: time_cell(executed(r)),
        "When it executed; for orders not executed, when it last changed",
        tip=utc_tip(executed),
    ),
    Column("order_id", "Order id", lambda r, _: text_cell(r.order.order_id)),
    Column(
        "client_order_id",
        "Client order id",
        lambda r, _: text_cell(r.client_order_id),
        "The clientOrderId the order was sent with, when known",
    ),
)


class OrdersModel(KeyedTableModel[OrderRow]):
    colour_roles = (Qt.ItemDataRole.ForegroundRole, Qt.ItemDataRole.BackgroundRole)

    def __init__(
        self,
        precision: Precision,
        parent: QObject | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(COLUMNS, precision, parent)
        self._clock = clock
        self._highlight_until: dict[Hashable, float] = {}
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._end_highlights)
        self._highlight = highlight_colour(self.palette)
        self._status = self.column("status")

    @property
    def highlight(self) -> QColor:
        """The background of a highlighted row in the palette in force."""
        return self._highlight

    def set_palette(self, palette: TradePalette) -> None:
        self._highlight = highlight_colour(palette)
        super().set_palette(palette)

    def set_snapshot(self, snapshot: OrdersSnapshot) -> None:
        if snapshot.reset:
            self._highlight_until.clear()
        self.apply([(row.order_id, row) for row in snapshot.rows], reset=snapshot.reset)
        fresh = snapshot.new_ids | snapshot.filled_ids
        if fresh:
            until = self._clock() + HIGHLIGHT_SECONDS
            for order_id in fresh:
                self._highlight_until[order_id] = until
            self._signal_highlights(fresh)
            self._arm()

    def reuse_cells(self, old: OrderRow, new: OrderRow) -> bool:
        """Cells of an unchanged order are not formatted again."""
        return old == new

    def row_of(self, order_id: str) -> int:
        """The row of an order that is shown (KeyError for one that is not)."""
        row = self.position(order_id)
        if row is None:
            raise KeyError(order_id)
        return row

    def order_row(self, row: int) -> OrderRow:
        return self.record(row)

    def highlighted(self) -> set[str]:
        now = self._clock()
        return {str(key) for key, until in self._highlight_until.items() if until > now}

    def _arm(self) -> None:
        if not self._highlight_until:
            return
        wait = max(0.0, min(self._highlight_until.values()) - self._clock())
        self._timer.start(int(wait * 1000) + 1)

    def _end_highlights(self) -> None:
        now = self._clock()
        ended = [key for key, until in self._highlight_until.items() if until <= now]
        for key in ended:
            del self._highlight_until[key]
        self._signal_highlights(ended)
        self._arm()

    def _signal_highlights(self, keys: Iterable[Hashable]) -> None:
        """Repaint the backgrounds of the rows of ``keys`` that are shown."""
        rows = [self.position(key) for key in keys]
        self.signal_rows([row for row in rows if row is not None], [Qt.ItemDataRole.BackgroundRole])

    def extra_data(self, row: int, column: int, role: int) -> Any:
        order_row = self.order_row(row)
        if role == Qt.ItemDataRole.BackgroundRole:
            until = self._highlight_until.get(order_row.order_id)
            return self._highlight if until is not None and until > self._clock() else None
        unknown = column == self._status and not order_row.known_status
        if role == Qt.ItemDataRole.FontRole and unknown:
            italic = QFont()
            italic.setItalic(True)
            return italic
        return None


class OrdersProxy(RecordSortProxy):
    """Orders sort as numbers and times; free text filters what is shown."""
