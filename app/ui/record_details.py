"""A record's details: every field under its wire name with its exact text, the JSON, and
copy buttons (one per field, one for the JSON, one for everything). Opened with ``open()``,
never ``exec()``.

Orders and ledger entries keep the object the service sent (``raw``), so their JSON is the
server's own (numbers with every digit, fields this version does not know included). An entry
built without one gets JSON rebuilt from its parsed fields under the seed's names, and the
dialog says so.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from app.domain import format_decimal, format_timestamp
from app.domain.records import LedgerEntry, Order
from app.services.ledger_browser import LedgerRow
from app.services.order_feed import OrderRow
from app.ui.csv_export import export_value
from app.ui.fonts import number_font
from app.ui.widgets.copy_field import copy_text

Field = tuple[str, str]  # (wire name, exact text)


def to_json(value: Any, indent: int = 2, level: int = 0) -> str:
    """JSON text with Decimals written as exact numbers (never through a float)."""
    pad, inner = " " * (indent * level), " " * (indent * (level + 1))
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [
            f"{inner}{json.dumps(str(key))}: {to_json(item, indent, level + 1)}"
            for key, item in value.items()
        ]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(value, list | tuple):
        if not value:
            return "[]"
        items = [f"{inner}{to_json(item, indent, level + 1)}" for item in value]
        return "[\n" + ",\n".join(items) + f"\n{pad}]"
    if isinstance(value, Decimal):
        return format_decimal(value)
    if isinstance(value, datetime):
        return json.dumps(format_timestamp(value))
    return json.dumps(value, ensure_ascii=False)


# -- orders --------------------------------------------------------------------------------------

_ORDER_FIELDS = (
    "orderId",
    "ordering",
    "accountId",
    "userId",
    "email",
    "size",
    "source",
    "destination",
    "type",
    "submittedAt",
    "clientOrderId",
    "limit",
    "endAt",
)
_RESULT_FIELDS = (
    "status",
    "price",
    "invertedPrice",
    "executedAt",
    "updatedAt",
    "total",
    "error",
)


def order_fields(row: OrderRow) -> list[Field]:
    """Every field of the order: the parsed ones, then any other field the server sent."""
    order = row.order
    result = order.result
    client_id_name = "clientOrderId"
    if row.client_order_id and not order.client_order_id:
        client_id_name = "clientOrderId (from the order journal)"
    fields: list[Field] = [
        ("orderId", order.order_id),
        ("ordering", export_value(order.ordering)),
        ("accountId", order.account_id),
        ("userId", order.user_id),
        ("email", order.email),
        ("size", export_value(order.size)),
        ("source", order.source),
        ("destination", order.destination),
        ("type", order.type),
        ("submittedAt", export_value(order.submitted_at)),
        (client_id_name, row.client_order_id),
        ("limit", export_value(order.limit)),
        ("endAt", export_value(order.end_at)),
        ("result.status", result.status),
        ("result.price", export_value(result.price)),
        ("result.invertedPrice", export_value(result.inverted_price)),
        ("result.executedAt", export_value(result.executed_at)),
        ("result.updatedAt", export_value(result.updated_at)),
        ("result.total", export_value(result.total)),
        ("result.error", result.error),
    ]
    fields += _other_fields(order.raw, (*_ORDER_FIELDS, "result"), "")
    raw_result = order.raw.get("result")
    if isinstance(raw_result, dict):
        fields += _other_fields(raw_result, _RESULT_FIELDS, "result.")
    return fields


def _other_fields(raw: dict[str, Any], known: Sequence[str], prefix: str) -> list[Field]:
    """Fields this version does not parse, as JSON text."""
    return [
        (f"{prefix}{name}", value if isinstance(value, str) else to_json(value, indent=0))
        for name, value in raw.items()
        if name not in known
    ]


def order_json(order: Order) -> str:
    return to_json(order.raw)


# -- ledger --------------------------------------------------------------------------------------


def _ledger_values(entry: LedgerEntry) -> dict[str, Any]:
    """The entry's parsed values under the seed's field names, in its order: what both the
    rebuilt JSON and the fields list are made of."""
    return {
        "ordering": entry.ordering,
        "accountId": entry.account_id,
        "transactionId": entry.transaction_id,
        "asset": entry.asset,
        "amount": entry.amount,
        "eventType": entry.event_type,
        "subEventType": entry.sub_event_type,
        "eventTime": entry.event_time,
    }


def ledger_wire(entry: LedgerEntry) -> dict[str, Any]:
    """The entry under the seed's field names, rebuilt from the parsed values (an empty
    subEventType left out, as the service leaves it out)."""
    wire = _ledger_values(entry)
    if not entry.sub_event_type:
        del wire["subEventType"]
    wire["eventTime"] = format_timestamp(entry.event_time)
    return wire


def ledger_fields(row: LedgerRow) -> list[Field]:
    fields = [(name, export_value(value)) for name, value in _ledger_values(row.entry).items()]
    if row.balance is not None:
        fields.append(("balance after (computed)", export_value(row.balance)))
    return fields


# -- the dialog ----------------------------------------------------------------------------------


class RecordDetailsDialog(QDialog):
    """``fields`` in order, each with a Copy button; ``raw_json`` below with its own."""

    def __init__(
        self,
        title: str,
        fields: list[Field],
        raw_json: str,
        *,
        json_note: str = "",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("recordDetails")
        self.setWindowTitle(title)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.fields = list(fields)
        self.raw_json = raw_json
        mono = number_font()

        form_host = QWidget(self)
        form = QFormLayout(form_host)
        self.edits: dict[str, QLineEdit] = {}
        self.copy_buttons: dict[str, QPushButton] = {}
        for name, text in self.fields:
            edit = QLineEdit(text, form_host)
            edit.setReadOnly(True)
            edit.setFont(mono)
            edit.setCursorPosition(0)
            edit.setAccessibleName(name)
            edit.setObjectName(f"field:{name}")
            button = QPushButton("Copy", form_host)
            button.setObjectName(f"copy:{name}")
            button.setAccessibleName(f"Copy {name}")
            button.setToolTip(f"Copy {name} to the clipboard")
            button.clicked.connect(lambda _=False, value=text: copy_text(value))
            line = QHBoxLayout()
            line.addWidget(edit, 1)
            line.addWidget(button)
            form.addRow(name, line)
            self.edits[name] = edit
            self.copy_buttons[name] = button
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(form_host)

        self.json_view = QPlainTextEdit(raw_json, self)
        self.json_view.setObjectName("detailsJson")
        self.json_view.setReadOnly(True)
        self.json_view.setFont(mono)
        self.json_view.setAccessibleName("JSON")
        self.copy_json = QPushButton("Copy JSON", self)
        self.copy_json.setObjectName("copyJson")
        self.copy_json.clicked.connect(lambda: copy_text(self.raw_json))
        self.copy_all = QPushButton("Copy all fields", self)
        self.copy_all.setObjectName("copyAll")
        self.copy_all.clicked.connect(lambda: copy_text(self.fields_text()))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.close)
        buttons.addButton(self.copy_all, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.copy_json, QDialogButtonBox.ButtonRole.ActionRole)

        layout = QVBoxLayout(self)
        layout.addWidget(scroll, 3)
        layout.addWidget(QLabel(json_note or "JSON as the service sent it", self))
        layout.addWidget(self.json_view, 2)
        layout.addWidget(buttons)
        self.resize(640, 720)

    def fields_text(self) -> str:
        """Every field as ``name<TAB>value`` lines."""
        return "\n".join(f"{name}\t{text}" for name, text in self.fields)


def order_details(row: OrderRow, parent: QWidget | None = None) -> RecordDetailsDialog:
    """The wire's fields and JSON; the title says the order in pair terms (``Buy BTC/USD``)."""
    return RecordDetailsDialog(
        f"Order {row.order_id} · {row.terms.pair_side}",
        order_fields(row),
        order_json(row.order),
        parent=parent,
    )


def ledger_details(row: LedgerRow, parent: QWidget | None = None) -> RecordDetailsDialog:
    entry = row.entry
    return RecordDetailsDialog(
        f"Ledger entry {entry.ordering} ({entry.event_type}, {entry.asset})",
        ledger_fields(row),
        to_json(entry.raw or ledger_wire(entry)),
        json_note="" if entry.raw else "JSON rebuilt from the parsed entry under the seed's names",
        parent=parent,
    )
