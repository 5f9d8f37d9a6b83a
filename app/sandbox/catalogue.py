"""Assets and pairs the sandbox trades, with their precisions and reference price levels."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from app.domain import AssetPair


@dataclass(frozen=True)
class AssetSpec:
    code: str
    #: Decimal places a balance or order size may have in this asset.
    decimals: int
    #: Reference value in USD around which the simulated price walks.
    usd_anchor: Decimal
    #: Daily-ish volatility scale of the walk, in millionths per tick (0 keeps it fixed).
    step_ppm: int
    is_fiat: bool = False

    @property
    def quantum(self) -> Decimal:
        return Decimal(1).scaleb(-self.decimals)


@dataclass(frozen=True)
class PairSpec:
    pair: AssetPair
    #: Price increment, in QUOTE per BASE.
    tick: Decimal
    #: Quoted spread in basis points of the mid (at least one tick).
    spread_bps: Decimal
    #: Typical top-of-book size, in BASE.
    typical_size: Decimal

    @property
    def name(self) -> str:
        return str(self.pair)


ASSETS: dict[str, AssetSpec] = {
    spec.code: spec
    for spec in (
        AssetSpec("USD", 2, Decimal(1), 0, is_fiat=True),
        AssetSpec("USDT", 6, Decimal(1), 3),
        AssetSpec("BTC", 8, Decimal(91000), 150),
        AssetSpec("ETH", 8, Decimal(3100), 200),
        AssetSpec("SOL", 6, Decimal(140), 250),
    )
}

PAIRS: dict[str, PairSpec] = {
    spec.name: spec
    for spec in (
        PairSpec(AssetPair("BTC", "USD"), Decimal("0.01"), Decimal("1.0"), Decimal("2.5")),
        PairSpec(AssetPair("ETH", "USD"), Decimal("0.01"), Decimal("1.5"), Decimal("40")),
        PairSpec(AssetPair("SOL", "USD"), Decimal("0.001"), Decimal("3"), Decimal("600")),
        PairSpec(AssetPair("BTC", "USDT"), Decimal("0.01"), Decimal("1.2"), Decimal("3")),
        PairSpec(AssetPair("ETH", "USDT"), Decimal("0.01"), Decimal("1.5"), Decimal("35")),
        PairSpec(AssetPair("ETH", "BTC"), Decimal("0.000001"), Decimal("2.5"), Decimal("30")),
        PairSpec(AssetPair("SOL", "BTC"), Decimal("0.0000001"), Decimal("4"), Decimal("500")),
        PairSpec(AssetPair("USDT", "USD"), Decimal("0.0001"), Decimal("1"), Decimal("250000")),
    )
}


def find_pair(source: str, destination: str) -> tuple[PairSpec, bool] | None:
    """The pair that trades ``source`` against ``destination`` and whether source is its base."""
    direct = PAIRS.get(f"{source}/{destination}")
    if direct is not None:
        return direct, True
    reverse = PAIRS.get(f"{destination}/{source}")
    if reverse is not None:
        return reverse, False
    return None
