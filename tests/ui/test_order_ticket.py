"""The order ticket against the real sandbox: fills, limit conversion both ways, refusals shown
with the server's words, one order per double Enter, unknown outcomes settled, F2."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QMainWindow, QMessageBox, QPushButton
from pytestqt.qtbot import QtBot

from app.domain import AssetPair, Price
from app.domain.pair_terms import Trade
from app.domain.records import TopOfBook
from app.services.order_intent import TicketState
from app.services.pretrade import CheckLimits
from app.services.terminal import Terminal
from app.ui.bridge import SessionBridge
from app.ui.main_window import Area, MainWindow, PanelSpec
from app.ui.order_confirm import SETTINGS_KEY as CONFIRM_KEY
from app.ui.panels.base import PanelContext
from app.ui.panels.order_ticket import OrderTicketPanel
from tests.harness import Faults, SandboxProcess
from tests.helpers.live import Live, LiveFactory
from tests.helpers.order_ticket import open_ticket, server_orders, side
from tests.helpers.qt import run, type_into


def order_path(live: Live) -> str:
    return f"/account/{live.session.environment.account}/order(/limit)?$"


# -- the ticket as typed ---------------------------------------------------------------------------


def test_pair_preset_from_the_selection_then_buy_or_sell(qtbot: QtBot, live: Live) -> None:
    panel = open_ticket(qtbot, live)
    assert side(panel) == "buy" and panel.buy_button.isChecked()  # a new ticket buys
    assert panel.size_unit.text() == "USD to spend"  # a buy spends the quote (the wire's size)
    choices = [panel.pair_box.itemText(i) for i in range(panel.pair_box.count())]
    assert sorted(choices) == sorted(live.session.available_pairs)
    QTest.mouseClick(panel.sell_button, Qt.MouseButton.LeftButton)
    assert side(panel) == "sell" and panel.size_unit.text() == "BTC to sell"
    live.bridge.select_pair("ETH/USD")  # the side is kept
    qtbot.waitUntil(lambda: panel.pair_box.currentText() == "ETH/USD")
    assert side(panel) == "sell" and panel.size_unit.text() == "ETH to sell"
    type_into(qtbot, panel.size_edit, "2")
    assert panel.send_button.text() == "Sell 2 ETH"


def test_limit_typed_the_traders_way_shows_the_wire_value(qtbot: QtBot, live: Live) -> None:
    panel = open_ticket(qtbot, live)
    panel.type_box.setCurrentIndex(panel.type_box.findData("limit"))
    type_into(qtbot, panel.size_edit, "1000")
    type_into(qtbot, panel.limit_edit, "90,000")
    assert panel.limit_unit.text() == "USD per BTC"
    assert panel.wire_label.text() == (
        "details: wire 0.0000111111111111112 USD/BTC · buy BTC paying at most 90,000 USD per BTC"
    )
    # the other way round: the wire value typed with its units reads back as 90,000
    type_into(qtbot, panel.limit_edit, "0.0000111111111111112 USD/BTC")
    assert panel.wire_label.text().endswith("buy BTC paying at most 90,000 USD per BTC")
    panel.set_side("sell")  # selling BTC: the limit is the least USD per BTC, sent as typed
    type_into(qtbot, panel.size_edit, "0.01")
    type_into(qtbot, panel.limit_edit, "59000")
    assert panel.wire_label.text() == (
        "details: wire 59000 BTC/USD · sell BTC receiving at least 59,000 USD per BTC"
    )


def test_a_resting_limit_carries_the_converted_wire_limit(qtbot: QtBot, live: Live) -> None:
    panel = open_ticket(qtbot, live)
    bid = live.desks.orders.top_of_book["BTC/USD"].bid
    far_below = (bid / 2).quantize(Decimal(1))  # buy BTC at most half the bid: rests
    panel.type_box.setCurrentIndex(panel.type_box.findData("limit"))
    type_into(qtbot, panel.size_edit, "1000")
    type_into(qtbot, panel.limit_edit, str(far_below))
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.outcome_label.text().startswith("Resting"), timeout=10_000)
    [order] = server_orders(qtbot, live)
    assert order.limit is not None and (order.limit.base, order.limit.quote) == ("USD", "BTC")
    # what left the machine (journaled as sent) is never looser than what was typed ...
    entry = live.desks.journal.entry(order.client_order_id)
    assert entry is not None
    sent = Price(Decimal(entry.request["limit"]), "USD", "BTC")  # the wire number, as sent
    assert Decimal(1) / sent.value <= far_below
    # ... and the service's order echoes it (rounded for display by the service)
    assert abs(Decimal(1) / order.limit.value - far_below) / far_below < Decimal("1e-10")


def test_bad_input_is_explained_and_nothing_is_sent(qtbot: QtBot, live: Live) -> None:
    panel = open_ticket(qtbot, live)
    type_into(qtbot, panel.size_edit, "12abc")
    assert panel.input_error.text() == "size '12abc' is not a number"
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Return)
    assert panel.size_edit.text() == "12abc"  # what was typed stays
    panel.type_box.setCurrentIndex(panel.type_box.findData("limit"))
    type_into(qtbot, panel.size_edit, "100")
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Return)
    assert panel.input_error.text() == "a limit order needs a limit price"
    assert panel.limit_edit.hasFocus() or not panel.isActiveWindow()
    assert server_orders(qtbot, live) == []


# -- live price, what-if, checks -------------------------------------------------------------------


def test_estimate_and_what_if_follow_the_typing(qtbot: QtBot, live: Live) -> None:
    panel = open_ticket(qtbot, live)
    type_into(qtbot, panel.size_edit, "1000")
    qtbot.waitUntil(
        lambda: panel.estimate_label.text().startswith("Buy BTC · spend 1,000.00 USD → ≈ "),
        timeout=5_000,
    )
    text = panel.estimate_label.text()
    assert " BTC at ≈ " in text and "USD/BTC" not in text and "BTC/USD" not in text
    # USD 100000 free: spending 1000 leaves 99,000.00
    qtbot.waitUntil(lambda: panel.what_if_cells[0][1].text() == "100,000.00 → 99,000.00")
    assert panel.what_if_cells[0][0].text() == "USD"
    assert panel.verdict_label.text() == "within free funds"
    type_into(qtbot, panel.size_edit, "120000")  # beyond funds, within the 50,000 credit
    qtbot.waitUntil(lambda: panel.verdict_label.text().startswith("uses 20,000.00 USD of credit"))
    type_into(qtbot, panel.size_edit, "200000")
    qtbot.waitUntil(lambda: "Insufficient Funds" in panel.verdict_label.text())
    assert "above the available funds plus credit" in panel.checks_label.text()


def test_fat_finger_blocks_until_overridden(qtbot: QtBot, live: Live) -> None:
    panel = open_ticket(qtbot, live)
    panel.set_side("sell")  # sell BTC: 0.5 BTC are far above a 1,000 USD cap
    live.desks.orders.limits = type(live.desks.orders.limits)(max_notional=Decimal(1000))
    type_into(qtbot, panel.size_edit, "0.5")
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Return)
    assert "limit; confirm to override" in panel.input_error.text()
    assert panel.override_check.isVisible()
    assert server_orders(qtbot, live) == []
    panel.override_check.setChecked(True)
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.outcome_label.text().startswith("Sold"), timeout=10_000)
    assert len(server_orders(qtbot, live)) == 1


# -- sending ---------------------------------------------------------------------------------


def test_a_limit_order_fills_end_to_end(qtbot: QtBot, live: Live) -> None:
    panel = open_ticket(qtbot, live)
    ask = live.desks.orders.top_of_book["BTC/USD"].ask
    panel.type_box.setCurrentIndex(panel.type_box.findData("limit"))
    type_into(qtbot, panel.size_edit, "1000")
    type_into(qtbot, panel.limit_edit, str((ask * Decimal("1.01")).quantize(Decimal(1))))
    client_id = panel.client_id_label.text()
    fills: list[None] = []
    live.session.fills.subscribe(fills.append)
    before = live.desks.orders.balances
    assert before is not None
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.outcome_label.text().startswith("Bought"), timeout=10_000)
    [order] = server_orders(qtbot, live)
    assert order.client_order_id == client_id
    assert order.order_id in panel.outcome_label.text()
    assert panel.outcome_label.text().endswith("(spent 1,000.00 USD) · order " + order.order_id)
    assert fills  # the record views were told at once
    qtbot.waitUntil(  # balances refreshed at once (the poll interval here is 1 s)
        lambda: (
            live.desks.orders.balances is not None
            and live.desks.orders.balances.portfolio.balances["USD"].available_funds
            == Decimal(99000)
        ),
        timeout=3_000,
    )
    assert panel.client_id_label.text() != client_id  # the next order gets a new id
    assert panel.size_edit.text() == "1000"


def test_a_market_order_fills(qtbot: QtBot, live: Live) -> None:
    panel = open_ticket(qtbot, live)
    QTest.keyClick(panel.size_edit, Qt.Key.Key_S, Qt.KeyboardModifier.AltModifier)  # Sell
    assert side(panel) == "sell" and panel.sell_button.isChecked()
    type_into(qtbot, panel.size_edit, "0.25")
    assert panel.send_button.text() == "Sell 0.25 BTC"
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.outcome_label.text().startswith("Sold"), timeout=10_000)
    [order] = server_orders(qtbot, live)
    assert (order.source, order.destination, order.size.value) == ("BTC", "USD", Decimal("0.25"))
    assert order.type == "market"
    trade = Trade.of(order, live.session.pair_info)
    assert trade is not None
    sentence = trade.sentence(live.context.precision)  # "Sold 0.25 BTC at 90,… USD (received …)"
    assert panel.outcome_label.text() == f"{sentence} · order {order.order_id}"
    assert "/" not in panel.outcome_label.text()  # no wire price (USD/BTC) in the main text


@pytest.mark.slow
def test_insufficient_funds_shows_the_servers_words(
    qtbot: QtBot, live_factory: LiveFactory, sandbox: SandboxProcess
) -> None:
    live = live_factory(sandbox, balances={"USD": "100", "BTC": "0"}, credit={})
    panel = open_ticket(qtbot, live)
    type_into(qtbot, panel.size_edit, "1000")
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.outcome_label.property("level") == "error", timeout=10_000)
    assert panel.outcome_label.text() == (
        "Refused by the service: Insufficient Funds: Requested 1000 USD but only 100 USD is "
        "available"
    )
    assert panel.size_edit.text() == "1000"
    assert panel.send_button.isEnabled()


@pytest.mark.slow
def test_credit_not_available_shows_the_servers_words(
    qtbot: QtBot,
    live_factory: LiveFactory,
    sandbox_factory: Callable[..., SandboxProcess],
) -> None:
    closed = sandbox_factory("--credit-hours", "never")
    live = live_factory(closed, balances={"USD": "100", "BTC": "0"}, credit={"USD": "-50000"})
    panel = open_ticket(qtbot, live)
    type_into(qtbot, panel.size_edit, "1000")
    qtbot.waitUntil(lambda: "Credit Not Available" in panel.verdict_label.text())  # predicted
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.outcome_label.property("level") == "error", timeout=10_000)
    assert panel.outcome_label.text().startswith("Refused by the service: Credit Not Available")
    assert server_orders(qtbot, live) == [] or all(
        o.result.status == "rejected" for o in server_orders(qtbot, live)
    )
    assert panel.size_edit.text() == "1000"
    # offered: the same order, queued for the credit window, after a confirmation in words
    assert panel.retry_button.isVisible()
    QTest.mouseClick(panel.retry_button, Qt.MouseButton.LeftButton)
    box = panel.findChild(QMessageBox, "creditRetryConfirmation")
    assert box is not None and "Buy BTC on BTC/USD with 1000 USD" in box.informativeText()
    assert "sent only while the terminal runs" in box.informativeText()
    queue = box.findChild(QPushButton, "creditRetryQueue")
    assert queue is not None
    QTest.mouseClick(queue, Qt.MouseButton.LeftButton)
    engine = live.bridge.algos
    assert engine is not None
    (parent,) = engine.parents.values()
    assert (parent.spec.kind, parent.spec.side, parent.spec.amount) == (
        "credit_retry",
        "buy",
        Decimal(1000),
    )
    assert parent.spec.deadline is not None and not panel.retry_button.isVisible()
    assert panel.outcome_label.text() == f"Queued for the credit window ({parent.id})"


@pytest.mark.slow
def test_double_enter_sends_one_order(qtbot: QtBot, live: Live, faults: Faults) -> None:
    panel = open_ticket(qtbot, live)
    faults({"kind": "latency", "seconds": 0.5, "path": order_path(live)})
    type_into(qtbot, panel.size_edit, "100")
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Return)
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Return)  # while the first is in flight
    assert not panel.send_button.isEnabled()
    QTest.mouseClick(panel.send_button, Qt.MouseButton.LeftButton)  # disabled: nothing
    qtbot.waitUntil(lambda: panel.outcome_label.text().startswith("Bought"), timeout=10_000)
    assert len(server_orders(qtbot, live)) == 1


@pytest.mark.slow
def test_double_enter_with_confirmation_sends_one_order(
    qtbot: QtBot, live: Live, faults: Faults
) -> None:
    window = QMainWindow()
    qtbot.addWidget(window)
    live.context.settings.setValue(CONFIRM_KEY, True)
    panel = OrderTicketPanel(live.context, live.desks.orders)
    window.setCentralWidget(panel)
    window.show()
    window.activateWindow()
    live.bridge.select_pair("BTC/USD")
    qtbot.waitUntil(lambda: panel.pair_box.currentText() == "BTC/USD")
    faults({"kind": "latency", "seconds": 0.5, "path": order_path(live)})
    type_into(qtbot, panel.size_edit, "100")
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Return)  # opens the confirmation
    qtbot.waitUntil(lambda: panel.confirmation.isVisible())
    assert "Buy BTC for 100 USD" in panel.confirmation.text()
    QTest.keyClick(panel.confirmation, Qt.Key.Key_Return)  # Send is the default button
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Return)  # a third Enter while in flight
    qtbot.waitUntil(lambda: panel.outcome_label.text().startswith("Bought"), timeout=10_000)
    assert len(server_orders(qtbot, live)) == 1


def test_cancelling_the_confirmation_sends_nothing(qtbot: QtBot, live: Live) -> None:
    panel = open_ticket(qtbot, live, confirm=True)
    type_into(qtbot, panel.size_edit, "100")
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.confirmation.isVisible())
    QTest.keyClick(panel.confirmation, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: panel.outcome_label.text() == "Not sent.")
    assert panel.send_button.isEnabled()
    assert server_orders(qtbot, live) == []


def test_the_confirmation_shows_the_preview_that_is_sent(qtbot: QtBot, live: Live) -> None:
    """What the confirmation shows (the ticket's preview, its client id among the details) is
    the request that leaves: the journal holds exactly that preview's body."""
    panel = open_ticket(qtbot, live, confirm=True)
    type_into(qtbot, panel.size_edit, "100")
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.confirmation.isVisible())
    shown = panel.ticket.preview
    assert shown.state is TicketState.CONFIRMING and shown.request is not None
    assert f"client id {shown.request.client_order_id}" in panel.confirmation.text()
    assert not panel.send_button.isEnabled()  # one confirmation, one answer
    QTest.keyClick(panel.confirmation, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.outcome_label.text().startswith("Bought"), timeout=10_000)
    [order] = server_orders(qtbot, live)
    assert order.client_order_id == shown.request.client_order_id
    entry = live.desks.journal.entry(order.client_order_id)
    account = live.session.environment.account
    assert entry is not None and entry.body == shown.request.body_text(account)


