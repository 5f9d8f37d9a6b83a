"""The order ticket's rules without a screen, against a real sandbox over loopback: the intent's
amount in the asset the order sells through side and pair switches, checks on each market
snapshot, the one state machine (a second send while sending sends nothing), and preview →
send equality (what is sent is byte for byte what was previewed; a market that moved after the
preview is shown again, not sent)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from decimal import Decimal

import pytest

from app.domain import Amount, AssetPair, utc_now
from app.domain.records import TopOfBook
from app.services.estimates import EstimateFeed
from app.services.health import Health, HealthState
from app.services.order_desk import SubmitResult
from app.services.order_intent import Preview
from app.services.order_ticket import OrderTicket, TicketState
from app.services.pretrade import CheckLimits
from tests.harness import SandboxProcess, until
from tests.helpers.order_desk import Desk, open_desk

pytestmark = pytest.mark.anyio

D = Decimal


@asynccontextmanager
async def open_ticket(
    sandbox: SandboxProcess,
    limits: CheckLimits | None = None,
    presets: Mapping[str, tuple[Decimal, ...]] | None = None,
    now: Callable[[], datetime] = utc_now,
) -> AsyncIterator[tuple[Desk, OrderTicket, list[SubmitResult]]]:
    """A ticket on BTC/USD over a fresh account's desk; the results it was handed."""
    async with open_desk(sandbox, limits=limits) as d:
        ticket = OrderTicket(
            d.desk,
            EstimateFeed(d.client, debounce=0.01),
            presets=presets,
            resting_hours=1.0,
            now=now,
        )
        results: list[SubmitResult] = []
        ticket.results.subscribe(results.append)
        ticket.set_pair("BTC/USD")
        try:
            yield d, ticket, results
        finally:
            await ticket.stop_estimates()
            ticket.close()


def seen(ticket: OrderTicket) -> Preview:
    """The ticket's latest preview (read afresh: each step may publish a new one)."""
    return ticket.preview


def state(ticket: OrderTicket) -> TicketState:
    return ticket.state


def tick(bid: str, ask: str) -> dict[str, TopOfBook]:
    pair = AssetPair.parse("BTC/USD")
    spread = D(ask) - D(bid)
    return {"BTC/USD": TopOfBook(pair, D(bid), D(1), D(ask), D(1), spread)}


# -- the intent ---------------------------------------------------------------------------------


@pytest.mark.slow
async def test_side_and_pair_switches_convert_the_amount_never_keep_its_digits(
    sandbox: SandboxProcess,
) -> None:
    """The old rule kept the digits and changed the asset (0.5 USD became 0.5 BTC on a side
    switch); an amount now keeps its value: converted at the mid with a note."""
    async with open_ticket(sandbox) as (d, ticket, _):
        d.session.top_of_book.data.publish(tick("49999", "50001"))
        assert seen(ticket).intent is None and seen(ticket).error is not None
        ticket.set_size("10000")
        intent = seen(ticket).intent
        assert intent is not None and (intent.side, intent.amount) == (
            "buy",
            Amount(D("10000"), "USD"),
        )
        request = seen(ticket).request
        assert request is not None and (request.source, request.destination) == ("USD", "BTC")
        shown = request.client_order_id
        ticket.set_side("sell")  # 10,000 USD at the mid 50,000 is 0.2 BTC, never 10,000 BTC
        intent = seen(ticket).intent
        assert intent is not None and intent.amount == Amount(D("0.2"), "BTC")
        assert ticket.fields.size == "0.20000000"
        assert seen(ticket).note == ("info", "10,000 USD → 0.20000000 BTC at 50,000.00 (mid)")
        assert intent.ticket.source == "BTC" and intent.request.client_order_id != shown
        ticket.set_size("0.2")
        assert seen(ticket).note is None  # the next edit replaces the note
        ticket.set_pair("ETH/USD")  # the side is kept; BTC becomes ETH at the mids
        intent = seen(ticket).intent
        assert (intent is None) or (intent.side, intent.amount.asset) == ("sell", "ETH")
        assert ticket.fields.size != "0.2" and seen(ticket).note is not None
        again = seen(ticket).request
        ticket.set_size(ticket.fields.size)  # no change: the same order keeps its id
        assert seen(ticket).request == again


