"""An RFQ quote's markup is a frozen fact once the quote's fate is settled: computed against the
book of the accept's moment (or of the side's expiry), shown from then on, kept in the journal —
a book that moves afterwards changes nothing. Against a real sandbox, without a screen; the book
the terminal sees is driven through the top-of-book feed's own topic."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import pytest

from app.domain import AssetPair
from app.domain.records import TopOfBook
from app.services.rfq_desk import RFQ_MARKUP, SIDES
from app.services.rfq_ticket import RfqState, RfqTicket
from tests.harness import SandboxProcess, until
from tests.helpers.rfq import PAIR, Desk, open_desk

pytestmark = pytest.mark.anyio
D = Decimal


def show_book(d: Desk, bid: str, ask: str) -> None:
    """The terminal's top of book of ``PAIR`` is now ``bid`` / ``ask`` (a new market snapshot)."""
    top = TopOfBook(AssetPair.parse(PAIR), D(bid), D(1), D(ask), D(1), D(ask) - D(bid))
    d.desk.session.top_of_book.data.publish({PAIR: top})


def markups(ticket: RfqTicket) -> dict[str, Decimal | None]:
    return {side: ticket.preview.sides[side].markup_bps for side in SIDES}


@pytest.mark.slow
async def test_an_accepted_quotes_markup_does_not_follow_the_book_afterwards(
    sandbox_factory: Callable[..., SandboxProcess],
) -> None:
    async with open_desk(sandbox_factory("--quote-ttl", "10")) as d:
        ticket = RfqTicket(d.desk, d.desk.precision)
        try:
            show_book(d, "90000.00", "90010.00")
            work = ticket.start_request(PAIR, "0.01")
            assert work is not None
            await work
            live = ticket.live
            assert live is not None
            at_quote = markups(ticket)
            show_book(d, "90100.00", "90110.00")  # the book moves while the quote is live
            moving = markups(ticket)
            assert moving != at_quote  # a live quote's markup follows the book
            accepting = ticket.start_accept("buy")
            assert accepting is not None
            await accepting
            assert ticket.state() == RfqState.ACCEPTED
            at_accept = markups(ticket)
            book = d.desk.session.market.snapshot.top(PAIR)
            assert book is not None
            assert at_accept == {side: live.markup_bps(side, book) for side in SIDES}
            # The book moves a long way after the accept: the figures stay as they were.
            show_book(d, "95000.00", "95010.00")
            show_book(d, "85000.00", "85010.00")
            assert markups(ticket) == at_accept
            assert {ticket.preview.sides[side].markup_moment for side in SIDES} == {"accept"}
            moved = d.desk.session.market.snapshot.top(PAIR)
            assert moved is not None and live.markup_bps("buy", moved) != at_accept["buy"]
            # Kept in the journal under the quote's id, with the book it was measured on.
            for side in SIDES:
                stored = d.journal.facts(f"{RFQ_MARKUP}_{side}", [live.order_id])[live.order_id]
                assert stored["moment"] == "accept"
                assert D(stored["bps"]) == at_accept[side]
                assert (stored["bid"], stored["ask"]) == ("90100.00", "90110.00")
        finally:
            ticket.close()


@pytest.mark.slow
async def test_an_expired_quotes_markup_is_the_one_of_its_expiry(
    sandbox_factory: Callable[..., SandboxProcess],
) -> None:
    async with open_desk(sandbox_factory("--quote-ttl", "1")) as d:
        ticket = RfqTicket(d.desk, d.desk.precision)
        try:
            show_book(d, "90000.00", "90010.00")
            work = ticket.start_request(PAIR, "0.01")
            assert work is not None
            await work
            live = ticket.live
            assert live is not None
            await until(lambda: live.expired_reported == set(SIDES), timeout=10)
            at_expiry = markups(ticket)
            assert at_expiry["buy"] is not None and at_expiry["sell"] is not None
            show_book(d, "95000.00", "95010.00")
            assert markups(ticket) == at_expiry
            assert {ticket.preview.sides[side].markup_moment for side in SIDES} == {"expiry"}
            for side in SIDES:
                stored = d.journal.facts(f"{RFQ_MARKUP}_{side}", [live.order_id])[live.order_id]
                assert stored["moment"] == "expiry" and D(stored["bps"]) == at_expiry[side]
        finally:
            ticket.close()
