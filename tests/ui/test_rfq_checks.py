"""The RFQ ticket's pre-trade checks, its honesty offline, and the trader's terms, against the
real sandbox with real widgets and real keys.

The account (``live``): USD 100,000 with 50,000 of credit, BTC 2, ETH 10; BTC/USD trades near
90,000, so 100,000 BTC is worth about 9 billion USD, far above the default 1,000,000 USD size
limit.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.domain.pair_terms import Trade
from app.services.log_events import EventKind, LogEvent, LogLevel
from app.services.rfq_desk import SIDES, LiveQuote, Side
from app.ui.panels.rfq_ticket import OVERRIDE_TEXT, RfqTicketPanel
from app.ui.preferences import Preferences
from tests.harness import Faults, SandboxProcess
from tests.helpers.live import Live
from tests.helpers.rfq_ticket import KEYS, PAIR, SIZE, accept_posts, open_ticket, request

pytestmark = [
    pytest.mark.qt_log_level_fail("WARNING"),
    pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints"),
]

HUGE = "100000"


def wait_for_book(qtbot: QtBot, live: Live) -> None:
    """The bridge has carried a top of book for the pair (the checks value with it)."""
    qtbot.waitUntil(lambda: PAIR in (live.bridge.topOfBook.latest or {}), timeout=5000)


def wait_for_balances(qtbot: QtBot, live: Live) -> None:
    qtbot.waitUntil(lambda: live.bridge.balances.latest is not None, timeout=5000)


def press_enter_in_size(qtbot: QtBot, panel: RfqTicketPanel, size: str) -> None:
    """The trader's way: the size typed into the field, then Enter."""
    panel.pair_box.setEditText(PAIR)
    panel.size_edit.setFocus()
    panel.size_edit.selectAll()
    QTest.keyClicks(panel.size_edit, size)
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Return)


def shown(panel: RfqTicketPanel) -> LiveQuote | None:
    """The quote on screen now (a call, so a type checker does not carry it over)."""
    return panel.live_quote


def alt_key(side: Side) -> None:
    focus = QApplication.focusWidget()
    assert focus is not None
    QTest.keyClick(focus, KEYS[side], Qt.KeyboardModifier.AltModifier)


# -- checks before the request -----------------------------------------------------------------


def test_a_request_above_the_size_limit_is_not_sent_until_overridden(
    qtbot: QtBot, live: Live
) -> None:
    ticket = open_ticket(qtbot, live)
    panel = ticket.panel
    wait_for_book(qtbot, live)
    wait_for_balances(qtbot, live)
    assert not panel.override_check.isVisible()

    press_enter_in_size(qtbot, panel, HUGE)
    message = panel.message.text()
    assert message.startswith("Not requested: 100,000 BTC is worth about "), message
    assert message.endswith(
        f" USD, above the 1,000,000.00 USD size limit. Tick “{OVERRIDE_TEXT}” to ask anyway."
    )
    assert panel.message.property("level") == "error"
    worth = Decimal(message.split("about ")[1].split(" USD")[0].replace(",", ""))
    assert Decimal("5e9") < worth < Decimal("2e10")  # about 9 billion USD
    # Nothing left the terminal; what was typed stays; the override is offered.
    assert live.desks.rfq.events == [] and panel.live_quote is None and not panel.requesting
    assert panel.size_edit.text() == HUGE
    assert panel.override_check.isVisible() and not panel.override_check.isChecked()
    assert panel.override_check.text().replace("&", "") == OVERRIDE_TEXT

    # Ticked (Alt+D, its mnemonic), Enter asks: the quote carries the override, its sides say
    # what was overridden.
    QTest.keyClick(panel.size_edit, Qt.Key.Key_D, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(panel.override_check.isChecked)
    assert panel.size_edit.text() == HUGE  # the letter was not typed
    panel.size_edit.setFocus()
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.live_quote is not None)
    quote = shown(panel)
    assert quote is not None and quote.override
    for side in SIDES:
        lines = panel.sides[side].checks.text().splitlines()
        name = "Buy BTC" if side == "buy" else "Sell BTC"
        assert any(
            line.startswith(f"{name} is worth about ") and line.endswith("(overridden)")
            for line in lines
        ), lines
    # Funds are a warning, as on the order ticket, named in the asset each side spends.
    buy_lines = panel.sides["buy"].checks.text()
    sell_lines = panel.sides["sell"].checks.text()
    assert "more than the 150,000.00 USD available with credit" in buy_lines
    assert "Sell BTC spends 100,000.00000000 BTC, more than the 2.00000000 BTC" in sell_lines