@pytest.mark.slow
async def test_no_price_clears_the_amount_with_a_note(sandbox: SandboxProcess) -> None:
    async with open_ticket(sandbox) as (d, ticket, _):
        d.session.top_of_book.data.publish({})
        ticket.set_size("10000")
        ticket.set_side("sell")
        assert ticket.fields.size == ""
        note = seen(ticket).note
        assert note is not None and note[0] == "warning" and "cleared" in note[1]


@pytest.mark.slow
async def test_units_toggle_per_pair_and_amount_in_the_asset_bought(
    sandbox: SandboxProcess,
) -> None:
    """Buy 1 BTC: the service takes USD, so the amount is sent as USD at the limit (exact)
    or at the ask read at the edit (market: ≈); the request is what the preview shows."""
    async with open_ticket(sandbox) as (d, ticket, _):
        d.session.top_of_book.data.publish(tick("49999", "50001"))
        ticket.set_size("1000")
        assert ticket.set_units("BTC")  # 1,000 USD at the mid 50,000 = 0.02 BTC
        assert ticket.fields.amount_in == "BTC" and ticket.fields.size == "0.02000000"
        ticket.set_size("1")
        ticket.set_type("limit")
        ticket.set_limit("50000")
        preview = seen(ticket)
        assert preview.conversion is not None and not preview.conversion.approximate
        assert preview.request is not None and preview.request.size == D("50000.00")
        ticket.set_type("market")
        preview = seen(ticket)
        assert preview.conversion is not None and preview.conversion.approximate
        assert preview.request is not None and preview.request.size == D("50001.00")
        shown = ticket.submit(confirm=True).preview  # a confirmation holds its touch
        d.session.top_of_book.data.publish(tick("59999", "60001"))
        assert shown is not None and seen(ticket).request == shown.request
        assert ticket.answer(False, seen(ticket)).kind == "not_sent"
        d.session.top_of_book.data.publish(tick("59998", "60002"))  # editing: the new ask
        request = seen(ticket).request
        assert request is not None and request.size == D("60002.00")
        assert ticket.submit(confirm=False).kind == "sending"
        sent = request.client_order_id
        d.session.top_of_book.data.publish(tick("69998", "70002"))  # after a send: held
        again = seen(ticket).request
        assert again is not None and again.client_order_id == sent
        await until(lambda: state(ticket) is not TicketState.SENDING)
        ticket.set_side("sell")  # pinned to BTC: a sell of 1 BTC, digits and asset kept
        assert ticket.fields.size == "1" and seen(ticket).request is not None
        assert seen(ticket).request.size == D(1)  # type: ignore[union-attr]
        ticket.set_pair("ETH/USD")  # not toggled there: the asset sold (ETH)
        assert ticket.fields.amount_in == "ETH"
        ticket.set_pair("BTC/USD")  # remembered for BTC/USD
        assert ticket.fields.amount_in == "BTC"


@pytest.mark.slow
async def test_a_pair_switch_never_carries_a_limit(sandbox: SandboxProcess) -> None:
    async with open_ticket(sandbox) as (d, ticket, _):
        tops = tick("49999", "50001")
        eth = AssetPair.parse("ETH/USD")
        tops["ETH/USD"] = TopOfBook(eth, D("2999"), D(1), D("3001"), D(1), D(2))
        d.session.top_of_book.data.publish(tops)
        ticket.set_size("100")
        ticket.set_type("limit")
        ticket.set_limit("49000")
        ticket.set_pair("ETH/USD")
        assert ticket.fields.limit == "3001.00"  # the ETH ask, never 49,000
        note = seen(ticket).note
        assert note is not None and "ETH/USD ask" in note[1]
        assert not seen(ticket).blocks


async def test_a_side_switch_far_from_the_touch_blocks_until_the_limit_is_edited(
    sandbox: SandboxProcess,
) -> None:
    async with open_ticket(sandbox) as (d, ticket, _):
        d.session.top_of_book.data.publish(tick("49999", "50001"))
        ticket.set_side("sell")
        ticket.set_size("0.01")
        ticket.set_type("limit")
        ticket.set_limit("60000")  # typed: a warning only
        assert [c.severity for c in seen(ticket).checks if c.code == "limit_distance"] == ["warn"]
        ticket.set_side("buy")  # the sell's limit now buys 20 % above the ask
        assert [c.code for c in seen(ticket).blocks] == ["limit_distance"]
        assert ticket.submit(confirm=False).kind == "blocked"
        ticket.set_limit("60000")  # the trader looked at it again: a warning
        assert not seen(ticket).blocks
        assert d.journal.entries() == []


