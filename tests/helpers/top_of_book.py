"""Tops of book the tests build themselves, to feed views without a feed."""

from __future__ import annotations

from decimal import Decimal

from app.domain.money import AssetPair
from app.domain.records import TopOfBook
from app.ui.models.columns import column_numbers
from app.ui.models.top_of_book_model import (
    COLUMNS,
)


def top(pair: str, bid: str, ask: str) -> TopOfBook:
    """A top of book with sizes of one, for tests that feed views themselves."""
    one = Decimal(1)
    return TopOfBook(
        AssetPair.parse(pair), Decimal(bid), one, Decimal(ask), one, Decimal(ask) - Decimal(bid)
    )


#: Column numbers by key (the model's column spec list).
COL = column_numbers(COLUMNS)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def book(pair: str, bid: str, ask: str, bid_size: str = "1.5", ask_size: str = "2.25") -> TopOfBook:
    b, a = Decimal(bid), Decimal(ask)
    return TopOfBook(AssetPair.parse(pair), b, Decimal(bid_size), a, Decimal(ask_size), a - b)