def test_editing_the_size_withdraws_the_override(qtbot: QtBot, live: Live) -> None:
    ticket = open_ticket(qtbot, live)
    panel = ticket.panel
    wait_for_book(qtbot, live)
    press_enter_in_size(qtbot, panel, HUGE)
    assert panel.override_check.isVisible()
    panel.override_check.click()
    assert panel.override_check.isChecked()
    panel.size_edit.setFocus()
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Backspace)  # a different request now
    assert not panel.override_check.isVisible() and not panel.override_check.isChecked()
    QTest.keyClicks(panel.size_edit, "0")
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Return)
    assert panel.message.text().startswith("Not requested: 100,000 BTC is worth about ")
    assert live.desks.rfq.events == []


# -- checks again before accept ----------------------------------------------------------------


def test_a_side_the_size_limit_blocks_is_disabled_with_the_reason_and_settings_rule(
    qtbot: QtBot, live: Live, sandbox: SandboxProcess
) -> None:
    ticket = open_ticket(qtbot, live)
    panel = ticket.panel
    wait_for_book(qtbot, live)
    quote = request(qtbot, panel)
    for side in SIDES:
        qtbot.waitUntil(panel.sides[side].accept.isEnabled)
    assert panel.sides["buy"].checks.text() == ""
    # Settings lower the size limit below the quote's worth: both sides go off, each says why.
    panel.apply_preferences(Preferences(max_notional=Decimal(100)))
    for side in SIDES:
        view = panel.sides[side]
        assert not view.accept.isEnabled()
        name = "Buy BTC" if side == "buy" else "Sell BTC"
        text = view.checks.text()
        assert text.startswith(f"{name} is worth about "), text
        assert text.endswith(" USD, above the 100.00 USD size limit")
        assert view.checks.property("level") == "error" and view.checks.isVisible()
    buy_worth = quote.quote.buy.source  # the buy side spends USD: worth exactly that
    assert f"Buy BTC is worth about {buy_worth.value:,.2f} USD" in panel.sides["buy"].checks.text()
    assert panel.override_check.isVisible()
    # Alt+S on the blocked side says why and sends nothing.
    account = live.account.account
    path = f"/account/{account}/order/rfq/.*/accept$"
    faults = Faults(sandbox)
    faults({"kind": "latency", "path": path, "rate": 0})  # turns the request log on
    try:
        panel.size_edit.setFocus()
        alt_key("sell")
        assert panel.message.text().startswith("Not sent: Sell BTC is worth about ")
        assert panel.size_edit.text() == SIZE
        assert accept_posts(sandbox, account) == []
        # Overridden for this request, the side is back and Alt+S fills.
        panel.override_check.click()
        qtbot.waitUntil(panel.sides["sell"].accept.isEnabled)
        assert panel.sides["sell"].checks.text().endswith("(overridden)")
        alt_key("sell")
        qtbot.waitUntil(lambda: panel.last_result is not None)
        assert panel.last_result is not None and panel.last_result.status == "filled"
        assert len(accept_posts(sandbox, account)) == 1
    finally:
        faults.clear()


def test_default_settings_leave_a_small_quote_acceptable(qtbot: QtBot, live: Live) -> None:
    ticket = open_ticket(qtbot, live)
    panel = ticket.panel
    wait_for_book(qtbot, live)
    panel.apply_preferences(Preferences(max_notional=Decimal(100)))
    panel.apply_preferences(Preferences())  # back to 1,000,000 USD
    request(qtbot, panel)
    for side in SIDES:
        qtbot.waitUntil(panel.sides[side].accept.isEnabled)
        assert panel.sides[side].checks.text() == ""
    assert not panel.override_check.isVisible()


# -- offline -----------------------------------------------------------------------------------


