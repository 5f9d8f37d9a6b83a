"""What an asset is worth in another, at top-of-book mids: the one rule the balances total and
the order desk's fat-finger check share.

The direct pair, else the inverse pair, else one hop through USD, then USDT. None when no
watched market connects the two (the caller says so rather than guessing).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal, localcontext

from app.domain.money import MONEY_CONTEXT, divide
from app.domain.records import TopOfBook

HOP_ASSETS = ("USD", "USDT")


def _pair_rate(asset: str, currency: str, books: Mapping[str, TopOfBook]) -> Decimal | None:
    """Units of ``currency`` per one ``asset`` from one book: direct or inverse pair."""
    if asset == currency:
        return Decimal(1)
    direct = books.get(f"{asset}/{currency}")
    if direct is not None and direct.mid > 0:
        return direct.mid
    inverse = books.get(f"{currency}/{asset}")
    if inverse is not None and inverse.mid > 0:
        return divide(Decimal(1), inverse.mid)
    return None


def valuation_rate(asset: str, currency: str, books: Mapping[str, TopOfBook]) -> Decimal | None:
    """Units of ``currency`` one ``asset`` is worth at the mids of ``books``, or None."""
    rate = _pair_rate(asset, currency, books)
    if rate is not None:
        return rate
    for hop in HOP_ASSETS:
        if hop in (asset, currency):
            continue
        first = _pair_rate(asset, hop, books)
        second = _pair_rate(hop, currency, books)
        if first is not None and second is not None:
            with localcontext(MONEY_CONTEXT):
                return first * second
    return None


def value_in(
    amount: Decimal, asset: str, currency: str, books: Mapping[str, TopOfBook]
) -> Decimal | None:
    """``amount`` of ``asset`` in ``currency``, or None when no market values it."""
    rate = valuation_rate(asset, currency, books)
    if rate is None:
        return None
    with localcontext(MONEY_CONTEXT):
        return amount * rate
