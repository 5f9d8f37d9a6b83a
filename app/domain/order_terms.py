"""An order in the trader's terms, computed once per order for every view that lists orders
(the blotter, the fills' mids at fill, the command line): Buy or Sell of a pair's base, amounts
of the base and the quote, prices in QUOTE per BASE (design.md §8). Plain values, no I/O."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from app.domain.money import Price
from app.domain.pair_terms import PairSide, Trade
from app.domain.records import Order


@dataclass(frozen=True)
class OrderTerms:
    """An order as the trader reads it (design.md §8): Buy or Sell of a pair's base, amounts of
    the base and the quote, prices in QUOTE per BASE. Amounts are the wire's own (exact); a
    price is the service's number when it sent one in QUOTE per BASE (``price`` for a sell,
    ``invertedPrice`` for a buy), else the wire price inverted."""

    pair_side: PairSide
    base: Decimal | None  # sold (sell), or received once filled (buy)
    quote: Decimal | None  # spent (buy), or received once filled (sell)
    price: Decimal | None  # execution price
    limit: Decimal | None  # the worst price accepted: least received (sell), most paid (buy)

    @classmethod
    def of(cls, order: Order, known_pairs: Iterable[str] = ()) -> OrderTerms:
        names = tuple(known_pairs)
        pair_side = PairSide.of(order.source, order.destination, names)
        total = order.result.total
        received = None if total is None else total.value
        sold = order.size.value
        base, quote = (sold, received) if pair_side.side == "sell" else (received, sold)
        price = _pair_price(pair_side, order.result.price, order.result.inverted_price)
        if price is None:
            trade = Trade.of(order, names)
            price = None if trade is None else trade.price
        limit = _pair_price(pair_side, order.limit, None)
        return cls(pair_side, base, quote, price, limit)


def _pair_price(pair_side: PairSide, price: Price | None, inverse: Price | None) -> Decimal | None:
    """``price`` in QUOTE per BASE: the service's ``inverse`` when that is already the pair's
    way round (its own digits, not a division), else ``price`` turned round."""
    pair = pair_side.pair
    for candidate in (price, inverse):
        if candidate is not None and (candidate.base, candidate.quote) == (pair.base, pair.quote):
            return candidate.value
    if price is None or price.value.is_zero():
        return None
    try:
        return pair_side.price(price).value
    except ValueError:
        return None  # a price in assets this order does not trade: not shown in pair terms