async def test_increments_are_checked_before_sending(sandbox: SandboxProcess) -> None:
    async with open_ticket(sandbox) as (d, ticket, _):
        infos = await d.client.pairs()  # the service's pairs list, as the session learns it
        d.session.pair_info = {str(info.pair): info for info in infos}
        d.session.market.pairs_changed()
        ticket.set_size("1000.123")
        preview = seen(ticket)
        assert preview.intent is None and preview.error is not None
        assert preview.error.message.startswith("USD amounts take at most 2 decimals")
        assert ticket.submit(confirm=False).kind == "invalid"
        ticket.set_size("1000.12")
        assert seen(ticket).intent is not None
        step = d.session.market.snapshot.pair_info["BTC/USD"].price_increment
        assert step is not None
        ticket.set_type("limit")
        ticket.set_limit(format(D(50000) + step / 2, "f"))
        error = seen(ticket).error
        assert error is not None and error.field == "limit" and "steps of" in error.message
        assert d.journal.entries() == []


@pytest.mark.slow
async def test_hit_and_lift_are_marketable_with_a_short_end(sandbox: SandboxProcess) -> None:
    async with open_ticket(sandbox) as (d, ticket, _):
        d.session.top_of_book.data.publish(tick("91000.00", "91078.31"))
        assert ticket.marketable("buy", D(1000), collar_bps=D(10), seconds=10) is None
        fields = ticket.fields
        assert fields.marketable and fields.order_type == "limit"
        assert fields.limit == "91169.38"  # the ask + 10 bps, on the tick, never beyond
        assert fields.end_at is not None
        assert timedelta(seconds=9) < fields.end_at - utc_now() <= timedelta(seconds=10)
        ticket.set_size("2000")  # the amount may be typed after the key: terms unchanged
        assert seen(ticket).fields.marketable and seen(ticket).fields.end_at == fields.end_at
        ticket.set_limit("91100")  # an edit makes it the trader's ticket again
        assert not seen(ticket).fields.marketable
        assert ticket.fields.end_at is not None
        assert ticket.fields.end_at - utc_now() > timedelta(minutes=30)


async def test_a_click_never_reuses_an_amount_of_another_asset(sandbox: SandboxProcess) -> None:
    presets = {"BTC": (D("0.01"), D("0.1"))}
    async with open_ticket(sandbox, presets=presets) as (_, ticket, _):
        ticket.set_size("10000")  # USD to spend
        assert ticket.prefill("BTC/USD", "sell", D(90000))  # a sell sells BTC: the default
        assert ticket.fields.size == "0.01" and ticket.fields.order_type == "limit"
        ticket.set_size("0.2")
        assert ticket.prefill("BTC/USD", "sell", D(91000))  # same asset: the typed amount
        assert ticket.fields.size == "0.2" and ticket.fields.limit == "91000"
        # USD has no default: the typed 0.2 BTC is converted at the mid (never 0.2 USD), with
        # a note; the old rule cleared it, the rule now is the one every switch follows
        assert ticket.prefill("BTC/USD", "buy", D(90000))
        assert ticket.fields.size not in ("", "0.2") and ticket.fields.amount_in == "USD"
        note = seen(ticket).note
        assert note is not None and note[1].startswith("0.2 BTC → ")
        ticket.set_size("")
        assert seen(ticket).intent is None


# -- checks on each snapshot ----------------------------------------------------------------------


@pytest.mark.slow
async def test_checks_run_once_per_snapshot_and_the_override_is_per_ticket(
    sandbox: SandboxProcess,
) -> None:
    async with open_ticket(sandbox, CheckLimits(max_notional=D(100_000))) as (d, ticket, _):
        ticket.set_side("sell")
        ticket.set_size("1")
        d.session.top_of_book.data.publish(tick("49999", "50001"))
        calm = seen(ticket)
        assert not calm.blocks and not calm.fat_finger
        d.session.top_of_book.data.publish(tick("199999", "200001"))
        hot = seen(ticket)
        assert hot.snapshot_id == calm.snapshot_id + 1 == d.session.market.snapshot.id
        assert [c.code for c in hot.blocks] == ["fat_finger"]
        assert ticket.submit(confirm=False).kind == "blocked"
        ticket.set_override(True)
        assert not seen(ticket).blocks and seen(ticket).fat_finger  # a warning now
        d.session.top_of_book.data.publish(tick("49999", "50001"))
        assert not seen(ticket).fat_finger and not ticket.fields.override  # nothing left
        assert d.journal.entries() == []


