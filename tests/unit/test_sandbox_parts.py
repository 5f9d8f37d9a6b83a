"""Pieces of the sandbox that need no server: credit hours, the market walk, JSON encoding."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from app.sandbox.catalogue import PAIRS
from app.sandbox.config import CreditHours
from app.sandbox.market import Market
from app.sandbox.wire import decode_body, encode


class FakeClock:
    """A clock the test moves by hand (the market reads time through it)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_credit_hours_schedule() -> None:
    hours = CreditHours.parse("Mon-Fri 09:00-17:00 America/New_York")
    # 2026-11-23 is a Monday; 14:00 UTC = 09:00 New York (EST)
    assert hours.is_open(datetime(2026, 11, 23, 14, 0, tzinfo=UTC))
    assert not hours.is_open(datetime(2026, 11, 23, 13, 59, tzinfo=UTC))
    assert not hours.is_open(datetime(2026, 11, 23, 22, 0, tzinfo=UTC))
    assert not hours.is_open(datetime(2026, 11, 22, 15, 0, tzinfo=UTC))  # Sunday
    assert CreditHours.parse("always").is_open(datetime(2026, 11, 22, tzinfo=UTC))
    assert not CreditHours.parse("never").is_open(datetime(2026, 11, 23, 15, tzinfo=UTC))


@pytest.mark.parametrize(
    "text",
    [
        "sometimes",
        "Mon-Fri 9-5 UTC",
        "Mon-Fri 17:00-09:00 UTC",
        "Mon-Fri 09:00-17:00 Mars/Base",
        "Fun-Fri 09:00-17:00 UTC",
        "Mon-Fri 25:00-26:00 UTC",
    ],
)
def test_bad_credit_hours_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match=r"credit hours|weekday|time"):
        CreditHours.parse(text)


def test_market_is_reproducible_per_seed_and_moves() -> None:
    first, second, other = FakeClock(), FakeClock(), FakeClock()
    a, b, c = Market(7, 0.25, first), Market(7, 0.25, second), Market(8, 0.25, other)
    seen = set()
    for step in range(1, 40):
        for clock in (first, second, other):
            clock.now = step * 0.25
        assert a.quote("BTC/USD") == b.quote("BTC/USD")
        seen.add(a.quote("BTC/USD").bid)
    assert len(seen) > 10, "prices should move"
    assert a.quote("BTC/USD") != c.quote("BTC/USD")


def test_market_quotes_are_sane_on_every_pair() -> None:
    clock = FakeClock()
    market = Market(1, 0.25, clock)
    clock.now = 3600.0  # an hour of ticks
    for name, spec in PAIRS.items():
        quote = market.quote(name)
        assert Decimal(0) < quote.bid < quote.ask
        assert quote.bid % spec.tick == 0 and quote.ask % spec.tick == 0
        assert quote.bid_size > 0 and quote.ask_size > 0
        book = market.book(name, 10)
        assert [p for p, _ in book.bids] == sorted((p for p, _ in book.bids), reverse=True)
        assert [p for p, _ in book.asks] == sorted(p for p, _ in book.asks)
        assert book.bids[0][0] == quote.bid and book.asks[0][0] == quote.ask


def test_cross_rates_agree() -> None:
    clock = FakeClock()
    market = Market(3, 0.25, clock)
    clock.now = 100.0
    eth_usd = market.quote("ETH/USD")
    btc_usd = market.quote("BTC/USD")
    eth_btc = market.quote("ETH/BTC")
    implied = (eth_usd.bid + eth_usd.ask) / (btc_usd.bid + btc_usd.ask)
    mid = (eth_btc.bid + eth_btc.ask) / 2
    assert abs(mid - implied) / implied < Decimal("0.001")


def test_encode_keeps_every_digit() -> None:
    value = {"a": Decimal("0.1"), "b": [Decimal("1E-8"), 3, 'x"y'], "c": None, "d": True}
    text = encode(value)
    assert text == '{"a":0.1,"b":[0.00000001,3,"x\\"y"],"c":null,"d":true}'
    assert json.loads(text, parse_float=Decimal)["a"] == Decimal("0.1")


def test_decode_refuses_nan_and_garbage() -> None:
    assert decode_body(b'{"size": 0.1}') == {"size": Decimal("0.1")}
    for raw in (b'{"size": NaN}', b"{bad", b"", b'{"size": Infinity}'):
        with pytest.raises(Exception, match=r"JSON|empty|number"):
            decode_body(raw)
