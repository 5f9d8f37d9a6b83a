"""The order desk against a real sandbox over loopback: limit conversion, estimates, what-if,
pre-trade checks and safe submission (journal, in-flight guard, lost answers)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.domain import Price, format_decimal, parse_timestamp, utc_now
from app.domain.money import divide
from app.services.estimates import EstimateFeed, EstimateResult
from app.services.limit_prices import describe_limit, display_number, trader_view, wire_limit
from app.services.order_desk import AlreadySending
from app.services.pretrade import CheckLimits, checks, what_if
from app.services.ticket import TicketError, TicketInput
from tests.harness import SandboxProcess, until
from tests.helpers.order_desk import lose_an_order, open_desk

pytestmark = pytest.mark.anyio

USD_CREDIT = {"USD": "100000"}
CREDIT_LINE = {"USD": "-50000"}


def price(text: str) -> Price:
    return Price.parse(text)


# -- limit conversion ---------------------------------------------------------------------------


def test_limit_conversion_both_ways() -> None:
    buy = wire_limit("USD", "BTC", price("90000 BTC/USD"))
    assert (buy.base, buy.quote) == ("USD", "BTC")
    # 1/90000 = 0.0000111…: 15 significant digits, rounded up (never a looser limit)
    assert buy.value == Decimal("0.0000111111111111112")
    assert buy.value > divide(Decimal(1), Decimal(90000))
    assert display_number(trader_view("USD", "BTC", buy, "BTC").value) == "90,000"
    assert wire_limit("USD", "BTC", buy) == buy  # already SOURCE/DESTINATION
    sell = wire_limit("BTC", "USD", price("59000 BTC/USD"))
    assert sell == price("59000 BTC/USD")
    assert trader_view("BTC", "USD", sell, "BTC") == sell
    # ETH/BTC: buying ETH with BTC at most 0.035 BTC per ETH; selling ETH at least 0.03.
    eth_buy = wire_limit("BTC", "ETH", price("0.035 ETH/BTC"))
    assert (eth_buy.base, eth_buy.quote) == ("BTC", "ETH")
    assert display_number(trader_view("BTC", "ETH", eth_buy, "ETH").value) == "0.035"
    assert wire_limit("ETH", "BTC", price("0.03 ETH/BTC")) == price("0.03 ETH/BTC")
    assert describe_limit("BTC", "USD", sell, "BTC") == (
        "sell BTC receiving at least 59,000 USD per BTC"
    )
    assert describe_limit("USD", "BTC", buy, "BTC") == "buy BTC paying at most 90,000 USD per BTC"
    with pytest.raises(ValueError, match="USD/BTC or BTC/USD, not ETH/USD"):
        wire_limit("USD", "BTC", price("3000 ETH/USD"))
    with pytest.raises(ValueError, match="greater than zero"):
        wire_limit("USD", "BTC", price("0 BTC/USD"))


def test_ticket_validation_names_the_field() -> None:
    now = utc_now()
    cases = [
        (TicketInput("USD", "BTC", Decimal(0)), "size"),
        (TicketInput("BTC", "BTC", Decimal(1)), "destination"),
        (TicketInput("USD", "BTC", Decimal(1), "market", price("90000 BTC/USD")), "limit"),
        (
            TicketInput("USD", "BTC", Decimal(1), "limit", None, now - timedelta(minutes=1)),
            "end_at",
        ),
        (TicketInput("USD", "BTC", Decimal(1), "limit", price("1 ETH/USD")), "limit"),
    ]
    for ticket, field in cases:
        with pytest.raises(TicketError) as caught:
            ticket.validate(now)
        assert caught.value.field == field, ticket
    TicketInput("USD", "BTC", Decimal(1), "limit", price("90000 BTC/USD")).validate(now)


@pytest.mark.slow
async def test_converted_limits_fill_or_rest_consistently_with_the_book(
    sandbox: SandboxProcess,
) -> None:
    async with open_desk(sandbox) as d:
        ask = d.desk.top_of_book["BTC/USD"].ask
        above = price(f"{(ask * Decimal('1.02')).quantize(Decimal(1))} BTC/USD")
        below = price(f"{(ask * Decimal('0.80')).quantize(Decimal(1))} BTC/USD")
        fills = await d.desk.submit(TicketInput("USD", "BTC", Decimal(1000), "limit", above))
        assert fills.status == "filled", fills.message
        assert fills.order is not None and fills.order.limit is not None
        assert (fills.order.limit.base, fills.order.limit.quote) == ("USD", "BTC")
        assert fills.order.result.total is not None
        assert fills.order.result.total.value >= Decimal(1000) / above.value * Decimal("0.9999")
        far = TicketInput("USD", "BTC", Decimal(1000), "limit", below)
        assert [c.code for c in d.desk.checks(far)] == ["limit_distance"]
        rests = await d.desk.submit(far)
        assert rests.status == "submitted", rests.message
        # A sell typed in BTC/USD units passes through as the wire's SOURCE/DESTINATION.
        sell = await d.desk.submit(
            TicketInput("BTC", "USD", Decimal("0.01"), "limit", price("59000 BTC/USD"))
        )
        assert sell.status == "filled", sell.message
        assert sell.order is not None and sell.order.limit == price("59000 BTC/USD")
        assert d.journal.entry(sell.client_order_id) is not None
        entry = d.journal.entry(sell.client_order_id)
        assert entry is not None and entry.request["limit"] == "59000"  # as sent


# -- indicative price ---------------------------------------------------------------------------


@pytest.mark.slow
async def test_estimate_requests_are_debounced(sandbox: SandboxProcess) -> None:
    async with open_desk(sandbox) as d:
        await d.faults({"kind": "latency", "seconds": 0, "path": f"{d.account}/order/estimate"})
        feed = EstimateFeed(d.client, debounce=0.2)
        seen: list[EstimateResult] = []
        feed.results.subscribe(seen.append)
        for size in ("100", "1000", "5000"):
            feed.request(TicketInput("USD", "BTC", Decimal(size)))
        await until(lambda: seen)
        await feed.close()
        assert await d.hits("/order/estimate") == 1
        [result] = seen
        assert result.ok, result.error
        assert result.ticket.size == Decimal(5000)
        assert result.received is not None and result.received.asset == "BTC"
        assert result.price is not None and result.inverted is not None
        assert (result.price.base, result.price.quote) == ("USD", "BTC")
        assert (result.inverted.base, result.inverted.quote) == ("BTC", "USD")


@pytest.mark.slow
async def test_a_newer_estimate_supersedes_one_in_flight(sandbox: SandboxProcess) -> None:
    async with open_desk(sandbox) as d:
        path = f"{d.account}/order/estimate"
        await d.faults({"kind": "latency", "seconds": 3, "path": path, "count": 1})
        feed = EstimateFeed(d.client, debounce=0.01)
        seen: list[EstimateResult] = []
        feed.results.subscribe(seen.append)
        feed.request(TicketInput("USD", "BTC", Decimal(100)))
        await d.wait_for_hit("/order/estimate")  # the slow request is at the server
        started = time.monotonic()
        feed.request(TicketInput("USD", "BTC", Decimal(200)))
        await until(lambda: seen)
        assert time.monotonic() - started < 2.5  # not held behind the slow one
        await feed.close()
        assert [r.ticket.size for r in seen] == [Decimal(200)]
        assert feed.latest is seen[0] and seen[0].ok


# -- what-if ------------------------------------------------------------------------------------


@pytest.mark.slow
async def test_what_if_predictions_match_the_server(sandbox: SandboxProcess) -> None:
    async with open_desk(sandbox, USD_CREDIT, CREDIT_LINE) as d:
        for size, needs_credit in ((Decimal(1000), False), (Decimal(120000), True)):
            ticket = TicketInput("USD", "BTC", size)
            await d.refresh()
            assert d.desk.balances is not None
            estimate = await d.client.estimate("USD", "BTC", size, "BTC")
            guess = what_if(ticket, d.desk.balances, estimate)
            assert guess.refusal is None and guess.needs_credit is needs_credit
            assert guess.destination.funds_after is not None
            result = await d.desk.submit(ticket)
            assert result.status == "filled", result.message
        await d.refresh()
        assert d.desk.balances is not None
        beyond = TicketInput("USD", "BTC", Decimal(500000))
        guess = what_if(beyond, d.desk.balances, None)
        assert guess.refusal is not None and guess.refusal.startswith("Insufficient Funds")
        # refused: no "after" at all (never a negative available credit) ...
        assert guess.source.credit_after is None and guess.source.funds_after is None
        # ... but the refusal as numbers: needs 500,000 where funds + credit can be spent
        assert guess.shortfall is not None
        assert (guess.shortfall.reason, guess.shortfall.needed) == (
            "Insufficient Funds",
            beyond.size,
        )
        assert guess.shortfall.available == guess.source.funds + guess.source.credit
        result = await d.desk.submit(beyond)
        assert result.status == "rejected"
        assert result.message == guess.refusal  # the same words, named amount included


@pytest.mark.slow
async def test_credit_outside_credit_hours_is_predicted(
    sandbox_factory: Callable[..., SandboxProcess],
) -> None:
    closed = sandbox_factory("--credit-hours", "never")
    async with open_desk(closed, {"USD": "1000"}, CREDIT_LINE) as d:
        assert d.desk.balances is not None
        ticket = TicketInput("USD", "BTC", Decimal(5000))
        guess = what_if(ticket, d.desk.balances, None)
        assert guess.needs_credit
        assert guess.refusal is not None and guess.refusal.startswith("Credit Not Available")
        result = await d.desk.submit(ticket)
        assert result.status == "rejected"
        assert result.message.startswith("Credit Not Available")


# -- pre-trade checks ---------------------------------------------------------------------------


@pytest.mark.slow
async def test_fat_finger_blocks_unless_overridden(sandbox: SandboxProcess) -> None:
    async with open_desk(sandbox, limits=CheckLimits(max_notional=Decimal(1000))) as d:
        assert d.desk.balances is not None
        huge = TicketInput("BTC", "USD", Decimal(20))
        found = checks(huge, d.desk.balances, d.desk.top_of_book, CheckLimits())
        assert {(c.code, c.severity) for c in found} == {("funds", "warn"), ("fat_finger", "block")}
        # Valued one hop through USDT when ETH/USD is not in the book.
        tops = {k: v for k, v in d.desk.top_of_book.items() if k in ("ETH/USDT", "USDT/USD")}
        assert len(tops) == 2
        eth = TicketInput("ETH", "BTC", Decimal(1000))
        assert [c.code for c in checks(eth, None, tops)] == ["fat_finger"]
        assert [c.code for c in checks(eth, None, {})] == ["unvalued"]
        assert checks(TicketInput("ETH", "BTC", Decimal(1)), None, tops) == []
        ticket = TicketInput("BTC", "USD", Decimal("0.1"))  # about 9,000 USD > 1,000
        with pytest.raises(TicketError, match="above the 1,000 USD limit"):
            await d.desk.submit(ticket)
        assert await d.client.orders() == []
        assert d.journal.entries() == []
        result = await d.desk.submit(ticket, override=True)
        assert result.status == "filled", result.message
        assert [c.severity for c in result.checks if c.code == "fat_finger"] == ["warn"]


# -- submission ---------------------------------------------------------------------------------


@pytest.mark.slow
async def test_a_second_enter_sends_nothing(sandbox: SandboxProcess) -> None:
    async with open_desk(sandbox) as d:
        await d.faults({"kind": "latency", "seconds": 0.5, "path": d.order_path()})
        ticket = TicketInput("USD", "BTC", Decimal(100))
        first = asyncio.get_running_loop().create_task(d.desk.submit(ticket))
        await until(lambda: d.desk.sending)
        with pytest.raises(AlreadySending):
            await d.desk.submit(ticket)
        result = await first
        assert result.status == "filled" and not d.desk.sending
        assert len(await d.client.orders()) == 1
        assert len(d.journal.entries()) == 1


@pytest.mark.slow
async def test_a_refusal_is_journaled_with_the_servers_words(sandbox: SandboxProcess) -> None:
    async with open_desk(sandbox, {"USD": "100"}) as d:
        result = await d.desk.submit(TicketInput("USD", "BTC", Decimal(1000)))
        assert result.status == "rejected"
        assert (
            result.message == "Insufficient Funds: Requested 1000 USD but only 100 USD is available"
        )
        entry = d.journal.entry(result.client_order_id)
        assert entry is not None
        assert (entry.status, entry.detail) == ("rejected", result.message)


async def test_an_answer_lost_after_commit_still_ends_filled(sandbox: SandboxProcess) -> None:
    async with open_desk(sandbox) as d:
        await d.faults({"kind": "drop_after_commit", "path": d.order_path(), "count": 1})
        result = await d.desk.submit(TicketInput("USD", "BTC", Decimal(100)))
        assert result.status == "filled", result.message
        assert result.order is not None
        assert [o.order_id for o in await d.client.orders()] == [result.order.order_id]
        entry = d.journal.entry(result.client_order_id)
        assert entry is not None and (entry.status, entry.order_id) == (
            "filled",
            result.order.order_id,
        )


@pytest.mark.slow
async def test_the_journal_is_written_before_the_order_leaves(sandbox: SandboxProcess) -> None:
    async with open_desk(sandbox) as d:
        await d.faults({"kind": "latency", "seconds": 1, "path": d.order_path()})
        task = asyncio.get_running_loop().create_task(
            d.desk.submit(TicketInput("USD", "BTC", Decimal(100)))
        )
        hit = await d.wait_for_hit("/order")  # the request is at the server, held there
        [entry] = d.journal.entries()
        assert entry.status == "sending" and d.desk.sending
        assert entry.created_at <= parse_timestamp(hit["time"])
        assert await d.client.orders() == []  # not executed yet
        result = await task
        assert result.status == "filled"
        after = d.journal.entry(result.client_order_id)
        assert after is not None and after.status == "filled"


async def test_an_answer_lost_before_execution_is_unknown(sandbox: SandboxProcess) -> None:
    async with open_desk(sandbox) as d:
        await d.faults({"kind": "drop", "path": d.order_path(), "count": 1})
        result = await d.desk.submit(TicketInput("USD", "BTC", Decimal(100)))
        assert result.status == "unknown" and result.order is None
        assert "unknown whether it executed" in result.message
        assert await d.client.orders() == []
        entry = d.journal.entry(result.client_order_id)
        assert entry is not None and (entry.status, entry.detail) == ("unknown", result.message)
        assert not d.desk.sending


# -- clientOrderId reuse and settling lost answers -------------------------------------------------


@pytest.mark.slow
async def test_an_order_that_never_left_fails_and_keeps_its_id_for_the_resend(
    sandbox_factory: Callable[..., SandboxProcess],
) -> None:
    own = sandbox_factory()
    async with open_desk(own) as d:
        ticket = TicketInput("USD", "BTC", Decimal(100))
        shown = d.desk.client_order_id_for(ticket)
        own.stop()  # the service is gone: the connection is refused, nothing leaves
        result = await d.desk.submit(ticket)
        assert result.status == "failed" and result.message.startswith("not sent:")
        assert result.client_order_id == shown
        entry = d.journal.entry(shown)
        assert entry is not None and entry.status == "failed"
        assert d.desk.client_order_id_for(ticket) == shown  # a resend cannot duplicate
        other = TicketInput("USD", "BTC", Decimal(101))
        assert d.desk.client_order_id_for(other) != shown  # an edited ticket is a new order


async def test_a_settled_answer_gives_the_next_order_a_new_id(sandbox: SandboxProcess) -> None:
    async with open_desk(sandbox) as d:
        ticket = TicketInput("USD", "BTC", Decimal(100))
        first = await d.desk.submit(ticket)
        assert first.status == "filled"
        second = await d.desk.submit(ticket)
        assert second.status == "filled"
        assert first.client_order_id != second.client_order_id
        assert len(await d.client.orders()) == 2


async def test_resending_an_unknown_order_replays_it(sandbox: SandboxProcess) -> None:
    async with open_desk(sandbox) as d:
        orders_list = f"/order/account/{d.account}"  # order lookups: list and by id
        await d.faults(
            {"kind": "drop_after_commit", "path": d.order_path(), "count": 1},
            {"kind": "status", "status": 503, "method": "GET", "path": orders_list},
        )
        d.desk.settle_delays = (60.0,)  # the trader is faster than the settling
        ticket = TicketInput("USD", "BTC", Decimal(100))
        lost = await d.desk.submit(ticket)
        assert lost.status == "unknown", lost.message
        await d.clear_faults()
        again = await d.desk.submit(ticket)
        assert again.status == "filled" and again.client_order_id == lost.client_order_id
        assert len(await d.client.orders()) == 1  # replayed, not placed twice


async def test_an_unknown_outcome_settles_itself_by_looking_the_order_up(
    sandbox: SandboxProcess,
) -> None:
    async with open_desk(sandbox) as d:
        orders_list = f"/order/account/{d.account}"  # order lookups: list and by id
        await d.faults(
            {"kind": "drop_after_commit", "path": d.order_path(), "count": 1},
            {"kind": "status", "status": 503, "method": "GET", "path": orders_list},
        )
        d.desk.settle_delays = (0.2, 0.2, 0.2, 0.2, 0.2)
        published: list[str] = []
        d.desk.results.subscribe(lambda r: published.append(r.status))
        lost = await d.desk.submit(TicketInput("USD", "BTC", Decimal(100)))
        assert lost.status == "unknown"
        await d.clear_faults()
        await until(lambda: published == ["unknown", "filled"], timeout=10)
        entry = d.journal.entry(lost.client_order_id)
        assert entry is not None and entry.status == "filled" and entry.order_id


@pytest.mark.slow
async def test_an_order_the_server_never_listed_stays_unknown_and_is_looked_for(
    sandbox: SandboxProcess, look_ups: list[str]
) -> None:
    """Absence from the order list is never proof. The order stays unknown (never
    "failed — never placed") and the desk keeps looking, past its schedule, for the session."""
    async with open_desk(sandbox) as d:
        await d.faults({"kind": "drop", "path": d.order_path(), "count": 1})
        published, lost = await lose_an_order(d, settle=(0.1, 0.1), session=0.1)
        await until(lambda: look_ups.count(lost.client_order_id) >= 6, timeout=10)
        assert published == ["unknown"]  # nothing ever claimed it failed
        entry = d.journal.entry(lost.client_order_id)
        assert entry is not None and entry.status == "unknown"
        assert "absence is not proof" in entry.detail
        assert d.journal.unsettled(entry.account) == [entry]  # open for the next start too


@pytest.mark.slow
async def test_an_answer_held_past_the_read_timeout_stays_unknown_until_it_fills(
    sandbox: SandboxProcess,
) -> None:
    """The answer held longer than the read timeout and the first look-ups;
    the server fills the order later. The desk calls it unknown, then filled — never failed."""
    async with open_desk(sandbox, read_timeout=0.5) as d:
        await d.faults({"kind": "latency", "seconds": 2.5, "path": d.order_path(), "count": 1})
        published, lost = await lose_an_order(d, settle=(0.2, 0.2), session=0.3)
        await until(lambda: published == ["unknown", "filled"], timeout=15)
        entry = d.journal.entry(lost.client_order_id)
        assert entry is not None and entry.status == "filled" and entry.order_id


@pytest.mark.slow
async def test_the_journal_holds_exactly_the_body_that_was_sent(sandbox: SandboxProcess) -> None:
    async with open_desk(sandbox) as d:
        ask = d.desk.top_of_book["BTC/USD"].ask
        far = price(f"{(ask / 2).quantize(Decimal(1))} BTC/USD")
        end_at = utc_now() + timedelta(hours=1)
        tickets = [
            TicketInput("USD", "BTC", Decimal("1000.50"), "limit", far, end_at),
            TicketInput("USD", "BTC", Decimal(100)),
        ]
        for ticket in tickets:
            request = d.desk.request_for(ticket)
            result = await d.desk.submit(ticket)
            assert result.status in ("submitted", "filled"), result.message
            [sent] = [
                r
                for r in d.recorder.sent("POST", "/order")
                if json.loads(r.content)["clientOrderId"] == result.client_order_id
            ]
            entry = d.journal.entry(result.client_order_id)
            assert entry is not None and entry.body.encode() == sent.content
            assert entry.request == request.body(d.account)
        resting = d.journal.entries()[-1].request  # the oldest: the limit order
        assert resting["limit"] == format_decimal(wire_limit("USD", "BTC", far).value)
        assert parse_timestamp(resting["endAt"]) == end_at


@pytest.mark.slow
async def test_send_refuses_a_request_that_is_not_its_tickets(sandbox: SandboxProcess) -> None:
    """``send`` journals the request's body and logs the ticket's words: the two must be one
    order, or the log and the confirmation would describe another order than the one sent."""
    async with open_desk(sandbox) as d:
        ticket = TicketInput("USD", "BTC", Decimal(100))
        other = TicketInput("USD", "BTC", Decimal(1000)).request("tt-other")
        with pytest.raises(ValueError, match="not the ticket's"):
            await d.desk.send(ticket, other, [])
        assert d.journal.entries() == [] and d.recorder.sent("POST", "/order") == []
        assert not d.desk.sending


@pytest.mark.slow
async def test_a_lost_answer_is_settled_live_by_the_one_look_up(
    sandbox: SandboxProcess, look_ups: list[str]
) -> None:
    """The client raises OutcomeUnknown and stops (one POST, no reads of its own); the desk's
    settler looks the order up at once and the trader sees the fill."""
    async with open_desk(sandbox) as d:
        await d.faults({"kind": "drop_after_commit", "path": d.order_path(), "count": 1})
        d.recorder.requests.clear()
        result = await d.desk.submit(TicketInput("USD", "BTC", Decimal(100)))
        assert result.status == "filled", result.message
        assert look_ups == [result.client_order_id]
        [post] = d.recorder.sent("POST", "/order")
        [lookup] = d.recorder.sent("GET", f"/order/account/{d.account}")
        assert lookup.url.params["clientOrderId"] == result.client_order_id
        entry = d.journal.entry(result.client_order_id)
        assert entry is not None and entry.body.encode() == post.content
        assert result.order is not None and entry.order_id == result.order.order_id


@given(
    typed=st.decimals(
        min_value=Decimal("0.00000001"), max_value=Decimal("10000000"), places=8
    ).filter(lambda v: v > 0)
)
def test_an_inverted_wire_limit_never_loosens_the_traders_limit(typed: Decimal) -> None:
    """Buying BTC "at most <typed> USD per BTC": the wire sends USD/BTC rounded up, so the
    price it allows per BTC is at most the typed one, within 1e-14, and reads back as typed."""
    wire = wire_limit("USD", "BTC", Price(typed, "BTC", "USD"))
    assert (wire.base, wire.quote) == ("USD", "BTC")
    assert len(wire.value.normalize().as_tuple().digits) <= 15
    assert Decimal(1) / wire.value <= typed
    back = trader_view("USD", "BTC", wire, "BTC").value
    assert (typed - back) / typed < Decimal("1e-14")
    if len(typed.normalize().as_tuple().digits) <= 12:  # what the ticket displays
        assert display_number(back) == display_number(typed)
