"""The order ticket in the trader's terms, against the real sandbox — Buy/Sell of a
pair's base with side colours and Alt keys, what is spent and received in words, estimates
refreshed with their age (and never presented stale), limit orders that rest said plainly with
their end time, refusals instead of negative credit, Send disabled offline, messages in words.
"""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QHBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from app.domain import utc_now
from app.domain.pair_terms import Trade
from app.services.log_events import LogEvent
from app.services.session import TerminalSession
from app.services.terminal import Terminal
from app.ui.bridge import SessionBridge
from app.ui.order_confirm import SETTINGS_KEY as CONFIRM_KEY
from app.ui.palette import current_palette
from app.ui.panels.base import PanelContext
from app.ui.panels.order_ticket import OrderTicketPanel
from app.ui.panels.rfq_ticket import RfqTicketPanel
from app.ui.preferences import Preferences
from tests.harness import Faults, SandboxProcess
from tests.helpers.live import Live, LiveFactory
from tests.helpers.order_ticket import open_ticket, server_orders, side
from tests.helpers.qt import run, type_into

#: A price as the trader reads it: grouped, two decimals (BTC/USD's price increment is 0.01).
USD_PRICE = r"\d{1,3}(,\d{3})*\.\d{2} USD"


def limit_order(qtbot: QtBot, panel: OrderTicketPanel, size: str, limit: Decimal) -> None:
    panel.type_box.setCurrentIndex(panel.type_box.findData("limit"))
    type_into(qtbot, panel.size_edit, size)
    type_into(qtbot, panel.limit_edit, str(limit))


# -- pair, then Buy or Sell ------------------------------------------------------------------------


def test_buy_and_sell_wear_the_side_colours_and_answer_alt_b_alt_s(
    qtbot: QtBot, live: Live
) -> None:
    panel = open_ticket(qtbot, live)
    palette = current_palette()
    assert palette.bid.name() in panel.buy_button.styleSheet()
    assert palette.ask.name() in panel.sell_button.styleSheet()
    assert "Alt+B" in panel.buy_button.text() and "Alt+S" in panel.sell_button.text()
    # The old rule kept the digits in the other asset ("Sell 0.5 BTC" from 0.5 USD); the side
    # switch now never shows the same digits in the other asset: converted at the mid.
    type_into(qtbot, panel.size_edit, "10000")
    QTest.keyClick(panel.size_edit, Qt.Key.Key_S, Qt.KeyboardModifier.AltModifier)
    assert side(panel) == "sell" and panel.size_edit.text() != "10000"  # nothing typed
    assert panel.size_unit.text() == "BTC to sell"
    assert panel.outcome_label.text().startswith("10,000 USD → ")
    assert " BTC at " in panel.outcome_label.text()
    assert panel.send_button.text() == f"Sell {panel.size_edit.text().rstrip('0')} BTC"
    QTest.keyClick(panel.size_edit, Qt.Key.Key_B, Qt.KeyboardModifier.AltModifier)
    assert side(panel) == "buy" and panel.size_unit.text() == "USD to spend"
    assert panel.send_button.text().startswith("Buy BTC for ")
    assert " BTC → " in panel.outcome_label.text()


