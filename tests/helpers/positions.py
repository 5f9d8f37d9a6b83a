"""Cost-basis arithmetic the position tests check against."""

from __future__ import annotations

from decimal import Decimal, localcontext

from app.domain.positions import BOOK_CONTEXT


def pro_rata(basis: Decimal, part: Decimal, whole: Decimal) -> Decimal:
    """The documented share a disposal takes from an average-cost pool: basis × part / whole,
    rounded half-even to 28 decimal places."""
    with localcontext(BOOK_CONTEXT):
        return (basis * part / whole).quantize(Decimal("1e-28"))
