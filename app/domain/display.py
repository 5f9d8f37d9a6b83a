"""Decimal to text for people: the right precision per asset and pair, grouped thousands, no
exponent, no float noise. Quantising happens here, for display only. One module for every view,
the CSV exports' display texts and the command line's tables.

Precision comes from the service: each listed pair's ``baseDecimals``, ``quoteDecimals`` and
``priceIncrement`` replace the conventional defaults below (which only stand in before the pairs
are read, or for an asset no pair mentions). An amount is shown exactly: never with fewer
decimals than its asset has, and never rounded (so never more than is held); trailing zeros
beyond the asset's decimals are not added.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from functools import lru_cache

from app.domain.records import PairInfo

#: Display decimals when the server says nothing better (fiat and stablecoins in cents).
ASSET_DECIMALS = {"USD": 2, "EUR": 2, "GBP": 2, "USDT": 2, "USDC": 2, "BTC": 8, "ETH": 6, "SOL": 4}
DEFAULT_DECIMALS = 6
DASH = "—"


def digits_of(value: Decimal) -> int:
    """Decimal places ``value`` is written with: 1.50 -> 2, 175.03234278 -> 8, 5 -> 0."""
    exponent = value.as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def decimals_of(step: Decimal) -> int:
    """Decimal places of an increment: 0.01 -> 2, 0.0000001 -> 7, 5 -> 0."""
    exponent = step.normalize().as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def format_number(
    value: Decimal | None, places: int, *, grouping: bool = True, signed: bool = False
) -> str:
    """``value`` rounded half-even to ``places`` decimals; ``—`` for None."""
    if value is None:
        return DASH
    quantum = _QUANTA.get(places)
    if quantum is None:
        quantum = _QUANTA[places] = Decimal(1).scaleb(-places)
    try:
        rounded = value.quantize(quantum, rounding=ROUND_HALF_EVEN)
    except InvalidOperation:
        rounded = value
    if rounded.is_zero():
        rounded = abs(rounded)
    return format(rounded, _spec(places, grouping, signed))


#: ``10 ** -places`` by places: the watchlist formats thousands of numbers a second.
_QUANTA: dict[int, Decimal] = {}


@lru_cache(maxsize=256)
def _spec(places: int, grouping: bool, signed: bool) -> str:
    return f"{'+' if signed else ''}{',' if grouping else ''}.{places}f"


@dataclass
class Precision:
    """Display precision, refined by the server's pair information when it has any."""

    assets: dict[str, int] = field(default_factory=lambda: dict(ASSET_DECIMALS))
    prices: dict[str, int] = field(default_factory=dict)
    #: ``price`` by pair, remembered: the watchlist asks on every tick; ``learn``,
    #: the one writer of ``assets`` and ``prices``, forgets it.
    _price_places: dict[str, int] = field(default_factory=dict, repr=False, compare=False)

    def learn(self, infos: dict[str, PairInfo]) -> None:
        """The service's word replaces the defaults (it knows its assets' real decimals); where
        two pairs disagree on an asset, the finer one wins (nothing held is ever hidden)."""
        learned: dict[str, int] = {}
        for name, info in infos.items():
            if info.price_increment is not None:
                self.prices[name] = decimals_of(info.price_increment)
            for asset, places in (
                (info.pair.base, info.base_decimals),
                (info.pair.quote, info.quote_decimals),
            ):
                if places is not None:
                    learned[asset] = max(places, learned.get(asset, 0))
        self.assets.update(learned)
        # A new memo, not a cleared one: a reader on another thread (the audit dock's page) that
        # read the old figures writes them into the old memo only.
        self._price_places = {}

    def asset(self, code: str) -> int:
        return self.assets.get(code, DEFAULT_DECIMALS)

    def exact(self, value: Decimal | None, code: str) -> str:
        """``value`` of ``code`` with at least the asset's decimals and every decimal it has:
        a balance is never rounded (never shown as more, or less, than it is)."""
        if value is None:
            return DASH
        return format_number(value, max(self.asset(code), digits_of(value)))

    def price(self, pair: str) -> int:
        memo = self._price_places
        places = memo.get(pair)
        if places is None:
            if pair in self.prices:
                places = self.prices[pair]
            else:
                places = max(self.asset(pair.split("/")[-1]), 2)
            memo[pair] = places
        return places

    def amount(self, value: Decimal | None, code: str) -> str:
        return format_number(value, self.asset(code))

    def price_text(self, value: Decimal | None, pair: str) -> str:
        return format_number(value, self.price(pair))