def test_send_answers_the_confirmation_the_trader_read(qtbot: QtBot, live: Live) -> None:
    """A tick while the box is up may refresh its text, but Send answers for what the box
    opened with: a check that appeared since (the limit now far from the bid) is not sent
    unread, and the box says so before the click."""
    panel = open_ticket(qtbot, live, confirm=True)
    run(qtbot, live.session.top_of_book.stop())  # only the ticks below from now on
    live.session.top_of_book.data.publish(_tick("49990", "50010"))
    panel.preset_pair("BTC/USD")
    panel.set_side("sell")
    panel.type_box.setCurrentIndex(panel.type_box.findData("limit"))
    type_into(qtbot, panel.limit_edit, "50000")
    type_into(qtbot, panel.size_edit, "0.01")
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.confirmation.isVisible())
    assert "Changed since Enter" not in panel.confirmation.text()
    live.session.top_of_book.data.publish(_tick("53000", "53010"))  # 5.7 % from the bid
    assert "Changed since Enter: a new check (limit is" in panel.confirmation.text()
    QTest.keyClick(panel.confirmation, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "a new check" in panel.outcome_label.text())
    assert panel.outcome_label.text().startswith("Not sent:")
    assert panel.send_button.isEnabled() and panel.ticket.state is TicketState.EDITING
    assert server_orders(qtbot, live) == [] and live.desks.journal.entries() == []