@pytest.mark.slow
def test_offline_the_buttons_say_so_and_the_quote_is_marked(
    qtbot: QtBot, live: Live, faults: Faults, sandbox: SandboxProcess
) -> None:
    ticket = open_ticket(qtbot, live)
    panel = ticket.panel
    quote = request(qtbot, panel)
    qtbot.waitUntil(panel.sides["buy"].accept.isEnabled)
    # Every feed fails (the quote's own POSTs are not touched): the connection goes offline.
    faults({"kind": "status", "status": 503, "path": ".*", "method": "GET"})
    qtbot.waitUntil(lambda: not panel.request_button.isEnabled(), timeout=10000)
    assert panel.request_button.text() == "Request (offline)"
    assert "connection is offline" in panel.request_button.toolTip()
    for side in SIDES:
        view = panel.sides[side]
        assert not view.accept.isEnabled()
        assert view.accept.text().endswith(" (offline)")
    assert panel.quote_label.text().startswith(f"Quote {quote.order_id[:8]} · {PAIR}")
    assert panel.quote_label.text().endswith("· OFFLINE: shown as received, accepting is off")
    assert not panel.requote_button.isEnabled()
    # Keys say why and send nothing.
    panel.size_edit.setFocus()
    alt_key("buy")
    assert panel.message.text().startswith("Not sent: the connection is offline (")
    assert panel.message.text().endswith(". Accepting resumes when it is back.")
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Return)
    assert panel.message.text().startswith("Not requested: the connection is offline (")
    assert [e.kind for e in live.desks.rfq.events] == ["requested"]
    assert quote.accepted_side is None and panel.size_edit.text() == SIZE
    # Back online: the buttons are themselves again.
    faults.clear()
    qtbot.waitUntil(panel.request_button.isEnabled, timeout=40000)
    assert panel.request_button.text() == "Request"
    assert not panel.quote_label.text().endswith("accepting is off")
    fresh = request(qtbot, panel)
    qtbot.waitUntil(panel.sides["buy"].accept.isEnabled)
    assert panel.sides["buy"].accept.text() == "&Buy 0.01000000 BTC" and fresh.pair == PAIR


# -- the trader's terms ------------------------------------------------------------------------


@pytest.mark.parametrize("side", SIDES)
def test_sides_fills_notice_log_and_history_read_in_pair_terms(
    qtbot: QtBot, live: Live, side: Side
) -> None:
    logged: list[LogEvent] = []
    live.bridge.logEvent.connect(logged.append)
    ticket = open_ticket(qtbot, live)
    panel = ticket.panel
    quote = request(qtbot, panel)
    precision = live.context.precision
    for each in SIDES:
        quoted = quote.quote.side(each)
        price = quoted.price.value  # the sandbox writes BTC/USD: QUOTE per BASE already
        assert (quoted.price.base, quoted.price.quote) == ("BTC", "USD")
        if each == "buy":
            expected = (
                f"Buy BTC · pay {quoted.source.value:,.2f} USD · get 0.01000000 BTC at {price:,.2f}"
            )
        else:
            expected = (
                f"Sell BTC · pay 0.01000000 BTC · get {quoted.destination.value:,.2f} USD "
                f"at {price:,.2f}"
            )
        assert panel.sides[each].terms.text() == expected
    requested = panel.history_model
    sell_price = f"{quote.quote.sell.price.value:,.2f}"
    buy_price = f"{quote.quote.buy.price.value:,.2f}"
    assert requested.index(0, requested.column("price")).data() == f"{sell_price} / {buy_price}"
    assert requested.index(0, requested.column("size")).data() == "0.01 BTC"

    qtbot.waitUntil(panel.sides[side].accept.isEnabled)
    panel.size_edit.setFocus()
    alt_key(side)
    qtbot.waitUntil(lambda: panel.last_result is not None)
    result = panel.last_result
    assert result is not None and result.status == "filled" and result.order is not None
    trade = Trade.of(result.order, [PAIR])
    assert trade is not None
    sentence = trade.sentence(precision)
    quoted = quote.quote.side(side)
    # The fill's own average price (what was paid over what was got), QUOTE per BASE.
    average = f"{trade.price:,.2f}"
    if side == "buy":
        assert sentence == (
            f"Bought 0.01000000 BTC at an average fill price of {average} USD "
            f"(spent {quoted.source.value:,.2f} USD)"
        )
    else:
        assert sentence == (
            f"Sold 0.01000000 BTC at an average fill price of {average} USD "
            f"(received {quoted.destination.value:,.2f} USD)"
        )
    # The ticket and the notice: the sentence after "Filled:", the order and the time left.
    message = panel.message.text()
    assert message == (
        f"Filled: {sentence[0].lower()}{sentence[1:]} — order {quote.order_id} "
        f"({result.ms_left:,} ms left)"
    )
    # The desk's log line, the one line of the fill (the notice and the alert come from it).
    qtbot.waitUntil(lambda: any(e.message.startswith(sentence) for e in logged))
    line = next(e.message for e in logged if e.message.startswith(sentence))
    assert line == f"{sentence} — RFQ order {quote.order_id}, {result.ms_left:,} ms left"
    about = [e for e in logged if quote.order_id in e.message]
    assert [(e.level, e.kind) for e in about] == [(LogLevel.SUCCESS, EventKind.FILL)]
    assert live.notices == []  # the ticket does not tell it again
    # The history row of the fill, in pair terms.
    model = panel.history_model
    row = {key: model.index(0, model.column(key)).data() for key in ("side", "price", "size")}
    name = "Buy BTC" if side == "buy" else "Sell BTC"
    quoted_price = f"{quoted.price.value:,.2f}"  # the row keeps the price the quote gave
    assert row == {"side": name, "price": quoted_price, "size": "0.01000000 BTC"}


