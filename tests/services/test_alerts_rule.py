"""The rule of a price alert (``app.domain.alerts``) price by price, what the trader may type as
a level, and the alert's round trip through the text the settings file keeps."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from app.domain.alerts import (
    AlertInputError,
    Condition,
    PriceAlert,
    PriceSource,
    Repeat,
    Side,
    parse_level,
)

AT = datetime(2026, 11, 24, 6, 0, 0, 123000, tzinfo=UTC)


def fires(alert: PriceAlert, prices: list[str]) -> tuple[list[bool], PriceAlert]:
    """Whether ``alert`` fired at each price, and the alert after the last."""
    fired = []
    for price in prices:
        alert, now = alert.observe(Decimal(price), AT)
        fired.append(now)
    return fired, alert


def make(condition: Condition, repeat: Repeat = Repeat.EVERY_TIME) -> PriceAlert:
    return PriceAlert("a1", "BTC/USD", PriceSource.MID, condition, Decimal(100), repeat)


@pytest.mark.parametrize(
    ("condition", "prices", "expected"),
    [
        # at or above: due when it gets there, again only after going back below
        (Condition.ABOVE, ["99", "100", "101", "99.99", "100"], [0, 1, 0, 0, 1]),
        (Condition.ABOVE, ["105", "106"], [1, 0]),  # already above when made: due at once
        (Condition.BELOW, ["101", "100", "99", "100.01", "90"], [0, 1, 0, 0, 1]),
        # crossing: the first price only tells the side; at the level is on neither side
        (
            Condition.CROSSING,
            ["99", "100", "99", "100", "101", "100", "101", "99"],
            [0, 0, 0, 0, 1, 0, 0, 1],
        ),
        (Condition.CROSSING, ["100", "101", "99"], [0, 0, 1]),
    ],
)
def test_every_time_alerts_fire_on_each_new_crossing(
    condition: Condition, prices: list[str], expected: list[int]
) -> None:
    fired, alert = fires(make(condition), prices)
    assert fired == [bool(e) for e in expected]
    assert alert.armed and alert.fired == sum(expected)


def test_a_once_alert_disarms_and_rearming_forgets_the_side() -> None:
    fired, alert = fires(make(Condition.ABOVE, Repeat.ONCE), ["99", "101", "99", "101"])
    assert fired == [False, True, False, False]
    assert not alert.armed and alert.fired == 1 and alert.last_fired_price == Decimal(101)
    fired, alert = fires(alert.rearmed(), ["102"])  # still above: due at once
    assert fired == [True] and alert.fired == 2
    crossing = make(Condition.CROSSING, Repeat.ONCE)
    fired, crossing = fires(crossing, ["99", "101", "99"])
    assert fired == [False, True, False]
    fired, crossing = fires(crossing.rearmed(), ["99", "101"])
    assert fired == [False, True]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "Enter a price in USD per BTC."),
        ("abc", "'abc' is not a price: write a number such as 1234.5 (USD per BTC)."),
        ("1e999", "'1e999' is not a price: write a number such as 1234.5 (USD per BTC)."),
        ("-5", "A price is greater than zero, not -5."),
        ("0", "A price is greater than zero, not 0."),
        ("91000.123", "BTC/USD prices have at most 2 decimals; 91000.123 has more (USD per BTC)."),
    ],
)
def test_a_level_that_cannot_be_used_is_refused_in_words(text: str, message: str) -> None:
    with pytest.raises(AlertInputError) as refused:
        parse_level(text, "BTC/USD", Decimal("0.01"), 2)
    assert refused.value.field == "price"
    assert refused.value.message == message


def test_levels_read_as_typed() -> None:
    assert parse_level(" 91,000.50 ", "BTC/USD", Decimal("0.01"), 2) == Decimal("91000.50")
    assert parse_level("91000.10", "BTC/USD", None, 1) == Decimal("91000.10")  # zeros are free
    with pytest.raises(AlertInputError, match=r"steps of 0\.05 USD"):
        parse_level("10.12", "SOL/USD", Decimal("0.05"), 2)
    assert parse_level("10.15", "SOL/USD", Decimal("0.05"), 2) == Decimal("10.15")


def test_an_alert_survives_its_text_form_exactly() -> None:
    alert = PriceAlert(
        "a1",
        "ETH/BTC",
        PriceSource.ASK,
        Condition.CROSSING,
        Decimal("0.03125001"),
        Repeat.ONCE,
        armed=False,
        side=Side.ABOVE,
        fired=3,
        last_fired_at=AT,
        last_fired_price=Decimal("0.03125002"),
    )
    assert PriceAlert.from_fields(alert.to_fields()) == alert
    fresh = make(Condition.BELOW)
    assert PriceAlert.from_fields(fresh.to_fields()) == fresh
    with pytest.raises(ValueError, match="sideways"):
        PriceAlert.from_fields({**fresh.to_fields(), "condition": "sideways"})