def test_alt_b_in_the_ticket_does_not_reach_the_rfq_ticket(qtbot: QtBot, live: Live) -> None:
    """Both tickets in one window: Alt+B / Alt+S with the focus in the order ticket pick its
    side; the RFQ ticket's Alt+B / Alt+S (its button mnemonics) are not triggered."""
    live.context.settings.setValue(CONFIRM_KEY, False)
    window = QWidget()
    qtbot.addWidget(window)
    order = OrderTicketPanel(live.context, live.desks.orders, window)
    rfq = RfqTicketPanel(live.context, live.desks.rfq, window)
    both = QHBoxLayout(window)
    both.addWidget(order)
    both.addWidget(rfq)
    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    live.bridge.select_pair("BTC/USD")
    qtbot.waitUntil(lambda: order.pair_box.currentText() == "BTC/USD")
    qtbot.waitUntil(lambda: rfq.pair_box.currentText() == "BTC/USD")
    rfq.size_edit.setText("0.01")
    QTest.keyClick(rfq.size_edit, Qt.Key.Key_Return)  # a live quote: its Alt+S / Alt+B armed
    qtbot.waitUntil(rfq.sides["sell"].accept.isEnabled, timeout=10_000)
    order.size_edit.setFocus()
    QTest.keyClick(order.size_edit, Qt.Key.Key_S, Qt.KeyboardModifier.AltModifier)
    assert side(order) == "sell"
    QTest.keyClick(order.size_edit, Qt.Key.Key_B, Qt.KeyboardModifier.AltModifier)
    assert side(order) == "buy"
    assert rfq.sides["sell"].accept.isEnabled() and rfq.sides["buy"].accept.isEnabled()
    assert rfq.last_result is None
    assert server_orders(qtbot, live) == []  # no quote accepted, no order placed
    assert rfq.last_result is None


def test_a_buy_says_what_it_spends_and_about_what_it_gets(qtbot: QtBot, live: Live) -> None:
    panel = open_ticket(qtbot, live)
    type_into(qtbot, panel.size_edit, "10000")
    assert panel.size_unit.text() == "USD to spend"
    assert panel.send_button.text() == "Buy BTC for 10,000 USD"
    qtbot.waitUntil(lambda: panel.estimate_label.text().startswith("Buy BTC"), timeout=5_000)
    text = panel.estimate_label.text()
    assert re.fullmatch(
        rf"Buy BTC · spend 10,000\.00 USD → ≈ 0\.\d{{8}} BTC at ≈ {USD_PRICE} · "
        r"(just now|\d+ s ago)",
        text,
    ), text
    assert "/" not in text  # the wire's USD/BTC is not in the main text


# -- fresh prices ------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_estimate_follows_the_book_and_shows_its_age(qtbot: QtBot, live: Live) -> None:
    panel = open_ticket(qtbot, live)
    type_into(qtbot, panel.size_edit, "1000")
    qtbot.waitUntil(lambda: panel.ticket.estimate is not None, timeout=5_000)
    assert panel.ticket.estimate is not None
    first = panel.ticket.estimate.at
    # no typing: the top of book ticks (every 0.25 s here) bring newer estimates
    qtbot.waitUntil(
        lambda: panel.ticket.estimate is not None and panel.ticket.estimate.at > first + 0.5,
        timeout=5_000,
    )
    run(qtbot, live.session.top_of_book.stop())  # the book stops: the estimate ages
    qtbot.waitUntil(lambda: "1 s ago" in panel.estimate_label.text(), timeout=4_000)
    panel.stale_after = 1.5
    qtbot.waitUntil(lambda: "stale" in panel.estimate_label.text(), timeout=4_000)
    assert panel.estimate_label.property("level") == "warning"


@pytest.mark.slow
def test_the_confirmation_never_presents_a_stale_estimate(qtbot: QtBot, live: Live) -> None:
    panel = open_ticket(qtbot, live, confirm=True)
    run(qtbot, live.session.top_of_book.stop())
    panel.stale_after = 1.0
    type_into(qtbot, panel.size_edit, "100")
    qtbot.waitUntil(lambda: "stale" in panel.estimate_label.text(), timeout=5_000)
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.confirmation.isVisible())
    # at once: no stale price shown as current, a fresh one asked for ...
    assert "stale; asking for a fresh one" in panel.confirmation.text()
    # ... and shown in the confirmation when it comes
    qtbot.waitUntil(
        lambda: "Buy BTC · spend 100.00 USD → ≈" in panel.confirmation.text(), timeout=5_000
    )
    assert "stale" not in panel.confirmation.text()
    QTest.keyClick(panel.confirmation, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: panel.outcome_label.text() == "Not sent.")


# -- limit orders that rest --------------------------------------------------------------------


