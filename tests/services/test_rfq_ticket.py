"""The RFQ ticket's rules without a screen, against a real sandbox: states, the units toggle,
accept equals preview, expiry on an injected monotonic clock, one accept at a time."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from decimal import Decimal

import pytest

from app.domain import Amount
from app.domain.display import Precision
from app.services.log_events import LogLevel
from app.services.pretrade import CheckLimits
from app.services.rfq_desk import AMBER_SECONDS, SIDES, AcceptClosed
from app.services.rfq_ticket import OVERRIDE_TEXT, RfqPreview, RfqState, RfqTicket
from tests.harness import SandboxProcess, until
from tests.helpers.rfq import (
    PAIR,
    Desk,
    accept_posts,
    admin_faults,
    clear_faults,
    open_desk,
    start_request_log,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def ticket_sandbox() -> Iterator[SandboxProcess]:
    """Quotes valid for 10 s: nothing in these tests waits for an expiry in real time."""
    process = SandboxProcess("--quote-ttl", "10").start()
    yield process
    process.close()


def open_ticket(d: Desk) -> tuple[RfqTicket, list[RfqPreview]]:
    ticket = RfqTicket(d.desk, Precision())
    published: list[RfqPreview] = []
    ticket.previews.subscribe(published.append)
    return ticket, published


def lines_about(d: Desk, quote_id: str) -> list[LogLevel]:
    """The levels of the session's log lines that name the quote ``quote_id`` (its first eight
    characters: the trader's words shorten it)."""
    return [event.level for event in d.logs if quote_id[:8] in event.message]


def latest(ticket: RfqTicket) -> RfqPreview:
    """The ticket's preview now (a call: not narrowed by a type checker)."""
    return ticket.preview


def follows(ticket: RfqTicket) -> bool:
    """Whether the pair follows the selection now (a call: not narrowed by a type checker)."""
    return ticket.follows_selection


def state(ticket: RfqTicket) -> RfqState:
    """The ticket's state now (a call, so a type checker does not carry it over)."""
    return ticket.state()


async def test_editing_requesting_quoted_accepting_accepted_with_one_accept(
    ticket_sandbox: SandboxProcess,
) -> None:
    async with open_desk(ticket_sandbox) as d:
        ticket, published = open_ticket(d)
        start_request_log(ticket_sandbox)
        try:
            assert state(ticket) == RfqState.EDITING and ticket.preview.live is None
            work = ticket.start_request(PAIR, "0.01")
            assert work is not None
            assert state(ticket) == RfqState.REQUESTING
            assert published[-1].state == RfqState.REQUESTING and not published[-1].can_request
            # No market yet (the feeds are not started): the checks say what they could not do.
            lines = published[-1].message.text.splitlines()
            assert lines[0] == f"Requesting a quote for {PAIR} 0.01 BTC…"
            assert lines[1].endswith("so funds and the size limit are not checked")
            assert ticket.start_request(PAIR, "0.01") is None  # one request at a time
            await work
            assert state(ticket) == RfqState.QUOTED
            preview = ticket.preview
            live = preview.live
            assert live is not None and live is d.desk.current
            assert preview.message.text == "" and preview.can_request and preview.can_requote
            now = ticket.now()
            assert all(preview.clock(side, now).can_accept for side in SIDES)

            shown = preview.sides["buy"].accept
            accepting = ticket.start_accept("buy")
            assert accepting is not None
            assert state(ticket) == RfqState.ACCEPTING
            assert not any(published[-1].clock(side, now).can_accept for side in SIDES)
            # A second Alt+B, and Alt+S, while the first is on its way: nothing is sent.
            assert ticket.start_accept("buy") is None
            assert ticket.preview.message.text == "An accept (buy) is already in flight"
            assert ticket.start_accept("sell") is None
            assert ticket.start_request(PAIR, "0.01") is None
            await accepting
            assert state(ticket) == RfqState.ACCEPTED
            result = ticket.last_result
            assert result is not None and result.status == "filled" and result.order is not None
            assert len(accept_posts(ticket_sandbox, d.user.account)) == 1
            # What was sent is what the preview showed: that quote, that side, those amounts.
            entry = d.journal.entry(result.client_order_id)
            assert entry is not None and entry.request == shown.body()
            assert (shown.quote_id, shown.side) == (live.order_id, "buy")
            assert result.order.size == shown.pay and result.order.result.total == shown.get
            assert ticket.preview.message.level == "fill"
            assert ticket.preview.message.text.startswith("Filled: bought 0.01000000 BTC at ")
            words = [ticket.preview.clock(side, ticket.now()).word for side in SIDES]
            assert words == ["accepted", "not taken"]
        finally:
            clear_faults(ticket_sandbox)
            ticket.close()