@pytest.mark.slow
async def test_offline_nothing_is_sent_and_the_reason_is_said(sandbox: SandboxProcess) -> None:
    async with open_ticket(sandbox) as (d, ticket, _):
        ticket.set_size("100")
        d.session.health.changes.publish(HealthState(Health.OFFLINE, "every feed failing", ()))
        assert seen(ticket).blocked == "Offline" and not seen(ticket).sendable
        step = ticket.submit(confirm=False)
        assert (step.kind, step.message) == (
            "cannot_send",
            "Not sent: offline (every feed failing).",
        )
        assert d.journal.entries() == [] and state(ticket) is TicketState.EDITING


# -- the state machine -------------------------------------------------------------------------


@pytest.mark.slow
async def test_a_second_send_while_sending_sends_nothing(sandbox: SandboxProcess) -> None:
    async with open_ticket(sandbox) as (d, ticket, results):
        await d.faults({"kind": "latency", "seconds": 0.5, "path": d.order_path()})
        ticket.set_size("100")
        assert ticket.submit(confirm=False).kind == "sending"
        assert state(ticket) is TicketState.SENDING and not seen(ticket).sendable
        assert ticket.submit(confirm=False).kind == "busy"
        assert ticket.submit(confirm=True).kind == "busy"
        await until(lambda: state(ticket) is TicketState.SETTLED)
        assert [r.status for r in results] == ["filled"]  # the answer reached it once
        assert len(await d.client.orders()) == 1 and len(d.journal.entries()) == 1
        await until(lambda: seen(ticket).sendable)
        after = seen(ticket).request
        assert after is not None and after.client_order_id != results[0].client_order_id


@pytest.mark.slow
async def test_confirming_then_cancel_or_send(sandbox: SandboxProcess) -> None:
    async with open_ticket(sandbox) as (d, ticket, results):
        ticket.set_size("100")
        step = ticket.submit(confirm=True)
        assert step.kind == "confirming" and state(ticket) is TicketState.CONFIRMING
        assert step.preview is seen(ticket)
        assert ticket.submit(confirm=True).kind == "busy"
        assert not ticket.set_size("200")  # the confirmation shows what Send sends
        assert ticket.fields.size == "100"
        assert ticket.answer(False, seen(ticket)).kind == "not_sent"
        assert state(ticket) is TicketState.EDITING and d.journal.entries() == []
        shown = ticket.submit(confirm=True).preview
        assert shown is not None
        assert ticket.answer(True, shown).kind == "sending"
        assert ticket.answer(True, shown).kind == "busy"  # one answer per confirmation
        await until(lambda: state(ticket) is TicketState.SETTLED)
        assert [r.status for r in results] == ["filled"]
        ticket.set_size("101")
        assert state(ticket) is TicketState.EDITING


@pytest.mark.slow
async def test_a_refusal_and_an_unknown_that_settles(sandbox: SandboxProcess) -> None:
    async with open_ticket(sandbox) as (d, ticket, results):
        ticket.set_size("900000")
        ticket.submit(confirm=False)
        await until(lambda: state(ticket) is TicketState.REFUSED)
        assert results[-1].message.startswith("Insufficient Funds")
        orders_list = f"/order/account/{d.account}"
        await d.faults(
            {"kind": "drop_after_commit", "path": d.order_path(), "count": 1},
            {"kind": "status", "status": 503, "method": "GET", "path": orders_list},
        )
        d.desk.settle_delays = (0.2, 0.2, 0.2, 0.2, 0.2)
        ticket.set_size("100")
        ticket.submit(confirm=False)
        await until(lambda: state(ticket) is TicketState.UNKNOWN, timeout=15)
        await d.clear_faults()
        await until(lambda: state(ticket) is TicketState.SETTLED, timeout=15)
        assert [r.status for r in results] == ["rejected", "unknown", "filled"]


# -- preview -> send equality -----------------------------------------------------------------


