"""The order ticket as the trader filled it in: sell ``size`` of ``source`` for ``destination``,
market or limit (the limit in the trader's units, converted to the wire's SOURCE/DESTINATION by
``app.services.limit_prices.wire_limit``, design.md §2), and its validation."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from app.domain import Price, format_timestamp, utc_now
from app.domain.errors import InputError
from app.domain.money import parse_decimal
from app.domain.order_request import OrderRequest, OrderType
from app.services.limit_prices import wire_limit

__all__ = ["OrderType", "TicketError", "TicketForm", "TicketInput", "parse_number"]


class TicketError(InputError):
    """A ticket that cannot be sent as it is; ``field`` names the input to fix."""


@dataclass(frozen=True)
class TicketInput:
    """Sell ``size`` of ``source`` for ``destination``; ``limit`` in the trader's units."""

    source: str
    destination: str
    size: Decimal
    order_type: OrderType = "market"
    limit: Price | None = None
    end_at: datetime | None = None

    def validate(self, now: datetime | None = None) -> None:
        """Raise TicketError for the first problem found (field and message)."""
        if not self.size.is_finite() or self.size <= 0:
            raise TicketError("size", f"size must be greater than zero, not {self.size}")
        if self.source == self.destination:
            raise TicketError("destination", f"{self.source} is on both sides of the order")
        if self.order_type not in ("limit", "market"):
            raise TicketError("order_type", f"order type is limit or market, not {self.order_type}")
        if self.order_type == "market" and self.limit is not None:
            raise TicketError("limit", "a market order takes no limit price")
        if self.order_type == "market" and self.end_at is not None:
            raise TicketError("end_at", "an end time applies to limit orders only")
        if self.end_at is not None and self.end_at <= (now or utc_now()):
            raise TicketError("end_at", f"end time {format_timestamp(self.end_at)} is in the past")
        if self.limit is not None:
            try:
                wire_limit(self.source, self.destination, self.limit)
            except (ValueError, ArithmeticError) as exc:
                raise TicketError("limit", str(exc)) from None

    def wire_limit(self) -> Price | None:
        """The limit as sent: SOURCE/DESTINATION (design.md §2)."""
        return None if self.limit is None else wire_limit(self.source, self.destination, self.limit)

    def request(self, client_order_id: str) -> OrderRequest:
        """What sending this ticket under ``client_order_id`` asks of the service (the one
        place an order's body is made from a ticket: the preview and the desk agree)."""
        return OrderRequest(
            self.order_type,
            self.source,
            self.destination,
            self.size,
            client_order_id,
            self.wire_limit(),
            self.end_at,
        )


@dataclass(frozen=True)
class TicketForm:
    """The ticket's fields as the trader typed them. ``build`` turns them into a TicketInput or
    raises TicketError naming the field; the text itself is never changed (it stays on screen).

    Numbers may carry thousands separators (``90,000``) and spaces. A limit is a bare number
    in the pair's natural units (QUOTE per BASE, ``pair_base`` is the BASE), or a number with
    its units (``0.0000111 USD/BTC``), in either direction.
    """

    source: str
    destination: str
    size: str
    order_type: OrderType
    limit: str = ""
    end_at: datetime | None = None
    pair_base: str = ""

    def build(self) -> TicketInput:
        if not self.source or not self.destination:
            raise TicketError("source", "choose a pair to trade")
        size = _number(self.size, "size", "a size")
        limit: Price | None = None
        if self.order_type == "limit":
            if not self.limit.strip():
                raise TicketError("limit", "a limit order needs a limit price")
            limit = self._limit()
        end_at = self.end_at if self.order_type == "limit" else None
        ticket = TicketInput(self.source, self.destination, size, self.order_type, limit, end_at)
        ticket.validate()
        return ticket

    def _limit(self) -> Price:
        text = self.limit.strip()
        parts = text.split()
        if len(parts) == 2 and "/" in parts[1]:
            try:
                price = Price.parse(f"{_plain(parts[0])} {parts[1].upper()}", "limit")
            except ValueError:
                raise TicketError(
                    "limit", f"limit {text!r} is not '<price>' or '<price> <A>/<B>'"
                ) from None
            return price
        value = _number(text, "limit", "a limit price")
        base = self.pair_base or self.destination
        quote = self.source if base == self.destination else self.destination
        return Price(value, base, quote)


def _plain(text: str) -> str:
    return text.replace(",", "").replace("_", "").replace(" ", "")


def parse_number(text: str, field: str, what: str) -> Decimal:
    """A number as the trader typed it (separators allowed) or TicketError naming ``field``."""
    return _number(text, field, what)


def _number(text: str, field: str, what: str) -> Decimal:
    cleaned = _plain(text.strip())
    if not cleaned:
        raise TicketError(field, f"enter {what}")
    try:
        return parse_decimal(cleaned, field)
    except ValueError:
        raise TicketError(
            field, f"{what[2:] if what.startswith('a ') else what} {text.strip()!r} is not a number"
        ) from None