@pytest.mark.slow
def test_an_unknown_outcome_says_so_and_settles_itself(
    qtbot: QtBot, live: Live, faults: Faults
) -> None:
    panel = open_ticket(qtbot, live)
    live.desks.orders.settle_delays = (0.5, 0.5, 0.5, 0.5)
    account = live.session.environment.account
    faults(
        {"kind": "drop_after_commit", "path": order_path(live), "count": 1},
        {"kind": "status", "status": 503, "method": "GET", "path": f"/order/account/{account}"},
    )
    type_into(qtbot, panel.size_edit, "100")
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Return)
    qtbot.waitUntil(
        lambda: panel.outcome_label.text().startswith("Outcome unknown"), timeout=20_000
    )
    faults.clear()
    qtbot.waitUntil(lambda: panel.outcome_label.text().startswith("Bought"), timeout=10_000)
    assert len(server_orders(qtbot, live)) == 1


def test_f2_focuses_the_size_field(qtbot: QtBot, live: Live) -> None:
    spec = PanelSpec(
        "orderTicket",
        "Order ticket",
        Area.RightDockWidgetArea,
        lambda context: OrderTicketPanel(context, live.desks.orders),
        shortcut="F2",
    )
    window = MainWindow(live.context, [spec], "test")
    qtbot.addWidget(window)
    window.show()
    window.activateWindow()
    dock = window.docks["orderTicket"]
    panel = dock.widget()
    assert isinstance(panel, OrderTicketPanel)
    type_into(qtbot, panel.size_edit, "42")
    dock.hide()  # even a closed ticket comes back
    window.log_panel.view.setFocus()
    qtbot.waitUntil(window.isActiveWindow)
    QTest.keyClick(window.log_panel.view, Qt.Key.Key_F2)
    qtbot.waitUntil(lambda: dock.isVisible() and panel.size_edit.hasFocus())
    assert panel.size_edit.selectedText() == "42"
    assert window.go_actions["orderTicket"].shortcut().toString() == "F2"