def test_a_passive_limit_says_it_rests_what_it_locks_and_until_when(
    qtbot: QtBot, live: Live
) -> None:
    Preferences(resting_hours=Decimal(2)).save(live.context.settings)
    panel = open_ticket(qtbot, live, confirm=True)
    ask = live.desks.orders.top_of_book["BTC/USD"].ask
    below = (ask * Decimal("0.97")).quantize(Decimal(1))  # a buy limit below the ask: rests
    before = utc_now()
    limit_order(qtbot, panel, "1000", below)
    end = panel.form().end_at
    assert end is not None  # computed now, from the setting (not frozen at launch)
    assert before + timedelta(hours=2) <= end <= utc_now() + timedelta(hours=2, minutes=1)
    until = f"{end:%H:%M} UTC"
    rest = panel.rest_label.text()
    assert rest.startswith("Rests: the ask is ")
    assert f"Locks 1,000.00 USD until {until}" in rest
    assert rest.endswith("it cannot be cancelled before then.")
    qtbot.waitUntil(lambda: panel.what_if_cells[0][1].text() == "100,000.00 → 99,000.00")
    assert panel.what_if_cells[1][1].text() == "2.00000000 → on fill"  # locked now, BTC later
    estimate = panel.estimate_label.text()
    assert estimate.startswith("If filled at the limit: ≥ 0.")  # not a market fill
    assert "≈" not in estimate
    assert panel.send_button.text() == f"Buy BTC for 1,000 USD at ≤ {below:,}.00 USD"
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.confirmation.isVisible())
    confirmation = panel.confirmation.text()
    assert "Rests: the ask is" in confirmation and "cannot be cancelled before then" in confirmation
    assert "≈" not in confirmation  # no market fill predicted for a resting order
    QTest.keyClick(panel.confirmation, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.outcome_label.text().startswith("Resting"), timeout=10_000)
    [order] = server_orders(qtbot, live)
    assert order.end_at == end
    assert re.fullmatch(
        rf"Resting: buy ≥ 0\.\d{{8}} BTC for 1,000\.00 USD at ≤ {below:,}\.00 USD until "
        rf"{until} · order {order.order_id}",
        panel.outcome_label.text(),
    ), panel.outcome_label.text()


def test_without_an_end_time_it_says_it_rests_for_ever_and_a_marketable_limit_fills(
    qtbot: QtBot, live: Live
) -> None:
    panel = open_ticket(qtbot, live)
    ask = live.desks.orders.top_of_book["BTC/USD"].ask
    limit_order(qtbot, panel, "1000", (ask * Decimal("0.97")).quantize(Decimal(1)))
    panel.end_check.setChecked(False)
    assert panel.rest_label.text().endswith("with no end time it cannot be cancelled, ever.")
    limit_order(qtbot, panel, "1000", (ask * Decimal("1.03")).quantize(Decimal(1)))
    assert panel.rest_label.text().startswith("Fills now: your limit reaches the ask")


def test_the_default_end_follows_the_setting_at_the_moment_of_use(qtbot: QtBot, live: Live) -> None:
    panel = open_ticket(qtbot, live)
    limit_order(qtbot, panel, "1000", Decimal(1000))
    panel.apply_preferences(Preferences(resting_hours=Decimal(3)))
    end = panel.form().end_at
    assert end is not None
    assert utc_now() + timedelta(hours=3) <= end <= utc_now() + timedelta(hours=3, minutes=1)


# -- what-if that cannot lie ---------------------------------------------------------------------


def test_an_order_beyond_funds_and_credit_shows_the_refusal_not_negative_credit(
    qtbot: QtBot, live: Live
) -> None:
    panel = open_ticket(qtbot, live)  # USD 100,000 free, 50,000 credit
    type_into(qtbot, panel.size_edit, "5000000")
    qtbot.waitUntil(lambda: panel.verdict_label.text().startswith("refused"))
    assert panel.verdict_label.text() == (
        "refused: Insufficient Funds — needs 5,000,000.00 USD, 150,000.00 available"
    )
    cells = [cell.text() for row in panel.what_if_cells for cell in row]
    assert not any("-" in text for text in cells), cells
    assert "100,000.00 (refused)" in cells and "50,000.00 (refused)" in cells
    assert "size 5,000,000.00 USD is above the available funds plus credit (150,000.00 USD)" in (
        panel.checks_label.text()
    )


