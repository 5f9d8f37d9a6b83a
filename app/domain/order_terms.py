"""An order in the trader's terms, computed once per order for every view that lists orders
(the blotter, the fills' mids at fill, the command line): Buy or Sell of a pair's base, amounts
of the base and the quote, prices in QUOTE per BASE (design.md §8). Plain values, no I/O."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from app.domain.fill_price import FillPrice
from app.domain.money import Price
from app.domain.pair_terms import PairSide, Trade
from app.domain.records import Order


def fill_price(order: Order, known_pairs: Iterable[str] = ()) -> FillPrice | None:
    """The price every screen shows for ``order``'s fill (``app.domain.fill_price``): the
    average fill price from its size and total, else (a fill without a usable total) the
    service's rate in QUOTE per BASE; None for an order without either."""
    names = tuple(known_pairs)
    trade = Trade.of(order, names)
    if trade is not None:
        return trade.fill_price
    pair_side = PairSide.of(order.source, order.destination, names)
    rate = _pair_price(pair_side, order.result.price, order.result.inverted_price)
    return None if rate is None else FillPrice(pair_side.pair, rate, average=False)


@dataclass(frozen=True)
class OrderTerms:
    """An order as the trader reads it (design.md §8): Buy or Sell of a pair's base, amounts of
    the base and the quote, prices in QUOTE per BASE. Amounts are the wire's own (exact); the
    price is ``fill_price``: the average fill price from the size and the total, the one every
    screen shows (``fill`` carries its label and rounding)."""

    pair_side: PairSide
    base: Decimal | None  # sold (sell), or received once filled (buy)
    quote: Decimal | None  # spent (buy), or received once filled (sell)
    price: Decimal | None  # the fill's price, exact (``fill.value``)
    limit: Decimal | None  # the worst price accepted: least received (sell), most paid (buy)
    fill: FillPrice | None = None

    @classmethod
    def of(cls, order: Order, known_pairs: Iterable[str] = ()) -> OrderTerms:
        names = tuple(known_pairs)
        pair_side = PairSide.of(order.source, order.destination, names)
        total = order.result.total
        received = None if total is None else total.value
        sold = order.size.value
        base, quote = (sold, received) if pair_side.side == "sell" else (received, sold)
        fill = fill_price(order, names)
        limit = _pair_price(pair_side, order.limit, None)
        return cls(pair_side, base, quote, None if fill is None else fill.value, limit, fill)


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