async def test_the_quote_expires_on_the_injected_monotonic_clock(
    ticket_sandbox: SandboxProcess,
) -> None:
    """No real time passes: the ticket's clock is the desk's, moved by hand."""
    fake = [1000.0]
    async with open_desk(ticket_sandbox, clock_monotonic=lambda: fake[0]) as d:
        ticket, _ = open_ticket(d)
        start_request_log(ticket_sandbox)
        try:
            work = ticket.start_request(PAIR, "0.01")
            assert work is not None
            await work
            preview = ticket.preview
            assert state(ticket) == RfqState.QUOTED
            assert preview.clock("buy", fake[0]).state == "live"
            # 10 s from the server, less the latest server time the clock allows at receipt:
            # a loaded machine (slow round trips, a wider offset) gives less, never more.
            buy = preview.sides["buy"]
            assert 3.0 < buy.total <= 10.5
            assert preview.accept_margin < AMBER_SECONDS
            fake[0] = buy.deadline - (AMBER_SECONDS + preview.accept_margin) / 2
            assert preview.clock("buy", fake[0]).state == "amber"
            assert state(ticket) == RfqState.QUOTED
            fake[0] = max(view.deadline for view in preview.sides.values()) + 0.1
            assert state(ticket) == RfqState.EXPIRED
            for side in SIDES:
                clock = preview.clock(side, fake[0])
                assert clock.state == "expired" and not clock.can_accept
                assert clock.remaining < 0
            assert ticket.start_accept("buy") is None
            expected = "Not sent: the buy side has expired; request a new quote"
            assert ticket.preview.message.text == expected
            assert state(ticket) == RfqState.EXPIRED
            assert accept_posts(ticket_sandbox, d.user.account) == []
        finally:
            clear_faults(ticket_sandbox)
            ticket.close()


async def test_the_units_toggle_converts_a_typed_size_or_clears_it(
    ticket_sandbox: SandboxProcess,
) -> None:
    async with open_desk(ticket_sandbox, started=True) as d:
        ticket, _ = open_ticket(d)
        try:
            top = d.desk.session.market.snapshot.top(PAIR)
            assert top is not None
            assert ticket.set_units(True, PAIR, "") == ""  # nothing typed: nothing to convert
            assert ticket.set_units(False, PAIR, "") == ""
            top = d.desk.session.market.snapshot.top(PAIR)
            assert top is not None
            converted = ticket.set_units(True, PAIR, "0.01")
            assert Decimal(converted) == (Decimal("0.01") * top.mid).quantize(Decimal("0.01"))
            message = ticket.preview.message
            assert message.level == "info" and message.text.startswith("Size converted at the mid")
            assert message.text.endswith(" USD") and "0.01 BTC ≈ " in message.text
            # The intent carries the asset now in force: the quote is for USD.
            work = ticket.start_request(PAIR, converted)
            assert work is not None
            await work
            live = ticket.live
            assert live is not None and live.size == Amount(Decimal(converted), "USD")
            assert live.quote.buy.source == live.size
            # Back to BTC: converted again, to BTC's 8 decimals. A pair without a book, or no
            # pair at all, clears the size and says so.
            top = d.desk.session.market.snapshot.top(PAIR)
            assert top is not None
            back = ticket.set_units(False, PAIR, converted)
            assert Decimal(back) == (Decimal(converted) / top.mid).quantize(Decimal("1e-8"))
            assert ticket.preview.message.text.endswith(f" ≈ {back} BTC")
            assert ticket.set_units(True, "ZZZ/USD", "5") == ""
            assert ticket.preview.message.level == "warning"
            assert ticket.preview.message.text == (
                "The size was cleared (no price to convert it): enter it in USD"
            )
            # A size that would round to nothing in the other asset is not converted to 0.
            assert ticket.set_units(False, PAIR, "0.0001") == ""
            assert ticket.preview.message.text == (
                "The size was cleared (0.0001 USD is less than 0.00000001 BTC): enter it in BTC"
            )
            assert ticket.set_units(True, "nonsense", "5") == ""
            assert ticket.preview.message.level == "warning"
            assert ticket.preview.message.text == (
                "The size was cleared (no pair to convert it in): choose a pair"
            )
        finally:
            ticket.close()