# -- predictions use the tick that woke them -------------------------------------------------------


def _tick(bid: str, ask: str) -> dict[str, TopOfBook]:
    pair = AssetPair.parse("BTC/USD")
    spread = Decimal(ask) - Decimal(bid)
    return {"BTC/USD": TopOfBook(pair, Decimal(bid), D1, Decimal(ask), D1, spread)}


D1 = Decimal(1)


@pytest.mark.parametrize("first", ["bridge", "desk"])
def test_the_checks_use_the_tick_the_ticket_was_woken_by(
    qtbot: QtBot, live: Live, first: str
) -> None:
    """The ticket's checks are computed from the top of book its signal carried,
    never from a desk's cache, so they are right whichever subscriber hears a tick first."""
    run(qtbot, live.session.top_of_book.stop())  # only the ticks below from now on
    bridge = live.bridge
    if first == "desk":  # a bridge subscribed after the desk: the desk hears every tick first
        bridge = SessionBridge(Terminal(live.session))
    context = PanelContext(bridge, live.context.precision, live.context.settings, lambda *_: None)
    live.desks.orders.limits = CheckLimits(max_notional=Decimal(100_000))
    panel = OrderTicketPanel(context, live.desks.orders)
    qtbot.addWidget(panel)
    live.session.set_watchlist(["BTC/USD"])
    live.session.top_of_book.data.publish(_tick("49999", "50001"))
    panel.preset_pair("BTC/USD")
    panel.set_side("sell")
    qtbot.waitUntil(lambda: bridge.balances.latest is not None, timeout=10_000)
    type_into(qtbot, panel.size_edit, "1")
    assert "fat" not in panel.checks_label.text().lower()
    assert panel.override_check.isHidden()

    # Each tick is published once, to every subscriber in order; the ticket must reflect it
    # at once, without waiting for any later event.
    live.session.top_of_book.data.publish(_tick("199999", "200001"))
    assert "above the 100,000 USD limit" in panel.checks_label.text()
    assert not panel.override_check.isHidden()
    live.session.top_of_book.data.publish(_tick("49999", "50001"))
    assert "limit" not in panel.checks_label.text()
    assert panel.override_check.isHidden()
