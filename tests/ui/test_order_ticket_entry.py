"""Trade entry that cannot surprise the trader, with real keys on the real sandbox: an amount
keeps its asset through the units toggle, a pair switch never carries a limit, an amount finer
than its asset's decimals is refused before anything is sent, and lift offer against a book
that moves between the key and Send fills or expires — it never rests."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QHBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from app.ui.order_confirm import SETTINGS_KEY as CONFIRM_KEY
from app.ui.panels.order_ticket import OrderTicketPanel
from app.ui.preferences import Preferences
from tests.harness import SandboxProcess
from tests.helpers.live import Live, LiveFactory
from tests.helpers.order_ticket import open_ticket, ready, server_orders
from tests.helpers.qt import run, type_into

D = Decimal


def test_the_units_toggle_converts_and_sends_the_asset_sold(qtbot: QtBot, live: Live) -> None:
    panel = open_ticket(qtbot, live)
    type_into(qtbot, panel.size_edit, "1000")
    assert panel.size_unit.text() == "USD to spend" and panel.units_button.text() == "in BTC"
    QTest.mouseClick(panel.units_button, Qt.MouseButton.LeftButton)
    assert panel.size_unit.text() == "BTC to buy" and panel.size_edit.text() != "1000"
    assert panel.outcome_label.text().startswith("1,000 USD → ")
    type_into(qtbot, panel.size_edit, "0.01")  # buy 0.01 BTC at a limit: exact terms
    panel.type_box.setCurrentIndex(panel.type_box.findData("limit"))
    type_into(qtbot, panel.limit_edit, "90000")
    assert panel.wire_label.text().startswith(
        "0.01000000 BTC at the limit 90,000.00 USD → sends 900.00 USD"
    )
    assert panel.send_button.text().startswith("Buy BTC for 900 USD")
    request = panel.ticket.preview.request
    assert request is not None and (request.source, request.size) == ("USD", D("900.00"))


def test_a_pair_switch_never_carries_a_limit(qtbot: QtBot, live: Live) -> None:
    panel = open_ticket(qtbot, live)
    type_into(qtbot, panel.size_edit, "100")
    panel.type_box.setCurrentIndex(panel.type_box.findData("limit"))
    type_into(qtbot, panel.limit_edit, "90000")
    pairs = [panel.pair_box.itemText(i) for i in range(panel.pair_box.count())]
    index = pairs.index("BTC/USD")
    panel.pair_box.setFocus()
    QTest.keyClick(panel.pair_box, Qt.Key.Key_Down if index + 1 < len(pairs) else Qt.Key.Key_Up)
    pair = panel.pair_box.currentText()
    assert pair != "BTC/USD" and panel.ticket.fields.pair == pair
    assert panel.limit_edit.text() != "90000"  # re-seeded from the new pair's book, or cleared
    text = panel.outcome_label.text()
    assert "not carried over" in text or text.startswith("Limit cleared"), text
    top = panel.ticket.market.top(pair)
    if top is not None and panel.limit_edit.text():
        assert D(panel.limit_edit.text()) == top.ask  # a buy: the ask


def test_a_side_switch_never_shows_the_same_digits_in_the_other_asset(
    qtbot: QtBot, live: Live
) -> None:
    panel = open_ticket(qtbot, live)
    type_into(qtbot, panel.size_edit, "1000")
    QTest.keyClick(panel.size_edit, Qt.Key.Key_S, Qt.KeyboardModifier.AltModifier)
    assert panel.size_edit.text() not in ("1000", "")
    assert (
        panel.send_button.text() != "Sell 1,000 BTC" and "1,000 BTC" not in panel.send_button.text()
    )
    assert panel.outcome_label.text().startswith("1,000 USD → ")


def test_an_amount_finer_than_its_asset_is_refused_before_sending(qtbot: QtBot, live: Live) -> None:
    panel = open_ticket(qtbot, live)
    before = server_orders(qtbot, live)
    type_into(qtbot, panel.size_edit, "1000.123")
    assert panel.input_error.text().startswith("USD amounts take at most 2 decimals")
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Return)
    assert panel.ticket.preview.intent is None
    assert server_orders(qtbot, live) == before  # nothing left the terminal
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Backspace)
    assert panel.input_error.text() == ""


def test_the_outcome_line_goes_with_the_next_edit(qtbot: QtBot, live: Live) -> None:
    panel = open_ticket(qtbot, live)
    type_into(qtbot, panel.size_edit, "900000")
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.outcome_label.text().startswith("Refused"), timeout=10_000)
    type_into(qtbot, panel.size_edit, "100")
    assert panel.outcome_label.text() == ""


@pytest.mark.slow
def test_lift_offer_against_a_moving_book_fills_or_expires_never_rests(
    qtbot: QtBot,
    live_factory: LiveFactory,
    sandbox_factory: Callable[..., SandboxProcess],
) -> None:
    sandbox = sandbox_factory()
    live = live_factory(sandbox)

    def pin(mid: str) -> None:
        with sandbox.admin() as admin:
            response = admin.post(
                "/api/v1/sandbox/admin/price", json={"assetPair": "BTC/USD", "mid": mid}
            )
            assert response.status_code == 200, response.text

    pin("90000")
    Preferences(size_presets="USD: 100").save(live.context.settings)
    live.context.settings.setValue(CONFIRM_KEY, True)
    window = QWidget()
    qtbot.addWidget(window)
    panel = OrderTicketPanel(live.context, live.desks.orders, window)
    QHBoxLayout(window).addWidget(panel)
    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    ready(qtbot, live)
    qtbot.waitUntil(lambda: (panel.ticket.touch("buy") or D(0)) < D(90100), timeout=10_000)
    before = server_orders(qtbot, live)
    ctrl_shift = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    QTest.keyClick(panel.size_edit, Qt.Key.Key_B, ctrl_shift)  # lift the offer
    qtbot.waitUntil(lambda: panel.confirmation.isVisible())
    assert "Buy BTC for 100 USD at market, at most " in panel.confirmation.text()
    assert "never rests" in panel.confirmation.text()
    pin("91000")  # the offer runs away (1 %, beyond the 10 bps collar) before Send
    QTest.keyClick(panel.confirmation, Qt.Key.Key_Return)
    qtbot.waitUntil(
        lambda: panel.outcome_label.text().startswith(("Bought", "Resting")), timeout=10_000
    )
    new = [o for o in server_orders(qtbot, live) if o not in before]
    assert len(new) == 1
    order = new[0]
    assert order.limit is not None and order.end_at is not None and order.submitted_at
    assert order.end_at - order.submitted_at <= timedelta(seconds=11)  # ends within seconds

    def done() -> bool:
        found = run(qtbot, live.session.client.order(order.order_id))
        return found.result.status != "submitted"

    qtbot.waitUntil(done, timeout=20_000)  # filled, or expired at its end: never resting
    final = run(qtbot, live.session.client.order(order.order_id))
    assert final.result.status in ("filled", "canceled", "expired"), final.result.status


def test_a_side_switch_that_leaves_the_limit_far_blocks_send_until_it_is_edited(
    qtbot: QtBot, live: Live
) -> None:
    panel = open_ticket(qtbot, live)
    before = server_orders(qtbot, live)
    QTest.keyClick(panel.size_edit, Qt.Key.Key_S, Qt.KeyboardModifier.AltModifier)
    type_into(qtbot, panel.size_edit, "0.01")
    panel.type_box.setCurrentIndex(panel.type_box.findData("limit"))
    bid = panel.ticket.touch("sell")
    assert bid is not None
    far = format((bid * D("1.2")).quantize(D("0.01")), "f")  # a sell resting 20 % above
    type_into(qtbot, panel.limit_edit, far)
    assert not panel.ticket.preview.blocks  # typed by the trader: a warning only
    QTest.keyClick(panel.limit_edit, Qt.Key.Key_B, Qt.KeyboardModifier.AltModifier)
    assert [c.code for c in panel.ticket.preview.blocks] == ["limit_distance"]
    QTest.keyClick(panel.limit_edit, Qt.Key.Key_Return)
    assert "edit the limit to send" in panel.input_error.text()
    assert server_orders(qtbot, live) == before
    QTest.keyClick(panel.limit_edit, Qt.Key.Key_Backspace)  # the trader edits the limit
    assert not panel.ticket.preview.blocks


def test_lift_offer_pressed_twice_asks_once_and_sends_one_order(qtbot: QtBot, live: Live) -> None:
    """A trader in a hurry presses Ctrl+Shift+B twice: the second press meets the open
    confirmation and changes nothing; one Enter sends one order."""
    Preferences(size_presets="USD: 100").save(live.context.settings)
    live.context.settings.setValue(CONFIRM_KEY, True)
    window = QWidget()
    qtbot.addWidget(window)
    panel = OrderTicketPanel(live.context, live.desks.orders, window)
    QHBoxLayout(window).addWidget(panel)
    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    ready(qtbot, live)
    before = server_orders(qtbot, live)
    ctrl_shift = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    QTest.keyClick(panel.size_edit, Qt.Key.Key_B, ctrl_shift)
    qtbot.waitUntil(lambda: panel.confirmation.isVisible())
    request = panel.ticket.preview.request
    QTest.keyClick(panel.confirmation, Qt.Key.Key_B, ctrl_shift)  # the second, reflexive press
    assert panel.confirmation.isVisible()  # the same box, still asking (its price may tick)
    assert panel.ticket.preview.request == request  # the order on screen did not change
    QTest.keyClick(panel.confirmation, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.outcome_label.text().startswith(("Bought", "Resting")))
    new = [o for o in server_orders(qtbot, live) if o not in before]
    assert len(new) == 1
    assert request is not None and new[0].client_order_id == request.client_order_id