async def test_the_preview_carries_markup_what_if_and_its_snapshot(
    ticket_sandbox: SandboxProcess,
) -> None:
    async with open_desk(ticket_sandbox, started=True) as d:
        ticket, published = open_ticket(d)
        try:
            work = ticket.start_request(PAIR, "0.01")
            assert work is not None
            await work
            preview = ticket.preview
            snapshot = d.desk.session.market.snapshot
            assert preview.snapshot_id == snapshot.id
            live = preview.live
            top = snapshot.top(PAIR)
            assert live is not None and top is not None
            balances = snapshot.balances
            assert balances is not None
            for side in SIDES:
                shown = preview.sides[side]
                assert shown.markup_bps == live.markup_bps(side, top)
                assert shown.accept.snapshot_id == snapshot.id
                after = shown.what_if
                assert after is not None and after.refusal is None
                quoted = live.quote.side(side)
                assert after.source.asset == quoted.source.asset
                assert after.source.funds_after == after.source.funds - quoted.source.value
                assert after.destination.funds_after == (
                    after.destination.funds + quoted.destination.value
                )
            # A new market snapshot is a new preview, numbered with it.
            before = len(published)
            d.desk.session.market.pairs_changed()
            assert len(published) == before + 1
            assert published[-1].snapshot_id == d.desk.session.market.snapshot.id
        finally:
            ticket.close()


@pytest.mark.slow
async def test_an_accept_sends_only_the_quote_its_preview_showed(
    ticket_sandbox: SandboxProcess,
) -> None:
    async with open_desk(ticket_sandbox) as d:
        ticket, _ = open_ticket(d)
        start_request_log(ticket_sandbox)
        try:
            first = ticket.start_request(PAIR, "0.01")
            assert first is not None
            await first
            shown = ticket.preview.sides["sell"].accept
            await d.desk.request(PAIR, Amount(Decimal("0.02"), "BTC"))  # replaced meanwhile
            with pytest.raises(AcceptClosed, match="quote changed"):
                await d.desk.accept("sell", expect=shown)
            assert accept_posts(ticket_sandbox, d.user.account) == []
            # Through the ticket: Alt+S pressed on the quote on screen, and a new quote (an
            # auto-requote) lands before the accept leaves: nothing is sent for the new one.
            accepting = ticket.start_accept("sell")
            assert accepting is not None
            replaced = await d.desk.request(PAIR, Amount(Decimal("0.03"), "BTC"))
            assert ticket.live is replaced
            await accepting
            assert ticket.last_result is None and state(ticket) == RfqState.QUOTED
            assert latest(ticket).message.text == (
                "Not sent: the quote changed since it was shown; nothing was sent"
            )
            assert accept_posts(ticket_sandbox, d.user.account) == []
        finally:
            clear_faults(ticket_sandbox)
            ticket.close()


@pytest.mark.slow
async def test_a_blocked_request_offers_the_override_until_the_entry_changes(
    ticket_sandbox: SandboxProcess,
) -> None:
    async with open_desk(ticket_sandbox, started=True) as d:
        ticket, _ = open_ticket(d)
        try:
            assert ticket.start_request(PAIR, "100000") is None
            preview = ticket.preview
            assert preview.state == RfqState.EDITING and preview.override_shown
            assert preview.message.text.startswith("Not requested: 100,000 BTC is worth about ")
            assert preview.message.text.endswith(f"Tick “{OVERRIDE_TEXT}” to ask anyway.")
            assert d.desk.events == []
            ticket.set_override(True)
            assert latest(ticket).override
            ticket.entry_changed()  # a different size: the override lapses
            assert not latest(ticket).override_shown and not latest(ticket).override
            assert follows(ticket)
            ticket.pick_pair()
            assert not follows(ticket)
        finally:
            ticket.close()


@pytest.mark.slow
async def test_a_refused_accept_and_a_lost_answer_end_the_quote_honestly(
    ticket_sandbox: SandboxProcess,
) -> None:
    """409 (the quote is over) refuses both sides: REFUSED. A cut connection leaves the outcome
    unknown: UNKNOWN, neither side offered, the trader told in words and by a notice."""
    async with open_desk(ticket_sandbox) as d:
        ticket, _ = open_ticket(d)
        path = f"/account/{d.user.account}/order/rfq/.*/accept$"
        try:
            work = ticket.start_request(PAIR, "0.01")
            assert work is not None
            await work
            admin_faults(ticket_sandbox, [{"kind": "status", "status": 409, "path": path}])
            accepting = ticket.start_accept("sell")
            assert accepting is not None
            await accepting
            clear_faults(ticket_sandbox)
            assert state(ticket) == RfqState.REFUSED
            message = latest(ticket).message
            assert message.level == "error" and message.text.startswith("Refused by the service: ")
            words = [latest(ticket).clock(side, ticket.now()).word for side in SIDES]
            assert words == ["refused", "refused"]

            work = ticket.start_request(PAIR, "0.01")
            assert work is not None
            await work
            assert state(ticket) == RfqState.QUOTED
            live = ticket.live
            assert live is not None
            admin_faults(ticket_sandbox, [{"kind": "drop", "path": path, "count": 1}])
            accepting = ticket.start_accept("buy")
            assert accepting is not None
            await accepting
            assert state(ticket) == RfqState.UNKNOWN
            result = ticket.last_result
            assert result is not None and result.status == "unknown"
            message = latest(ticket).message
            assert message.text.startswith(f"Buy BTC on quote {live.order_id[:8]}: the answer")
            assert message.detail == result.message and result.message
            # told once: the desk's line (log, notice and alert), not again by the ticket
            assert lines_about(d, live.order_id) == [LogLevel.WARNING]
            assert ticket.start_accept("sell") is None
            assert latest(ticket).message.text.startswith(
                "Not sent: the other side's outcome is unknown"
            )
        finally:
            clear_faults(ticket_sandbox)
            ticket.close()


