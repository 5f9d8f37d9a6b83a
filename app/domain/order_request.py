"""An order as it is asked of the service: one value, built once from the ticket, journaled and
sent, so the journal holds exactly what left the machine (design.md §6). No I/O."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, Literal

from app.domain.money import Price, format_decimal
from app.domain.timefmt import format_timestamp

OrderType = Literal["limit", "market"]


@dataclass(frozen=True)
class OrderRequest:
    """Sell ``size`` of ``source`` for ``destination``. ``limit`` is the wire's value, expressed
    SOURCE/DESTINATION (design.md §2): the least destination per source accepted."""

    order_type: OrderType
    source: str
    destination: str
    size: Decimal
    client_order_id: str
    limit: Price | None = None
    end_at: datetime | None = None

    def __post_init__(self) -> None:
        # A value that cannot be sent as it says must not exist: the journal would lie.
        if self.order_type not in ("limit", "market"):
            raise ValueError(f"order type is limit or market, not {self.order_type!r}")
        if self.order_type == "market" and (self.limit is not None or self.end_at is not None):
            raise ValueError("a market order takes no limit and no end time")
        if self.limit is not None and (self.limit.base, self.limit.quote) != (
            self.source,
            self.destination,
        ):
            raise ValueError(
                f"the wire limit is {self.source}/{self.destination}, not {self.limit.pair}"
            )

    def body(self, account_id: str) -> dict[str, Any]:
        """The JSON body, strings only (it encodes to the same text wherever it is encoded).
        The limit endpoint wants the account in the body as well as in the path."""
        body: dict[str, Any] = {}
        if self.order_type == "limit":
            body["accountId"] = {"value": account_id}
        body.update(
            type=self.order_type,
            source=self.source,
            destination=self.destination,
            size=format_decimal(self.size),
            clientOrderId=self.client_order_id,
        )
        if self.limit is not None:
            body["limit"] = format_decimal(self.limit.value)
        if self.end_at is not None:
            body["endAt"] = format_timestamp(self.end_at)
        return body

    def body_text(self, account_id: str) -> str:
        """The body as the bytes on the wire read (``json.dumps`` defaults, as the client)."""
        return json.dumps(self.body(account_id))