def test_a_lost_answer_notifies_in_the_traders_words_only(
    qtbot: QtBot, live: Live, faults: Faults
) -> None:
    """The log line (and so the notice) says what the trader needs to know, once; the wire's
    detail stays in the ticket's tooltip."""
    logged: list[LogEvent] = []
    live.bridge.logEvent.connect(logged.append)
    ticket = open_ticket(qtbot, live)
    panel = ticket.panel
    quote = request(qtbot, panel)
    qtbot.waitUntil(panel.sides["buy"].accept.isEnabled)
    path = f"/account/{live.account.account}/order/rfq/.*/accept$"
    faults({"kind": "drop", "path": path, "count": 1})
    panel.size_edit.setFocus()
    alt_key("buy")
    qtbot.waitUntil(lambda: panel.last_result is not None, timeout=10000)
    result = panel.last_result
    assert result is not None and result.status == "unknown"
    expected = (
        f"Buy BTC on quote {quote.order_id[:8]}: the answer was lost and the order was not "
        "found yet, so it is not known whether it filled (still being looked up). Check the "
        "orders before trading again."
    )
    qtbot.waitUntil(lambda: any(quote.order_id[:8] in e.message for e in logged))
    assert [(e.level, e.message) for e in logged if quote.order_id[:8] in e.message] == [
        (LogLevel.WARNING, expected)
    ]
    assert panel.message.text() == expected
    assert panel.message.toolTip() == result.message and result.message
    # Neither side claims what is not known: Alt+S says the other side's outcome is unknown.
    assert [view.countdown.text for view in panel.sides.values()] == ["unknown", "unknown"]
    assert not panel.sides["sell"].accept.isEnabled()
    alt_key("sell")
    qtbot.waitUntil(lambda: panel.message.text().startswith("Not sent"))
    assert panel.message.text().startswith("Not sent: the other side's outcome is unknown")
    assert "already accepted" not in panel.message.text()


def test_funds_short_of_a_request_warn_before_it_is_sent_and_on_each_side(
    qtbot: QtBot, live: Live
) -> None:
    """3 BTC: the buy side would spend about 270,000 USD (150,000 USD with credit), the sell
    side 3 BTC (2 held): warnings, as on the order ticket, and the request goes out."""
    ticket = open_ticket(qtbot, live)
    panel = ticket.panel
    wait_for_book(qtbot, live)
    wait_for_balances(qtbot, live)
    press_enter_in_size(qtbot, panel, "3")
    lines = panel.message.text().splitlines()
    assert lines[0] == f"Requesting a quote for {PAIR} 3 BTC…"
    assert lines[1].startswith("Buy BTC spends about ")
    assert lines[1].endswith(" USD, more than the 150,000.00 USD available with credit")
    assert (
        lines[2]
        == "Sell BTC spends 3.00000000 BTC, more than the 2.00000000 BTC available with credit"
    )
    assert panel.message.property("level") == "warning"
    qtbot.waitUntil(lambda: panel.live_quote is not None)
    quote = shown(panel)
    assert quote is not None
    spend = quote.quote.buy.source.value
    assert panel.sides["buy"].checks.text() == (
        f"Buy BTC spends {spend:,.2f} USD, more than the 150,000.00 USD available with credit"
    )
    assert panel.sides["sell"].checks.text() == lines[2]
    for side in SIDES:  # a warning leaves the accept on: the service has the last word
        qtbot.waitUntil(panel.sides[side].accept.isEnabled)