# -- offline honesty -------------------------------------------------------------------------------


@pytest.mark.slow
def test_offline_the_send_button_says_so_and_nothing_is_sent(
    qtbot: QtBot, live: Live, faults: Faults
) -> None:
    panel = open_ticket(qtbot, live)
    type_into(qtbot, panel.size_edit, "100")
    assert panel.send_button.isEnabled()
    faults({"kind": "status", "status": 503, "method": "*", "path": ".*"})
    qtbot.waitUntil(lambda: panel.send_button.text() == "Offline — cannot send", timeout=15_000)
    assert not panel.send_button.isEnabled()
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Return)
    assert panel.outcome_label.text().startswith("Not sent: offline")
    faults.clear()
    qtbot.waitUntil(panel.send_button.isEnabled, timeout=15_000)
    assert panel.send_button.text() == "Buy BTC for 100 USD"
    assert server_orders(qtbot, live) == []


# -- messages in words -----------------------------------------------------------------------------


def test_a_fill_reads_as_a_trade_in_the_ticket_and_the_log(qtbot: QtBot, live: Live) -> None:
    seen: list[LogEvent] = []
    live.session.events.subscribe(seen.append)
    panel = open_ticket(qtbot, live)
    type_into(qtbot, panel.size_edit, "10000")
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.outcome_label.text().startswith("Bought"), timeout=10_000)
    [order] = server_orders(qtbot, live)
    trade = Trade.of(order, live.session.pair_info)
    assert trade is not None
    words = f"{trade.sentence(live.context.precision)} · order {order.order_id}"
    assert panel.outcome_label.text() == words
    assert re.fullmatch(
        rf"Bought 0\.\d{{8}} BTC at an average fill price of {USD_PRICE} \(spent 10,000\.00 USD\)"
        r" · order \S+",
        words,
    )
    assert words in [event.message for event in seen]  # the log/notice says the same


def test_a_refusal_in_the_log_says_each_word_once(
    qtbot: QtBot, live_factory: LiveFactory, sandbox: SandboxProcess
) -> None:
    live = live_factory(sandbox, balances={"USD": "100", "BTC": "0"}, credit={})
    seen: list[LogEvent] = []
    live.session.events.subscribe(seen.append)
    panel = open_ticket(qtbot, live)
    type_into(qtbot, panel.size_edit, "1000")
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.outcome_label.property("level") == "error", timeout=10_000)
    [line] = [event.message for event in seen if "refused" in event.message]
    assert line == (
        "Buy BTC for 1,000 USD: refused — Insufficient Funds: Requested 1000 USD but only 100 "
        "USD is available"  # the service's words kept as they are
    )


def test_a_ticket_built_before_the_pairs_are_known_is_ready_once_they_are(
    qtbot: QtBot, live: Live
) -> None:
    """As at launch: the window (and the ticket) is built before the session reads the pairs.
    The fresh ticket shows no error and trades the selected pair as soon as it is known."""
    session = TerminalSession(live.session.client, live.session.environment)
    bridge = SessionBridge(Terminal(session))
    context = PanelContext(bridge, live.context.precision, live.context.settings, lambda *_: None)
    panel = OrderTicketPanel(context, live.desks.orders)
    qtbot.addWidget(panel)
    assert panel.input_error.text() == ""
    run(qtbot, session.start())
    try:
        qtbot.waitUntil(lambda: panel.pair_box.currentText() == session.selected_pair)
        assert panel.input_error.text() == ""
        assert panel.size_unit.text().endswith("to spend")
        type_into(qtbot, panel.size_edit, "100")
        assert panel.input_error.text() == "" and panel.client_id_label.text() != "—"
    finally:
        run(qtbot, session.stop())