@pytest.mark.slow
async def test_the_request_sent_is_the_previewed_request_byte_for_byte(
    sandbox: SandboxProcess,
) -> None:
    async with open_ticket(sandbox) as (d, ticket, results):
        ask = d.desk.top_of_book["BTC/USD"].ask
        ticket.set_type("limit")
        ticket.set_size("1000.50")
        ticket.set_limit(f"{(ask / 2).quantize(D(1))}")  # rests
        ticket.set_end(utc_now() + timedelta(hours=1))
        preview = seen(ticket)
        assert preview.rests and preview.request is not None
        body = preview.request.body_text(d.account).encode()
        ticket.submit(confirm=False)
        await until(lambda: state(ticket) is TicketState.SETTLED)
        [post] = d.recorder.sent("POST", "/order")
        assert post.content == body
        entry = d.journal.entry(preview.request.client_order_id)
        assert entry is not None and entry.body.encode() == body
        assert results[0].client_order_id == json.loads(body)["clientOrderId"]


@pytest.mark.slow
async def test_a_market_that_moved_after_the_preview_is_shown_again_not_sent(
    sandbox: SandboxProcess,
) -> None:
    async with open_ticket(sandbox, CheckLimits(max_notional=D(100_000))) as (d, ticket, _):
        ticket.set_side("sell")
        ticket.set_size("1")
        d.session.top_of_book.data.publish(tick("49999", "50001"))
        shown = ticket.submit(confirm=True).preview
        assert shown is not None and not shown.blocks
        d.session.top_of_book.data.publish(tick("199999", "200001"))  # while confirming
        moved = seen(ticket)
        assert moved.snapshot_id > shown.snapshot_id and moved.blocks
        assert moved.request == shown.request  # the same order, on another market
        step = ticket.answer(True, shown)  # re-checked on the new market: refused
        assert step.kind == "blocked" and "limit" in step.message
        assert state(ticket) is TicketState.EDITING
        d.session.top_of_book.data.publish(tick("49999", "50001"))  # calm again
        assert not seen(ticket).blocks
        assert d.journal.entries() == [] and d.recorder.sent("POST", "/order") == []
        shown = seen(ticket)
        await d.session.balances.poll_once()  # a balances answer is a new snapshot too
        step = ticket.send(shown)  # ... that changes nothing the trader was shown: sent
        assert step.kind == "sending" and step.preview is not None
        assert step.preview.snapshot_id > shown.snapshot_id  # checked on the newest market
        assert step.preview.request == shown.request
        await until(lambda: state(ticket) is TicketState.SETTLED)
        [post] = d.recorder.sent("POST", "/order")
        assert shown.request is not None
        assert post.content == shown.request.body_text(d.account).encode()


@pytest.mark.slow
async def test_a_confirmation_is_answered_for_what_it_showed(sandbox: SandboxProcess) -> None:
    """A tick between the confirmation and Send that brings a check the trader was not shown
    (the limit is now far from the bid) sends nothing; ticks that change nothing shown (the
    prices) or take a warning away send the confirmed request, checked on the newest
    snapshot."""
    async with open_ticket(sandbox) as (d, ticket, _):
        d.session.top_of_book.data.publish(tick("49990", "50010"))
        ticket.set_side("sell")
        ticket.set_type("limit")
        ticket.set_size("0.01")
        ticket.set_limit("50000")
        shown = ticket.submit(confirm=True).preview
        assert shown is not None and shown.rests
        assert "limit_distance" not in {check.code for check in shown.checks}
        d.session.top_of_book.data.publish(tick("53000", "53010"))  # 5.7 % from the bid
        assert seen(ticket).request == shown.request and not seen(ticket).blocks
        step = ticket.answer(True, shown)
        assert step.kind == "moved" and "a new check (limit is" in step.message
        assert "away from the bid" in step.message
        assert state(ticket) is TicketState.EDITING and step.preview is seen(ticket)
        assert d.journal.entries() == [] and d.recorder.sent("POST", "/order") == []
        shown = ticket.submit(confirm=True).preview  # Enter again: the new terms
        assert shown is not None and "limit_distance" in {check.code for check in shown.checks}
        d.session.top_of_book.data.publish(tick("53100", "53110"))  # only the prices move
        d.session.top_of_book.data.publish(tick("50005", "50015"))  # and the warning goes
        assert seen(ticket).snapshot_id > shown.snapshot_id and not seen(ticket).checks
        step = ticket.answer(True, shown)
        assert step.kind == "sending" and step.preview is not None
        assert step.preview.snapshot_id == seen(ticket).snapshot_id > shown.snapshot_id
        await until(lambda: state(ticket) in (TicketState.SETTLED, TicketState.REFUSED))
        [post] = d.recorder.sent("POST", "/order")
        assert shown.request is not None
        assert post.content == shown.request.body_text(d.account).encode()


