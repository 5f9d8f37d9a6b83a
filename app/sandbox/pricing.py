"""What a trade of ``size`` source for destination fetches at the current top of book.

Rates are destination per unit of source (the seed's ``<p> SOURCE/DESTINATION``): selling the
base asset hits the bid; buying it with the quote asset lifts the ask, a rate of ``1/ask``.
Totals are rounded down to the destination's precision (the house keeps the dust).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_DOWN, Decimal, localcontext

from app.domain.money import MONEY_CONTEXT, divide, format_trimmed
from app.sandbox.catalogue import ASSETS, PairSpec, find_pair
from app.sandbox.market import Market, MarketQuote
from app.sandbox.wire import bad_request

DISPLAY_DIGITS = 12


def significant(value: Decimal, digits: int = DISPLAY_DIGITS) -> Decimal:
    """``value`` rounded to ``digits`` significant digits (for inverted prices)."""
    if value.is_zero():
        return value
    exponent = value.adjusted() - digits + 1
    with localcontext(MONEY_CONTEXT):
        return value.quantize(Decimal(1).scaleb(exponent))


@dataclass(frozen=True)
class Route:
    """The pair that carries a source→destination trade, and which way round."""

    spec: PairSpec
    source_is_base: bool
    source: str
    destination: str

    def rate(self, quote: MarketQuote) -> Decimal:
        return quote.bid if self.source_is_base else divide(Decimal(1), quote.ask)

    def total(self, size: Decimal, quote: MarketQuote) -> Decimal:
        with localcontext(MONEY_CONTEXT):
            raw = size * quote.bid if self.source_is_base else size / quote.ask
        return raw.quantize(ASSETS[self.destination].quantum, rounding=ROUND_DOWN)

    def marketable(self, limit: Decimal | None, quote: MarketQuote) -> bool:
        """Whether the market now pays at least ``limit`` destination per source."""
        if limit is None:
            return True
        with localcontext(MONEY_CONTEXT):
            if self.source_is_base:
                return quote.bid >= limit
            return quote.ask * limit <= 1

    def price_strings(self, quote: MarketQuote) -> tuple[str, str]:
        """``price`` (SOURCE/DESTINATION) and ``invertedPrice`` (DESTINATION/SOURCE)."""
        if self.source_is_base:
            price, inverted = quote.bid, significant(divide(Decimal(1), quote.bid))
        else:
            price, inverted = significant(divide(Decimal(1), quote.ask)), quote.ask
        return (
            f"{format_trimmed(price)} {self.source}/{self.destination}",
            f"{format_trimmed(inverted)} {self.destination}/{self.source}",
        )


def route_for(source: str, destination: str) -> Route:
    """The route between two known assets, or a 400 naming the missing market."""
    if source == destination:
        raise bad_request("source and destination must be different assets")
    found = find_pair(source, destination)
    if found is None:
        raise bad_request(f"No market between {source} and {destination}")
    spec, source_is_base = found
    return Route(spec, source_is_base, source, destination)


def current_quote(market: Market, route: Route) -> MarketQuote:
    return market.quote(route.spec.name)
