"""Decimal to text for the screen: the right precision per asset and pair, grouped thousands,
no exponent, no float noise. Quantising happens here, for display only."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from functools import lru_cache

from app.domain.records import PairInfo

#: Display decimals when the server says nothing better (fiat and stablecoins in cents).
ASSET_DECIMALS = {"USD": 2, "EUR": 2, "GBP": 2, "USDT": 2, "USDC": 2, "BTC": 8, "ETH": 6, "SOL": 4}
DEFAULT_DECIMALS = 6
DASH = "—"


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

    def learn(self, infos: dict[str, PairInfo]) -> None:
        for name, info in infos.items():
            if info.price_increment is not None:
                self.prices[name] = decimals_of(info.price_increment)
            if info.base_decimals is not None:
                self.assets.setdefault(info.pair.base, info.base_decimals)
            if info.quote_decimals is not None:
                self.assets.setdefault(info.pair.quote, info.quote_decimals)

    def asset(self, code: str) -> int:
        return self.assets.get(code, DEFAULT_DECIMALS)

    def price(self, pair: str) -> int:
        if pair in self.prices:
            return self.prices[pair]
        quote = pair.split("/")[-1]
        return max(self.asset(quote), 2)

    def amount(self, value: Decimal | None, code: str) -> str:
        return format_number(value, self.asset(code))

    def price_text(self, value: Decimal | None, pair: str) -> str:
        return format_number(value, self.price(pair))
