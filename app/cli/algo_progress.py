"""How a parent reads on the command line: one progress line per change (a log reads it line by
line, so no spinner), a JSON object per change for scripts, and the stored parents as a table.

Amounts are in the asset sold, shown exact at least to the asset's decimals; the average price
is QUOTE per BASE rounded at the pair's price increment, as on every screen. JSON carries the
same figures as exact decimal strings, never floats.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from app.cli.output import TextColumn, table
from app.domain import format_decimal, format_timestamp
from app.domain.display import Precision
from app.domain.fill_price import FillPrice
from app.services.algos.parents import Parent


@dataclass(frozen=True)
class Progress:
    """What a progress line says about a parent; two equal ones print once."""

    id: str
    label: str
    pair: str
    side: str
    state: str
    note: str
    filled: Decimal
    target: Decimal
    asset: str
    received: Decimal
    received_asset: str
    children: int
    children_filled: int
    children_out: int  # being sent, resting or unknown
    children_resting: int
    children_unknown: int  # the answer lost
    children_empty: int  # ended without filling (refused, expired)
    out: Decimal  # in flight and unknown, asset sold
    average: Decimal | None  # QUOTE per BASE, at the pair's price increment

    @classmethod
    def of(cls, parent: Parent, precision: Precision) -> Progress:
        spec = parent.spec
        price = parent.average_price()
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
            parent.received,
            spec.destination,
            len(parent.children),
            _count(parent, "filled"),
            sum(1 for child in parent.children if child.open),
            _count(parent, "resting"),
            _count(parent, "unknown"),
            _count(parent, "empty"),
            parent.in_flight + parent.unknown,
            None if price is None else FillPrice(spec.pair_side.pair, price).rounded(precision),
        )

    def text(self, precision: Precision) -> str:
        """``TWAP algo-… working: filled 250.00 / 1,000.00 USD, children 1 (1 filled, 0 out),
        average 91,234.56 USD per BTC``."""
        amount = precision.exact(self.filled, self.asset)
        target = precision.exact(self.target, self.asset)
        counts = [f"{self.children_filled} filled", f"{self.children_out} out"]
        counts += [
            f"{count} {word}"
            for count, word in (
                (self.children_resting, "resting"),
                (self.children_unknown, "answer lost"),
                (self.children_empty, "not filled"),
            )
            if count
        ]
        words = (
            f"{self.label} {self.id} {self.state}: filled {amount} / {target} {self.asset}, "
            f"children {self.children} ({', '.join(counts)})"
        )
        if self.average is not None:
            base, quote = self.pair.split("/")
            words += f", average {format(self.average, ',f')} {quote} per {base}"
        return words + (f" — {self.note}" if self.note else "")

    def data(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "algo": self.label,
            "pair": self.pair,
            "side": self.side,
            "state": self.state,
            "note": self.note,
            "filled": format_decimal(self.filled),
            "target": format_decimal(self.target),
            "asset": self.asset,
            "received": format_decimal(self.received),
            "receivedAsset": self.received_asset,
            "children": self.children,
            "childrenFilled": self.children_filled,
            "childrenOut": self.children_out,
            "childrenResting": self.children_resting,
            "childrenUnknown": self.children_unknown,
            "childrenNotFilled": self.children_empty,
            "out": format_decimal(self.out),
            "averagePrice": None if self.average is None else format_decimal(self.average),
        }


def _count(parent: Parent, status: str) -> int:
    return sum(1 for child in parent.children if child.status == status)


def children_data(parent: Parent) -> list[dict[str, Any]]:
    """Each child as far as it is known (the wire's clientOrderId and orderId to find it)."""
    return [
        {
            "clientOrderId": child.client_order_id,
            "orderId": child.order_id,
            "status": child.status,
            "size": format_decimal(child.size),
            "filled": format_decimal(child.filled),
            "received": format_decimal(child.received),
            "limit": format_decimal(child.limit),
            "sentAt": format_timestamp(child.sent_at),
            "endAt": None if child.end_at is None else format_timestamp(child.end_at),
            "detail": child.detail,
        }
        for child in parent.children
    ]


def listing_data(parents: Sequence[Parent], precision: Precision) -> dict[str, Any]:
    return {
        "parents": [
            {
                **Progress.of(parent, precision).data(),
                "createdAt": format_timestamp(parent.created_at),
                "childOrders": children_data(parent),
            }
            for parent in parents
        ]
    }


LIST_COLUMNS = (
    TextColumn("ID"),
    TextColumn("ALGO"),
    TextColumn("PAIR"),
    TextColumn("SIDE"),
    TextColumn("STATE"),
    TextColumn("FILLED", numeric=True),
    TextColumn("TARGET", numeric=True),
    TextColumn("ASSET"),
    TextColumn("CHILDREN", numeric=True),
    TextColumn("CREATED"),
    TextColumn("NOTE"),
)


def listing_text(parents: Sequence[Parent], precision: Precision) -> str:
    if not parents:
        return "No stored parents for this account."
    rows = []
    for parent in parents:
        spec = parent.spec
        rows.append(
            (
                parent.id,
                spec.info.label,
                spec.pair,
                spec.side.capitalize(),
                parent.state,
                precision.exact(parent.filled, spec.source),
                precision.exact(parent.target, spec.source),
                spec.source,
                len(parent.children),
                parent.created_at,
                parent.note,
            )
        )
    return table(LIST_COLUMNS, rows)