@pytest.mark.slow
async def test_a_lost_answer_stays_unknown_when_the_next_quote_fills(
    ticket_sandbox: SandboxProcess,
) -> None:
    """The fill of a later quote is not the lost accept found: the trader is not told the lost
    one filled, and it stays unknown (the dropped accept never reached the server)."""
    async with open_desk(ticket_sandbox) as d:
        ticket, _ = open_ticket(d)
        path = f"/account/{d.user.account}/order/rfq/.*/accept$"
        try:
            work = ticket.start_request(PAIR, "0.01")
            assert work is not None
            await work
            lost_quote = ticket.live
            assert lost_quote is not None
            admin_faults(ticket_sandbox, [{"kind": "drop", "path": path, "count": 1}])
            accepting = ticket.start_accept("buy")
            assert accepting is not None
            await accepting
            clear_faults(ticket_sandbox)
            lost = ticket.last_result
            assert lost is not None and lost.status == "unknown"
            assert lines_about(d, lost_quote.order_id) == [LogLevel.WARNING]

            work = ticket.start_request(PAIR, "0.01")
            assert work is not None
            await work
            accepting = ticket.start_accept("buy")
            assert accepting is not None
            await accepting
            result = ticket.last_result
            assert result is not None and result.status == "filled"
            assert result.client_order_id != lost.client_order_id
            message = latest(ticket).message
            assert message.level == "fill" and message.text.startswith("Filled: bought ")
            filled = ticket.live
            assert filled is not None
            assert lines_about(d, filled.order_id) == [LogLevel.SUCCESS]  # one line per fill
            assert lines_about(d, lost_quote.order_id) == [LogLevel.WARNING]  # still unknown
            entry = d.journal.entry(lost.client_order_id)
            assert entry is not None and entry.status == "unknown"
        finally:
            clear_faults(ticket_sandbox)
            ticket.close()


async def test_an_accept_goes_with_the_override_its_preview_was_checked_with(
    ticket_sandbox: SandboxProcess,
) -> None:
    """The size limit blocks both sides; the trader overrides it and accepts: the accept is
    the previewed one even if the box is unticked while it is on its way."""
    async with open_desk(ticket_sandbox, started=True) as d:
        ticket, _ = open_ticket(d)
        try:
            work = ticket.start_request(PAIR, "0.01")
            assert work is not None
            await work
            d.desk.limits = CheckLimits(max_notional=Decimal(100))  # 0.01 BTC is worth more
            ticket.refresh()
            preview = latest(ticket)
            assert preview.override_shown and not preview.override
            assert all(preview.sides[side].blocked for side in SIDES)
            ticket.set_override(True)
            preview = latest(ticket)
            assert preview.override and preview.sides["buy"].blocked is None
            assert preview.sides["buy"].accept.override
            accepting = ticket.start_accept("buy")
            assert accepting is not None
            ticket.set_override(False)  # after the press, before the accept leaves
            await accepting
            result = ticket.last_result
            assert result is not None and result.status == "filled"
        finally:
            ticket.close()


@pytest.mark.slow
async def test_an_accept_from_another_window_closes_both_sides_here_while_on_its_way(
    ticket_sandbox: SandboxProcess,
) -> None:
    """Two windows' tickets over one desk: while one window's accept is on the wire, the other
    offers neither side and sends nothing."""
    async with open_desk(ticket_sandbox) as d:
        here, _ = open_ticket(d)
        there, _ = open_ticket(d)
        path = f"/account/{d.user.account}/order/rfq/.*/accept$"
        try:
            work = here.start_request(PAIR, "0.01")
            assert work is not None
            await work
            admin_faults(ticket_sandbox, [{"kind": "latency", "path": path, "seconds": 1}])
            accepting = there.start_accept("buy")
            assert accepting is not None
            task = asyncio.ensure_future(accepting)
            await until(lambda: d.desk.accepting)
            preview = latest(here)
            assert not any(preview.clock(side, here.now()).can_accept for side in SIDES)
            assert here.start_accept("sell") is None
            assert latest(here).message.text == "Not sent: an accept (buy) is already in flight"
            await task
            result = there.last_result
            assert result is not None and result.status == "filled"
            assert len(accept_posts(ticket_sandbox, d.user.account)) == 1
        finally:
            clear_faults(ticket_sandbox)
            here.close()
            there.close()
