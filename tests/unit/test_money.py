"""Amounts, prices and pairs: exact parsing, formatting and the FX convention."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.domain import Amount, AssetPair, ParseError, Price, format_trimmed, parse_decimal

decimals = st.decimals(
    min_value=Decimal("1e-18"), max_value=Decimal("1e12"), allow_nan=False, allow_infinity=False
)
assets = st.sampled_from(["BTC", "USD", "USDT", "ETH", "SOL", "EUR-X", "A.B"])


def test_amount_parses_exactly() -> None:
    amount = Amount.parse("0.1 BTC")
    assert amount == Amount(Decimal("0.1"), "BTC")
    assert amount.value + amount.value + amount.value == Decimal("0.3")


def test_price_follows_the_fx_convention() -> None:
    price = Price.parse("91234.5 BTC/USD")
    assert (price.base, price.quote, price.value) == ("BTC", "USD", Decimal("91234.5"))
    assert price.convert(Amount(Decimal("2"), "BTC")) == Amount(Decimal("182469.0"), "USD")
    inverted = price.invert()
    assert (inverted.base, inverted.quote) == ("USD", "BTC")
    assert inverted.value * Decimal("91234.5") == pytest.approx(Decimal(1), abs=Decimal("1e-40"))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "0.5",
        "0.5 BTC extra",
        "abc BTC",
        "NaN BTC",
        "Infinity BTC",
        "1e BTC",
        "0.5 B/C",
        None,
        5,
    ],
)
def test_bad_amounts_raise_parse_error(text: object) -> None:
    with pytest.raises(ParseError):
        Amount.parse(text)


@pytest.mark.parametrize("text", ["1 BTC", "1 BTC/BTC", "x BTC/USD", "1 BTC/USD/EUR", 3])
def test_bad_prices_raise_parse_error(text: object) -> None:
    with pytest.raises(ParseError):
        Price.parse(text)


def test_parse_decimal_refuses_floats_and_booleans() -> None:
    with pytest.raises(ParseError):
        parse_decimal(0.1, "size")
    with pytest.raises(ParseError):
        parse_decimal(True, "size")
    assert parse_decimal("1e-5", "size") == Decimal("0.00001")
    assert parse_decimal(7, "size") == Decimal(7)


def test_trimmed_format_never_uses_exponents() -> None:
    assert format_trimmed(Decimal("1E-8")) == "0.00000001"
    assert format_trimmed(Decimal("1E+2")) == "100"
    assert format_trimmed(Decimal("0.50000000")) == "0.5"
    assert format_trimmed(Decimal("-0.000")) == "0"


def test_pair_rejects_same_asset() -> None:
    assert AssetPair.parse("ETH/BTC").inverted() == AssetPair("BTC", "ETH")
    with pytest.raises(ParseError):
        AssetPair.parse("BTC/BTC")


@given(decimals, assets)
def test_amount_round_trips(value: Decimal, asset: str) -> None:
    amount = Amount(value, asset)
    assert Amount.parse(str(amount)) == amount


@given(decimals, assets, assets)
def test_price_round_trips_and_inverts_twice(value: Decimal, base: str, quote: str) -> None:
    if base == quote:
        return
    price = Price(value, base, quote)
    assert Price.parse(str(price)) == price
    twice = price.invert().invert()
    assert (twice.base, twice.quote) == (base, quote)
    assert abs(twice.value - value) <= value * Decimal("1e-45")
