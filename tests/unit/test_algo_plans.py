"""The algos' decisions on plain values: the overfill rule, slices, triggers, prices, the credit
window and the spec's round trip through JSON."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.domain import AssetPair, Price
from app.domain.records import TopOfBook
from app.services.algos.credit_retry import retry_spec
from app.services.algos.credit_window import CreditWindow
from app.services.algos.parents import Child, Parent
from app.services.algos.plans import (
    Finish,
    Fire,
    Moment,
    Send,
    Skip,
    Track,
    Wait,
    crossed,
    decide,
    marketable_limit,
    slice_interval,
)
from app.services.algos.specs import AlgoSpec
from app.services.ticket import TicketInput

NOW = datetime(2026, 11, 27, 15, 0, tzinfo=UTC)  # a Friday
PAIR = "BTC/USD"


def top(bid: str, ask: str, size: str = "5") -> TopOfBook:
    b, a = Decimal(bid), Decimal(ask)
    return TopOfBook(AssetPair("BTC", "USD"), b, Decimal(size), a, Decimal(size), a - b)


BOOK = top("89990", "90010")
NUMBERS = itertools.count()


def parent(spec: AlgoSpec, *children: Child) -> Parent:
    made = Parent("p1", spec, "acct", NOW, "working")
    made.children = list(children)
    return made


def child(size: str, status: str = "sending", filled: str = "0") -> Child:
    made = Child(f"c{next(NUMBERS)}", "p1", Decimal(size), Decimal(1), NOW, None)
    return made.ended(status, filled=Decimal(filled))  # type: ignore[arg-type]


def twap(amount: str = "1000", slices: int = 3, **extra: object) -> AlgoSpec:
    return AlgoSpec(
        "twap",
        PAIR,
        "buy",
        Decimal(amount),
        slices=slices,
        duration_seconds=Decimal(60),
        **extra,  # type: ignore[arg-type]
    )


# -- the overfill rule ---------------------------------------------------------------------------


def test_room_is_the_target_less_filled_in_flight_and_unknown() -> None:
    p = parent(twap(), child("100", "filled", "100"), child("200", "resting"), child("50", "empty"))
    assert (p.filled, p.in_flight, p.unknown, p.room) == tuple(map(Decimal, (100, 200, 0, 700)))
    p.add_child(child("300", "unknown"))
    assert (p.unknown, p.room, p.blocked) == (Decimal(300), Decimal(400), True)


def test_an_unknown_child_blocks_every_further_child_of_its_parent() -> None:
    p = parent(twap(), child("10", "unknown"))
    decision = decide(p, Moment(BOOK, NOW))
    assert isinstance(decision, Wait) and "settled" in decision.why


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(["filled", "empty", "unknown", "resting"]), min_size=1, max_size=40),
    st.integers(1, 12),
)
def test_no_sequence_of_answers_lets_a_twap_send_past_its_target(
    outcomes: list[str], slices: int
) -> None:
    spec = twap("1000", slices)
    p = parent(spec)
    since: float | None = None
    for outcome in outcomes:
        decision = decide(p, Moment(BOOK, NOW, since))
        if isinstance(decision, Send):
            p.slices_sent += 1
            filled = str(decision.size) if outcome == "filled" else "0"
            p.add_child(
                Child(f"c{len(p.children)}", "p1", decision.size, decision.limit, NOW, None).ended(
                    outcome,  # type: ignore[arg-type]
                    filled=Decimal(filled),
                )
            )
        elif isinstance(decision, Skip):
            p.slices_sent += 1
        else:
            # a wait: the open children end (the unknown ones settle as nothing, say)
            p.children = [c.ended("empty") if c.open else c for c in p.children]
        since = 1e9  # every slice is due
        assert p.filled + p.in_flight + p.unknown <= spec.amount
    assert sum((c.size for c in p.children if c.status != "empty"), Decimal(0)) <= spec.amount


# -- TWAP ----------------------------------------------------------------------------------------


def test_twap_slices_share_what_is_left_and_the_last_takes_the_rest() -> None:
    spec = twap("1000", 3)
    p = parent(spec)
    first = decide(p, Moment(BOOK, NOW, None))
    assert isinstance(first, Send) and first.size == Decimal("333.33333333") and first.slice
    p.add_child(child("333.33333333", "filled", "333.33333333"))
    p.slices_sent = 1
    assert isinstance(decide(p, Moment(BOOK, NOW, 10.0)), Wait)  # 30 s apart: not yet due
    second = decide(p, Moment(BOOK, NOW, 30.0))
    assert isinstance(second, Send) and second.size == Decimal("333.33333333")
    p.add_child(child("333.33333333", "filled", "333.33333333"))
    p.slices_sent = 2
    last = decide(p, Moment(BOOK, NOW, 30.0))
    assert isinstance(last, Send) and last.size == Decimal("333.33333334")


def test_randomised_intervals_stay_within_their_share_and_repeat_with_the_seed() -> None:
    spec = twap("1000", 11, randomise=Decimal("0.2"), seed=7)
    intervals = [slice_interval(spec, i) for i in range(1, 11)]
    assert all(4.8 <= value <= 7.2 for value in intervals)  # 6 s ± 20 %
    assert len(set(intervals)) > 1
    assert intervals == [slice_interval(spec, i) for i in range(1, 11)]


def test_participation_caps_a_slice_at_a_share_of_the_shown_size() -> None:
    spec = twap("1000000", 2, participation=Decimal("0.1"))
    decision = decide(parent(spec), Moment(top("89990", "90010", "0.5"), NOW))
    assert isinstance(decision, Send) and decision.size == Decimal("4500.5")  # 10 % of 0.5 BTC


def test_a_slice_beyond_the_price_limit_is_carried_to_the_next() -> None:
    spec = twap("1000", 3, price_limit=Decimal("90000"))
    decision = decide(parent(spec), Moment(BOOK, NOW))
    assert isinstance(decision, Skip) and "price limit" in decision.why


# -- prices --------------------------------------------------------------------------------------


def test_a_marketable_limit_is_the_touch_plus_the_collar_never_past_the_price_limit() -> None:
    buy = AlgoSpec("clip", PAIR, "buy", Decimal(1), display=Decimal(1), collar_bps=Decimal(10))
    assert marketable_limit(buy, BOOK, Decimal("0.01")) == Decimal("90100.01")
    capped = AlgoSpec(
        "clip", PAIR, "buy", Decimal(1), display=Decimal(1), price_limit=Decimal("90050")
    )
    assert marketable_limit(capped, BOOK, Decimal("0.01")) == Decimal("90050")
    sell = AlgoSpec("clip", PAIR, "sell", Decimal(1), display=Decimal(1), collar_bps=Decimal(10))
    assert marketable_limit(sell, BOOK, Decimal("0.01")) == Decimal("89900.01")
    assert marketable_limit(sell, top("80000", "80010"), None) == Decimal("79920")


# -- triggers ------------------------------------------------------------------------------------

TRIGGERS = [
    # kind, side, price, fires
    ("stop", "sell", "89000", True),
    ("stop", "sell", "89001", False),
    ("stop", "buy", "89000", True),
    ("stop", "buy", "88999", False),
    ("take_profit", "sell", "89000", True),
    ("take_profit", "sell", "88999", False),
    ("take_profit", "buy", "89000", True),
    ("take_profit", "buy", "89001", False),
]


@pytest.mark.parametrize(("kind", "side", "price", "fires"), TRIGGERS)
def test_a_trigger_fires_at_its_price_and_never_before(
    kind: str, side: str, price: str, fires: bool
) -> None:
    spec = AlgoSpec(kind, PAIR, side, Decimal(1), trigger=Decimal(89000))  # type: ignore[arg-type]
    assert crossed(spec, Decimal(price), None) is fires


def test_an_armed_stop_watches_the_touch_of_its_side_or_the_mid() -> None:
    sell = AlgoSpec("stop", PAIR, "sell", Decimal(1), trigger=Decimal("89995"))
    armed = parent(sell)
    armed.state = "armed"
    assert isinstance(decide(armed, Moment(BOOK, NOW)), Fire)  # bid 89,990 ≤ 89,995
    by_mid = AlgoSpec("stop", PAIR, "sell", Decimal(1), trigger=Decimal("89995"), trigger_ref="mid")
    assert isinstance(decide(parent(by_mid), Moment(BOOK, NOW)), Wait)  # mid 90,000


def test_a_trailing_stop_tracks_the_best_and_fires_on_the_trail() -> None:
    spec = AlgoSpec("trailing_stop", PAIR, "sell", Decimal(1), trail_bps=Decimal(100))
    p = parent(spec)
    assert decide(p, Moment(top("90000", "90010"), NOW)) == Track(Decimal(90000))
    p.best = Decimal(90000)
    assert isinstance(decide(p, Moment(top("89200", "89210"), NOW)), Wait)  # 0.89 % off
    assert isinstance(decide(p, Moment(top("89100", "89110"), NOW)), Fire)  # 1 % off exactly


def test_a_fired_stop_sends_the_whole_amount_marketable() -> None:
    p = parent(AlgoSpec("stop", PAIR, "sell", Decimal("0.3"), trigger=Decimal(1)))
    p.fired = True
    decision = decide(p, Moment(BOOK, NOW))
    assert isinstance(decision, Send) and decision.size == Decimal("0.3")
    p.add_child(child("0.3", "filled", "0.3"))
    assert decide(p, Moment(BOOK, NOW)) == Finish("filled")


# -- time ----------------------------------------------------------------------------------------


def test_nothing_is_sent_before_the_start_time() -> None:
    spec = AlgoSpec("timed", PAIR, "buy", Decimal(10), start_at=NOW + timedelta(seconds=90))
    decision = decide(parent(spec), Moment(BOOK, NOW))
    assert decision == Wait(90.0, "waiting for its start time")
    assert isinstance(decide(parent(spec), Moment(BOOK, NOW + timedelta(seconds=90))), Send)


def test_the_credit_window_a_refusal_names_gives_the_next_opening() -> None:
    refusal = (
        "Credit Not Available: credit is granted only during business hours "
        "(Mon-Fri 09:00-17:00 America/New_York); please contact your account executive"
    )
    window = CreditWindow.find(refusal)
    assert window is not None
    friday_evening = datetime(2026, 11, 27, 23, 0, tzinfo=UTC)  # 18:00 in New York
    assert window.next_open(friday_evening) == datetime(2026, 11, 30, 14, 0, tzinfo=UTC)
    assert window.is_open(datetime(2026, 11, 30, 14, 0, tzinfo=UTC))
    assert CreditWindow.find("Credit Not Available: please contact your account executive") is None


def test_a_spec_reads_back_from_json_as_it_was() -> None:
    spec = AlgoSpec(
        "credit_retry",
        PAIR,
        "sell",
        Decimal("0.12345678"),
        limit_price=Decimal("91000.5"),
        deadline=NOW,
        window="Mon-Fri 09:00-17:00 UTC",
    )
    assert AlgoSpec.from_json(spec.to_json()) == spec


def test_a_credit_refused_limit_order_is_retried_at_the_traders_own_limit() -> None:
    ticket = TicketInput(
        "USD",
        "BTC",
        Decimal(5000),
        "limit",
        Price(Decimal(90000), "BTC", "USD"),
        NOW + timedelta(hours=2),
    )
    refusal = (
        "Credit Not Available: credit is granted only during business hours "
        "(Mon-Fri 09:00-17:00 America/New_York); please contact your account executive"
    )
    spec = retry_spec(ticket, refusal, [PAIR], NOW)
    assert (spec.kind, spec.pair, spec.side) == ("credit_retry", PAIR, "buy")
    assert spec.amount == Decimal(5000)
    assert spec.limit_price == Decimal(90000) and spec.rest_seconds == 7200
    assert spec.deadline == NOW + timedelta(hours=24)
    assert spec.window == "Mon-Fri 09:00-17:00 America/New_York"
    spec.validate()
    with pytest.raises(ValueError, match="refused for credit"):
        retry_spec(ticket, "Insufficient Funds: Requested 5000 USD", [PAIR], NOW)


def test_a_twap_starts_with_its_first_price_and_carries_a_later_slice_without_one() -> None:
    p = parent(twap("1000", 3))
    assert decide(p, Moment(None, NOW)) == Wait(None, f"no fresh price for {PAIR}")
    p.slices_sent = 1
    p.add_child(child("333.33333333", "filled", "333.33333333"))
    later = decide(p, Moment(None, NOW, 60.0))
    assert isinstance(later, Skip) and "carried" in later.why
