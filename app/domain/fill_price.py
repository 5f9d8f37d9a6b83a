"""The price of a fill: one number and one text for every screen that shows it — the ticket's
outcome line, the orders table, the ledger, a notice, the command line — so a fill never shows
two prices.

Which number: where a size and a total give the fill (a filled order's ``size`` and
``result.total``, or a trade's two ledger legs), the price is the **average fill price**: the
quote amount over the base amount, QUOTE per BASE, exact to 50 digits (``MONEY_CONTEXT``). It is
what the trader actually paid or received per unit. The service's own rate (``result.price`` /
``result.invertedPrice``) is the book price the order met; it differs from the average by the
rounding of the total to the destination's decimals (the service keeps the dust), so it is not
shown as the price: the details and the wire's columns carry it. Only a filled order without a
usable total falls back to the service's rate, and then it is labelled "price", not "average
fill price".

Rounding, decided once: a fill price is shown rounded **half-even to the decimals of the pair's
price increment** (``Precision.price``), the rule of every price on screen; tables sort and
export the rounded number they show. Computations (basis points against the mid) use the exact
quotient, never the rounded text.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, localcontext

from app.domain.display import Precision, format_number
from app.domain.money import MONEY_CONTEXT, AssetPair

#: The label of a price that a total and a size give.
AVERAGE_LABEL = "average fill price"
#: The label of the service's own rate (no total to average).
RATE_LABEL = "price"


def average_price(base: Decimal, quote: Decimal) -> Decimal:
    """``quote`` paid or received over ``base`` bought or sold: QUOTE per BASE, exact to 50
    digits (ZeroDivisionError-free: callers pass a non-zero ``base``)."""
    with localcontext(MONEY_CONTEXT):
        return quote / base


@dataclass(frozen=True)
class FillPrice:
    """A fill's price on ``pair``: ``value`` exact in QUOTE per BASE; ``average`` when a total
    and a size gave it (else the service's rate)."""

    pair: AssetPair
    value: Decimal
    average: bool = True

    @property
    def label(self) -> str:
        """``average fill price`` or ``price``."""
        return AVERAGE_LABEL if self.average else RATE_LABEL

    def rounded(self, precision: Precision) -> Decimal:
        """The number shown: half-even at the pair's price increment (the module's rule)."""
        return Decimal(format_number(self.value, precision.price(str(self.pair)), grouping=False))

    def text(self, precision: Precision) -> str:
        """``90,893.91``: the rounded number with thousands grouped."""
        return format_number(self.value, precision.price(str(self.pair)))

    def words(self, precision: Precision) -> str:
        """``90,893.91 USD``: the number and the quote asset it is in."""
        return f"{self.text(precision)} {self.pair.quote}"

    def phrase(self, precision: Precision) -> str:
        """``an average fill price of 90,893.91 USD`` (``a price of …`` for a rate)."""
        article = "an" if self.average else "a"
        return f"{article} {self.label} of {self.words(precision)}"
