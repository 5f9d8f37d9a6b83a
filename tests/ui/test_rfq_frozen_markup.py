"""The RFQ ticket on screen after an accept (a real Alt+S): each side's markup is the one of the
accept's moment, says so ("at accept"), and stays put while the book keeps moving."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from app.services.rfq_desk import SIDES
from tests.helpers.live import Live
from tests.helpers.rfq_ticket import open_ticket, request

WAIT_MS = 15_000


@pytest.mark.slow
def test_an_accepted_quote_shows_its_markup_at_accept_while_the_book_moves(
    qtbot: QtBot, live: Live
) -> None:
    ticket = open_ticket(qtbot, live)
    panel = ticket.panel
    quote = request(qtbot, panel)
    qtbot.waitUntil(panel.sides["sell"].accept.isEnabled)
    QTest.keyClick(ticket.elsewhere, Qt.Key.Key_S, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(lambda: panel.last_result is not None, timeout=WAIT_MS)
    assert panel.last_result is not None and panel.last_result.status == "filled"
    frozen = {side: quote.settled_markup[side] for side in SIDES}
    assert all(fact.moment == "accept" and fact.bps is not None for fact in frozen.values())
    shown = {side: panel.sides[side].markup.text() for side in SIDES}
    book = {"buy": "ask", "sell": "bid"}
    for side in SIDES:
        bps = frozen[side].bps
        assert bps is not None
        assert shown[side] == f"Markup {bps:+.1f} bp vs {book[side]} at accept"
    # The walking sandbox's book moves on (polled every 0.25 s): new market snapshots come, the
    # markup against them would differ, the shown figure does not.
    market = live.session.market
    start = market.snapshot.id
    qtbot.waitUntil(lambda: market.snapshot.id >= start + 4, timeout=WAIT_MS)
    assert {side: panel.sides[side].markup.text() for side in SIDES} == shown
    assert {side: quote.settled_markup[side] for side in SIDES} == frozen