@pytest.mark.slow
async def test_nothing_changes_the_order_while_it_is_confirmed(sandbox: SandboxProcess) -> None:
    """A settings change (the resting time) or a tick that drops the size check does not
    touch the fields a confirmation shows: Send sends them as shown, the override included."""
    clock = [utc_now()]
    limits = CheckLimits(max_notional=D(100_000))
    async with open_ticket(sandbox, limits, now=lambda: clock[0]) as (d, ticket, _):
        d.session.top_of_book.data.publish(tick("199990", "200010"))
        ticket.set_side("sell")
        ticket.set_type("limit")
        ticket.set_size("1")
        ticket.set_limit("200000")
        assert [c.code for c in seen(ticket).blocks] == ["fat_finger"]
        ticket.set_override(True)
        shown = ticket.submit(confirm=True).preview
        assert shown is not None and shown.fat_finger and not shown.blocks
        assert shown.request is not None and shown.request.end_at is not None
        clock[0] += timedelta(hours=1)
        ticket.apply({}, 2.0)  # Settings while the box is up
        assert ticket.fields.end_at == shown.fields.end_at
        d.session.top_of_book.data.publish(tick("49990", "50010"))  # no size check now
        assert ticket.fields.override  # the confirmation's override stands
        d.session.top_of_book.data.publish(tick("199990", "200010"))
        assert seen(ticket).fat_finger and not seen(ticket).blocks
        assert ticket.answer(True, shown).kind == "sending"
        await until(lambda: state(ticket) in (TicketState.SETTLED, TicketState.REFUSED))
        [post] = d.recorder.sent("POST", "/order")
        assert post.content == shown.request.body_text(d.account).encode()
        ticket.set_size("0.5")  # editing again: the default end follows the setting
        assert ticket.fields.end_at is not None and ticket.fields.end_at > shown.request.end_at
        d.session.top_of_book.data.publish(tick("49990", "50010"))
        assert not ticket.fields.override  # and an override with nothing to override goes


@pytest.mark.slow
async def test_an_unknown_that_settles_during_its_confirmation_is_not_sent_again(
    sandbox: SandboxProcess,
) -> None:
    """Enter again on an unknown confirms the same client id (the service would replay it, not
    place a second order). When the lookup finds the order while that box is up, the ticket's
    next order gets a new id, and Send refuses: that would be a second order, unread."""
    async with open_ticket(sandbox) as (d, ticket, results):
        orders_list = f"/order/account/{d.account}"
        await d.faults(
            {"kind": "drop_after_commit", "path": d.order_path(), "count": 1},
            {"kind": "status", "status": 503, "method": "GET", "path": orders_list},
        )
        d.desk.settle_delays = (0.2,) * 5
        d.desk.session_delay = 0.2
        ticket.set_size("100")
        ticket.submit(confirm=False)
        await until(lambda: state(ticket) is TicketState.UNKNOWN, timeout=15)
        lost = results[-1].client_order_id
        shown = ticket.submit(confirm=True).preview
        assert shown is not None and shown.request is not None
        assert shown.request.client_order_id == lost
        await d.clear_faults()
        await until(lambda: results[-1].status == "filled", timeout=15)
        assert state(ticket) is TicketState.CONFIRMING  # the answer does not close the box
        current = seen(ticket).request
        assert current is not None and current.client_order_id != lost
        step = ticket.answer(True, shown)
        assert step.kind == "moved" and "the order changed" in step.message
        assert len(d.recorder.sent("POST", "/order")) == 1
        assert [o.client_order_id for o in await d.client.orders()] == [lost]


@pytest.mark.slow
async def test_closing_with_a_send_in_flight_leaves_it_unknown(sandbox: SandboxProcess) -> None:
    """The ticket closes under a send still waiting for its answer: the journal says unknown
    (it may have reached the service; the next start looks it up), never failed."""
    async with open_ticket(sandbox) as (d, ticket, _):
        await d.faults({"kind": "latency", "seconds": 0.5, "path": d.order_path()})
        ticket.set_size("100")
        step = ticket.submit(confirm=False)
        assert step.kind == "sending" and step.preview is not None
        request = step.preview.request
        assert request is not None
        await until(lambda: d.recorder.sent("POST", "/order") != [])
        ticket.close()
        await until(lambda: not d.desk.sending)
        entry = d.journal.entry(request.client_order_id)
        assert entry is not None and entry.status == "unknown"
