"""An order between two assets as the trader reads it: Buy or Sell of a pair's base, prices in
QUOTE per BASE (design.md §8).

The wire speaks of a ``source`` sold for a ``destination`` and prices SOURCE/DESTINATION; the
trader speaks of a pair ``BASE/QUOTE``: buying BTC on BTC/USD spends USD (source USD,
destination BTC), selling BTC receives USD. ``PairSide`` maps one onto the other, ``Trade`` says
what a fill did in those terms, and every screen, notice and table row that a trader reads goes
through them. The wire's own view stays in the client, the details and the JSON.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from app.domain.display import Precision
from app.domain.fill_price import FillPrice, average_price
from app.domain.money import AssetPair, Price
from app.domain.records import Order
from app.domain.valuation import HOP_ASSETS

Side = Literal["buy", "sell"]
SIDES: tuple[Side, ...] = ("buy", "sell")


def pair_base(source: str, destination: str, known_pairs: Iterable[str] = ()) -> str:
    """The base asset of the pair that trades ``source`` against ``destination``: from the
    known pairs when one matches, else the asset that is not a quote-like currency."""
    names = set(known_pairs)
    if f"{source}/{destination}" in names:
        return source
    if f"{destination}/{source}" in names:
        return destination
    if source in HOP_ASSETS and destination not in HOP_ASSETS:
        return destination
    return source


@dataclass(frozen=True)
class PairSide:
    """Buy or sell ``pair``'s base: which asset the order sells and which it receives."""

    pair: AssetPair
    side: Side

    @classmethod
    def of(cls, source: str, destination: str, known_pairs: Iterable[str] = ()) -> PairSide:
        """The trader's view of an order selling ``source`` for ``destination``."""
        base = pair_base(source, destination, known_pairs)
        if base == source:
            return cls(AssetPair(source, destination), "sell")
        return cls(AssetPair(destination, source), "buy")

    @property
    def source(self) -> str:
        """The asset the order sells (the wire's ``source``)."""
        return self.pair.base if self.side == "sell" else self.pair.quote

    @property
    def destination(self) -> str:
        return self.pair.quote if self.side == "sell" else self.pair.base

    @property
    def verb(self) -> str:
        return "Buy" if self.side == "buy" else "Sell"

    def price(self, price: Price) -> Price:
        """Any price between the pair's two assets as QUOTE per BASE (inverted if needed)."""
        base, quote = self.pair.base, self.pair.quote
        if (price.base, price.quote) == (base, quote):
            return price
        if (price.base, price.quote) == (quote, base):
            return price.invert()
        raise ValueError(
            f"a price on {self.pair} is in {base}/{quote}, not {price.base}/{price.quote}"
        )

    def __str__(self) -> str:
        return f"{self.verb} {self.pair}"


@dataclass(frozen=True)
class Trade:
    """What a fill did, in pair terms: ``base`` bought or sold for ``quote``."""

    pair_side: PairSide
    base: Decimal
    quote: Decimal

    @property
    def price(self) -> Decimal:
        """The average fill price, QUOTE per BASE, exact (``app.domain.fill_price``)."""
        return average_price(self.base, self.quote)

    @property
    def fill_price(self) -> FillPrice:
        """The price every screen shows for this fill, with its label and rounding rule."""
        return FillPrice(self.pair_side.pair, self.price)

    @classmethod
    def of(cls, order: Order, known_pairs: Iterable[str] = ()) -> Trade | None:
        """The fill of ``order`` (None unless it filled with a known total)."""
        total = order.result.total
        if order.result.status != "filled" or total is None:
            return None
        if not order.size.value or not total.value:  # nothing traded: no price to speak of
            return None
        pair_side = PairSide.of(order.source, order.destination, known_pairs)
        sold, received = order.size.value, total.value
        if pair_side.side == "sell":
            return cls(pair_side, sold, received)
        return cls(pair_side, received, sold)

    def sentence(self, precision: Precision) -> str:
        """``Bought 0.11001837 BTC at an average fill price of 90,893.91 USD (spent 10,000.00
        USD)``: the price as every screen shows it (``FillPrice``)."""
        pair = self.pair_side.pair
        base = f"{precision.exact(self.base, pair.base)} {pair.base}"
        quote = f"{precision.exact(self.quote, pair.quote)} {pair.quote}"
        price = self.fill_price.phrase(precision)
        if self.pair_side.side == "buy":
            return f"Bought {base} at {price} (spent {quote})"
        return f"Sold {base} at {price} (received {quote})"
