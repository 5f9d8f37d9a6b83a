"""What a fill cost against the market: the top-of-book mid at the time it filled, and the price's
distance from that mid in basis points (per-trade economics in the blotter).

Sign: **positive is a cost to the trader, for a Buy and a Sell alike** — a Buy paid above the mid,
a Sell received below it; negative is a price better than the mid::

    Buy:  (price − mid) / mid × 10,000
    Sell: (mid − price) / mid × 10,000

For an RFQ fill the number is the quote's markup against the mid (the dealer's markup over the
book plus half the book's spread); for a limit or market order, its slippage against the mid
(half the spread for a marketable order filled at the top of book). One measure for every fill,
so fills of any kind compare.

Exact: the mid is ``(bid + ask) / 2`` and the basis points are computed in ``MONEY_CONTEXT``
(50 digits) from the execution price in QUOTE per BASE; only the display rounds (1 decimal,
``BPS_SHOWN``; the export keeps ``BPS_EXPORTED``). Where no mid is known for the fill's moment,
``missing`` says why and no number is made up.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, localcontext
from functools import cached_property
from typing import Literal

from app.domain.money import MONEY_CONTEXT

Side = Literal["buy", "sell"]
BPS = Decimal(10_000)
#: Decimals the blotter shows basis points with.
BPS_SHOWN = 1
#: Decimals the CSV export and the details write basis points with (a ten-thousandth of a
#: basis point: far finer than any price increment moves them).
BPS_EXPORTED = 4


def bps_against_mid(side: Side, price: Decimal, mid: Decimal) -> Decimal:
    """Basis points ``price`` is worse for the trader than ``mid`` (negative: better)."""
    if mid <= 0:
        raise ValueError("a mid must be a positive price")
    with localcontext(MONEY_CONTEXT):
        cost = price - mid if side == "buy" else mid - price
        return cost * BPS / mid


@dataclass(frozen=True)
class MidSample:
    """A top of book the terminal received (its time in server time), as it was stored."""

    at: datetime
    bid: Decimal
    ask: Decimal

    @property
    def mid(self) -> Decimal:
        with localcontext(MONEY_CONTEXT):
            return (self.bid + self.ask) / 2


@dataclass(frozen=True)
class FillEconomics:
    """One fill against the mid of its moment. ``sample`` is None when no mid is known; then
    ``missing`` says why in the trader's words. ``final`` is False while a nearer stored mid
    may still arrive (a fill of the last few seconds): the figure may then still change."""

    side: Side
    rfq: bool
    price: Decimal | None  # execution price, QUOTE per BASE
    filled_at: datetime | None
    sample: MidSample | None
    missing: str = ""
    final: bool = True

    @property
    def mid(self) -> Decimal | None:
        return None if self.sample is None else self.sample.mid

    @cached_property
    def bps(self) -> Decimal | None:
        """Exact basis points against the mid, positive a cost (None without a mid)."""
        mid = self.mid
        if mid is None or self.price is None:
            return None
        return bps_against_mid(self.side, self.price, mid)

    @property
    def kind(self) -> str:
        """``markup`` for an RFQ fill (the dealer's price), ``slippage`` for an order's."""
        return "markup" if self.rfq else "slippage"

    @property
    def sample_offset(self) -> float | None:
        """Seconds from the fill to the mid's sample (negative: the sample came before)."""
        if self.sample is None or self.filled_at is None:
            return None
        return (self.sample.at - self.filled_at).total_seconds()
