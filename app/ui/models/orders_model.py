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
from collections.abc import Callable, Hashable
from enum import IntEnum
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QColor, QFont

from app.services.order_history import OrderRow, OrdersSnapshot
from app.ui.formatting import Precision
from app.ui.models.record_cells import (
    Cell,
    RecordSortProxy,
    RecordTableModel,
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


class Column(IntEnum):
    SUBMITTED = 0
    TYPE = 1
    SOURCE = 2
    DESTINATION = 3
    SIZE = 4
    STATUS = 5
    LIMIT = 6
    PRICE = 7
    INVERSE_PRICE = 8
    TOTAL = 9
    EXECUTED = 10
    ORDER_ID = 11
    CLIENT_ORDER_ID = 12


COLUMNS = tuple(Column)
HEADERS = {
    Column.SUBMITTED: "Submitted",
    Column.TYPE: "Type",
    Column.SOURCE: "Source",
    Column.DESTINATION: "Destination",
    Column.SIZE: "Size",
    Column.STATUS: "Status",
    Column.LIMIT: "Limit",
    Column.PRICE: "Price",
    Column.INVERSE_PRICE: "Inverse price",
    Column.TOTAL: "Total",
    Column.EXECUTED: "Executed / updated",
    Column.ORDER_ID: "Order id",
    Column.CLIENT_ORDER_ID: "Client order id",
}
TOOLTIPS = {
    Column.SUBMITTED: "When the order was submitted (local time; exported as UTC)",
    Column.SOURCE: "Asset sold",
    Column.DESTINATION: "Asset bought",
    Column.SIZE: "Amount of the source asset sold",
    Column.LIMIT: "Least destination per source accepted (SOURCE/DESTINATION)",
    Column.PRICE: "Execution price: destination received per source sold (SOURCE/DESTINATION)",
    Column.INVERSE_PRICE: "The same price the other way: source per destination",
    Column.TOTAL: "Amount of the destination asset received",
    Column.EXECUTED: "When it executed; for orders not executed, when it last changed",
    Column.CLIENT_ORDER_ID: "The clientOrderId the order was sent with, when known",
}
NUMERIC = frozenset(
    int(c) for c in (Column.SIZE, Column.LIMIT, Column.PRICE, Column.INVERSE_PRICE, Column.TOTAL)
)


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


def order_cells(row: OrderRow, precision: Precision) -> tuple[Cell, ...]:
    order, result = row.order, row.order.result
    natural = f"{order.source}/{order.destination}"
    inverse = f"{order.destination}/{order.source}"
    total = result.total
    cells = {
        Column.SUBMITTED: time_cell(order.submitted_at),
        Column.TYPE: text_cell(order.type),
        Column.SOURCE: text_cell(order.source),
        Column.DESTINATION: text_cell(order.destination),
        Column.SIZE: number_cell(order.size.value, precision.asset(order.size.asset)),
        Column.STATUS: text_cell(result.status),
        Column.LIMIT: price_cell(order.limit, precision.price(natural)),
        Column.PRICE: price_cell(result.price, precision.price(natural)),
        Column.INVERSE_PRICE: price_cell(result.inverted_price, precision.price(inverse)),
        Column.TOTAL: number_cell(
            None if total is None else total.value,
            precision.asset(total.asset if total is not None else order.destination),
        ),
        Column.EXECUTED: time_cell(result.executed_at or result.updated_at),
        Column.ORDER_ID: text_cell(order.order_id),
        Column.CLIENT_ORDER_ID: text_cell(row.client_order_id),
    }
    return tuple(cells[column] for column in COLUMNS)


class OrdersModel(RecordTableModel):
    colour_roles = (Qt.ItemDataRole.ForegroundRole, Qt.ItemDataRole.BackgroundRole)

    def __init__(
        self,
        precision: Precision,
        parent: QObject | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(
            [HEADERS[c] for c in Column], {int(k): v for k, v in TOOLTIPS.items()}, NUMERIC, parent
        )
        self._precision = precision
        self._clock = clock
        self._highlight_until: dict[Hashable, float] = {}
        self._cache: dict[str, tuple[OrderRow, tuple[Cell, ...]]] = {}
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._end_highlights)
        self._highlight = highlight_colour(self.palette)

    @property
    def highlight(self) -> QColor:
        """The background of a highlighted row in the palette in force."""
        return self._highlight

    def set_palette(self, palette: TradePalette) -> None:
        self._highlight = highlight_colour(palette)
        super().set_palette(palette)

    def set_snapshot(self, snapshot: OrdersSnapshot) -> None:
        rows = [(row.order_id, row, self._cells_of(row)) for row in snapshot.rows]
        self._cache = {row.order_id: (row, cells) for _, row, cells in rows}
        if snapshot.reset:
            self._highlight_until.clear()
        self.apply(rows, reset=snapshot.reset)
        fresh = snapshot.new_ids | snapshot.filled_ids
        if fresh:
            until = self._clock() + HIGHLIGHT_SECONDS
            for order_id in fresh:
                self._highlight_until[order_id] = until
            shown = set(self.keys())
            self.signal_rows(
                [self.row_of(key) for key in fresh if key in shown],
                [Qt.ItemDataRole.BackgroundRole],
            )
            self._arm()

    def _cells_of(self, row: OrderRow) -> tuple[Cell, ...]:
        """Cells of an unchanged order are not formatted again."""
        cached = self._cache.get(row.order_id)
        if cached is not None and cached[0] == row:
            return cached[1]
        return order_cells(row, self._precision)

    def order_row(self, row: int) -> OrderRow:
        record: OrderRow = self.record(row)
        return record

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
        keys = set(self.keys())
        self.signal_rows(
            [self.row_of(key) for key in ended if key in keys], [Qt.ItemDataRole.BackgroundRole]
        )
        self._arm()

    def extra_data(self, row: int, column: int, role: int) -> Any:
        order_row = self.order_row(row)
        status = order_row.order.result.status
        if role == Qt.ItemDataRole.BackgroundRole:
            until = self._highlight_until.get(order_row.order_id)
            return self._highlight if until is not None and until > self._clock() else None
        if column != Column.STATUS:
            if role == Qt.ItemDataRole.ToolTipRole and column in (
                Column.SUBMITTED,
                Column.EXECUTED,
            ):
                text = self.cell(row, column).export
                return f"{text} (UTC)" if text else None
            return None
        if role == Qt.ItemDataRole.ForegroundRole:
            return status_colour(status, self.palette)
        if role == Qt.ItemDataRole.ToolTipRole:
            meaning = STATUS_MEANING.get(
                status, "Not a status this version knows: shown as the server sent it"
            )
            error = order_row.order.result.error
            return f"{meaning}\n{error}" if error else meaning
        if role == Qt.ItemDataRole.FontRole and not order_row.known_status:
            italic = QFont()
            italic.setItalic(True)
            return italic
        return None


class OrdersProxy(RecordSortProxy):
    """Orders sort as numbers and times; free text filters what is shown."""
