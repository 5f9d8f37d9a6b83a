"""The algo ticket's Qt-free parts: the form turned into the exact spec, a side switch that never
keeps digits in another asset, and the preview's slices, trigger words, received amount and
what-if of the whole parent."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from app.domain import AssetPair
from app.domain.records import TopOfBook
from app.services.algos.form import AlgoForm, amount_words, switch_side
from app.services.algos.parents import ARMED_HERE, Child, Parent
from app.services.algos.preview import clip_slices, next_child_at, preview, twap_slices
from app.services.algos.specs import AlgoSpec
from app.services.ticket import TicketError

NOW = datetime(2026, 1, 5, 14, 0, tzinfo=UTC)
PAIR = "BTC/USD"
TOP = TopOfBook(
    AssetPair("BTC", "USD"), Decimal(89990), Decimal(2), Decimal(90010), Decimal(3), Decimal(20)
)


def twap(amount: str = "1000", slices: int = 4, minutes: str = "3") -> AlgoSpec:
    return AlgoForm(
        "twap", PAIR, "buy", amount, {"duration": minutes, "slices": str(slices)}
    ).build(NOW)


def test_the_form_builds_the_spec_the_trader_typed() -> None:
    spec = AlgoForm(
        "twap",
        PAIR,
        "buy",
        "10,000",
        {"duration": "5", "slices": "5", "randomise": "10", "price_limit": "91000"},
    ).build(NOW)
    assert spec == AlgoSpec(
        "twap",
        PAIR,
        "buy",
        Decimal(10000),
        price_limit=Decimal(91000),
        duration_seconds=Decimal(300),
        slices=5,
        randomise=Decimal("0.1"),
    )
    assert spec.source == "USD" and amount_words(PAIR, "buy") == "USD to spend"
    assert amount_words(PAIR, "sell") == "BTC to sell"


def test_a_start_typed_in_minutes_is_a_server_time() -> None:
    spec = AlgoForm("timed", PAIR, "sell", "0.5", {"start": "15"}).build(NOW)
    assert spec.start_at == NOW + timedelta(minutes=15) and spec.limit_price is None


@pytest.mark.parametrize(
    ("form", "field", "words"),
    [
        (AlgoForm("twap", PAIR, "buy", "", {}), "amount", "enter an amount"),
        (AlgoForm("twap", PAIR, "buy", "abc", {}), "amount", "is not a number"),
        (AlgoForm("twap", PAIR, "buy", "100", {"slices": "0"}), "slices", "1 to 10,000 slices"),
        (AlgoForm("twap", PAIR, "buy", "100", {"slices": "2.5"}), "slices", "whole number"),
        (AlgoForm("clip", PAIR, "sell", "1", {}), "display", "enter the clip size"),
        (AlgoForm("stop", PAIR, "sell", "1", {"trigger": "-5"}), "trigger", "greater than zero"),
        (AlgoForm("bracket", PAIR, "buy", "100", {}), "take_profit", "a take-profit, a stop"),
    ],
)
def test_a_form_that_cannot_be_sent_names_its_field(form: AlgoForm, field: str, words: str) -> None:
    with pytest.raises(TicketError) as caught:
        form.build(NOW)
    assert caught.value.field == field and words in caught.value.message


def test_a_side_switch_converts_at_the_ask_and_says_so() -> None:
    decimals = {"BTC": 8, "USD": 2}
    to_sell = switch_side("9001", PAIR, "sell", TOP, decimals)
    assert to_sell.text == "0.1" and "9001 USD" in to_sell.words and "0.1 BTC" in to_sell.words
    to_buy = switch_side("0.1", PAIR, "buy", TOP, decimals)
    assert to_buy.text == "9001" and "0.1 BTC" in to_buy.words and "9001 USD" in to_buy.words
    assert switch_side("0.1", PAIR, "buy", None, decimals).text == ""  # no price: cleared
    cleared = switch_side("x", PAIR, "buy", TOP, decimals)
    assert cleared.text == "" and "cleared" in cleared.words
    assert switch_side("", PAIR, "buy", TOP, decimals).text == ""


def test_twap_slices_are_the_engine_sizes_at_even_times() -> None:
    slices = twap_slices(twap("1000", 4, "3"), NOW)
    assert [s.size for s in slices] == [Decimal(250)] * 4
    assert [s.at for s in slices] == [NOW + timedelta(seconds=60 * i) for i in range(4)]
    uneven = twap_slices(twap("100", 3, "1"), NOW, decimals=2)
    assert [s.size for s in uneven] == [Decimal("33.33"), Decimal("33.33"), Decimal("33.34")]
    assert sum(s.size for s in uneven) == Decimal(100)


def test_twap_slices_start_at_the_start_time() -> None:
    start = NOW + timedelta(minutes=10)
    spec = AlgoSpec(
        "twap", PAIR, "buy", Decimal(100), slices=2, duration_seconds=Decimal(30), start_at=start
    )
    assert [s.at for s in twap_slices(spec, NOW)] == [start, start + timedelta(seconds=30)]


def test_clip_slices_take_the_display_size_then_the_rest() -> None:
    spec = AlgoSpec("clip", PAIR, "sell", Decimal("0.7"), display=Decimal("0.25"))
    assert [s.size for s in clip_slices(spec)] == [Decimal("0.25"), Decimal("0.25"), Decimal("0.2")]
    assert all(s.at is None for s in clip_slices(spec))


def test_the_preview_of_a_buy_receives_base_at_the_ask() -> None:
    spec = twap("9001", 10, "10")
    shown = preview(spec, TOP, None, now=NOW)
    assert shown.touch == Decimal(90010)
    assert shown.received is not None and shown.received.asset == "BTC"
    assert shown.received.value == Decimal(9001) / Decimal(90010)
    assert shown.received_at_limit is not None
    assert shown.received_at_limit.value < shown.received.value  # the collar can cost
    assert len(shown.slices) == 10 and shown.listed_slices()[3] is None  # first, …, last
    assert shown.trigger is None and shown.what_if is None


def test_a_stop_says_its_trigger_and_that_it_is_armed_here() -> None:
    spec = AlgoSpec("stop", PAIR, "sell", Decimal("0.5"), trigger=Decimal(85000))
    words = preview(spec, TOP, None, now=NOW).trigger
    assert words is not None
    assert "bid falls to 85000 or below (now 89990)" in words and ARMED_HERE in words
    assert "sells 0.5 BTC" in words
    up = AlgoSpec("take_profit", PAIR, "sell", Decimal("0.5"), trigger=Decimal(95000))
    assert "rises to 95000 or above" in (preview(up, TOP, None, now=NOW).trigger or "")


def _parent(
    spec: AlgoSpec, children: list[Child], slices_sent: int, last_slice_at: datetime | None = NOW
) -> Parent:
    parent = Parent("algo-1", spec, "acct", NOW, state="working")
    parent.children = children
    parent.slices_sent = slices_sent
    parent.last_slice_at = last_slice_at
    return parent


def test_next_child_time_of_a_twap() -> None:
    spec = twap("1000", 4, "3")
    child = Child("c1", "algo-1", Decimal(250), Decimal(90100), NOW, None, "filled")
    assert next_child_at(_parent(spec, [child], 1)) == NOW + timedelta(seconds=60)
    # a slice skipped (no price, beyond the limit) 60 s on: the next counts from it
    skipped = _parent(spec, [child], 2, NOW + timedelta(seconds=60))
    assert next_child_at(skipped) == NOW + timedelta(seconds=120)
    assert next_child_at(_parent(spec, [child], 1, None)) is None  # restored: goes when resumed
    stopped = _parent(spec, [child], 1)
    stopped.state = "stopped"
    assert next_child_at(stopped) is None
