"""The RFQ ticket against the real sandbox: countdown, accept, expiry, refusals, clock skew,
keyboard-only trading, requote and auto-requote, errors.

The panel sits in a real QMainWindow dock (shown, active) so the shortcuts (F3, the Alt+B /
Alt+S mnemonics) are exercised the way a trader's keys reach them. Short quote lifetimes come
from a module sandbox started with ``--quote-ttl``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from app.api.clock import system_now
from app.domain import Amount
from app.services.rfq_desk import SIDES, LiveQuote, QuoteEvent, RfqDesk, Side
from app.ui.main_window import MainWindow, PanelSpec
from app.ui.panels.rfq_ticket import SETTINGS_AUTO_REQUOTE, RfqTicketPanel
from app.ui.widgets.countdown import seconds_text
from app.ui.widgets.quote_history import QuoteHistoryModel
from tests.harness import SandboxProcess
from tests.helpers.live import Live, LiveFactory
from tests.helpers.qt import run
from tests.helpers.rfq_ticket import KEYS, PAIR, SIZE, Ticket, accept_posts, open_ticket, request

pytestmark = [
    pytest.mark.qt_log_level_fail("WARNING"),
    pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints"),
]

SHORT_TTL = 4  # seconds: long enough to see live, amber and closing in turn


@pytest.fixture(scope="module")
def short_sandbox() -> Iterator[SandboxProcess]:
    """A sandbox whose quotes live ``SHORT_TTL`` seconds, shared by the module's tests."""
    process = SandboxProcess("--quote-ttl", str(SHORT_TTL)).start()
    yield process
    process.close()


def shown_seconds(panel: RfqTicketPanel, side: Side) -> float:
    text = panel.sides[side].countdown.text
    assert text.endswith(" s"), text
    return float(text.removesuffix(" s"))


def free(qtbot: QtBot, live: Live) -> dict[str, Decimal]:
    account = run(qtbot, live.session.client.account())
    return {asset: balance.free for asset, balance in account.balances.items()}


def admin_faults(sandbox: SandboxProcess, faults: list[dict[str, Any]]) -> None:
    with sandbox.admin() as admin:
        response = admin.post("/api/v1/sandbox/admin/faults", json={"faults": faults})
        assert response.status_code == 200, response.text


def clear_faults(sandbox: SandboxProcess) -> None:
    with sandbox.admin() as admin:
        admin.delete("/api/v1/sandbox/admin/faults")


def state(panel: RfqTicketPanel, side: Side) -> str:
    """The countdown's state now (a call, so a type checker does not carry it over)."""
    return panel.sides[side].countdown.state


def history_kinds(panel: RfqTicketPanel) -> list[tuple[str, str | None]]:
    return [(e.kind, e.side) for e in panel.history_model.events()]


# -- countdown --------------------------------------------------------------------------------


def test_the_countdown_decreases_while_the_quote_is_live(qtbot: QtBot, live: Live) -> None:
    ticket = open_ticket(qtbot, live)
    panel = ticket.panel
    quote = request(qtbot, panel)
    for side in SIDES:
        bar = panel.sides[side].countdown
        first, first_bar = shown_seconds(panel, side), bar.fraction
        assert 8.0 < first <= 10.0 and 0.8 < first_bar <= 1.0
        assert bar.state == "live"
        target = first - 0.3
        qtbot.waitUntil(lambda: shown_seconds(panel, side) <= target)  # noqa: B023
        assert bar.fraction < first_bar
        # What is shown is what the quote has left, not a tick count.
        assert shown_seconds(panel, side) == pytest.approx(quote.remaining(side), abs=0.15)
    assert panel.frame_timer_active
    assert panel.quote_label.text().startswith(f"Quote {quote.order_id[:8]} · {PAIR}")
    assert history_kinds(panel) == [("requested", None)]


def test_seconds_are_shown_in_tenths_rounded_down() -> None:
    assert seconds_text(9.999) == "9.9 s"
    assert seconds_text(0.05) == "0.0 s"
    assert seconds_text(-1.0) == "0.0 s"
    assert seconds_text(12.34) == "12.3 s"


# -- accept -----------------------------------------------------------------------------------


@pytest.mark.parametrize("side", SIDES)
def test_accept_before_expiry_fills_the_quoted_amounts(
    qtbot: QtBot, live: Live, side: Side
) -> None:
    ticket = open_ticket(qtbot, live)
    panel = ticket.panel
    before = free(qtbot, live)
    quote = request(qtbot, panel)
    quoted = quote.quote.side(side)
    button = panel.sides[side].accept
    qtbot.waitUntil(button.isEnabled)
    QTest.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.last_result is not None)
    result = panel.last_result
    assert result is not None and result.status == "filled", result
    order = result.order
    assert order is not None and order.order_id == quote.order_id
    # The sandbox moved exactly what the quote said would be paid and received.
    after = free(qtbot, live)
    paid, received = quoted.source, quoted.destination
    assert before[paid.asset] - after[paid.asset] == paid.value
    assert after[received.asset] - before[received.asset] == received.value
    assert order.size == paid and order.result.total == received
    if side == "buy":
        assert (paid.asset, received.asset) == ("USD", "BTC") and received.value == Decimal(SIZE)
    else:
        assert (paid.asset, received.asset) == ("BTC", "USD") and paid.value == Decimal(SIZE)
    # Shown like a fill in the ticket; the desk's log line (notice and alert) tells it once.
    message = panel.message.text()
    assert message.startswith(f"Filled: {'bought' if side == 'buy' else 'sold'} ")
    assert quote.order_id in message and f"{result.ms_left:,} ms left" in message
    assert live.notices == []
    assert panel.sides[side].countdown.text == "accepted"
    other: Side = "sell" if side == "buy" else "buy"
    assert panel.sides[other].countdown.text == "not taken"
    assert not panel.sides["buy"].accept.isEnabled() and not panel.sides["sell"].accept.isEnabled()
    qtbot.waitUntil(lambda: not panel.frame_timer_active)  # nothing left to count down
    assert history_kinds(panel) == [("requested", None), ("accepted", side)]
    row = panel.history_model.index(0, panel.history_model.column("ms_left")).data()
    assert row == f"{result.ms_left:,}" and 0 < result.ms_left <= 10_000


def test_an_accept_of_a_quote_already_taken_shows_the_servers_words(
    qtbot: QtBot, live: Live
) -> None:
    ticket = open_ticket(qtbot, live)
    panel = ticket.panel
    quote = request(qtbot, panel)
    qtbot.waitUntil(panel.sides["buy"].accept.isEnabled)
    QTest.mouseClick(panel.sides["buy"].accept, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.last_result is not None)
    # The ticket offers nothing more; forced past the local guard, the service says why.
    assert not panel.sides["sell"].accept.isEnabled()
    result = run(qtbot, live.desks.rfq.force_accept("sell"))
    assert result.status == "refused" and result.http_status == 409
    assert result.message == f"Quote {quote.order_id} was already accepted (buy)"
    qtbot.waitUntil(lambda: result.message in panel.message.text())
    assert panel.message.text() == f"Refused by the service: {result.message}"
    assert panel.sides["buy"].countdown.text == "accepted"
    assert panel.sides["sell"].countdown.text == "not taken"


def test_the_quote_shows_prices_pay_get_and_markup_against_the_book(
    qtbot: QtBot, live: Live
) -> None:
    ticket = open_ticket(qtbot, live)
    panel = ticket.panel
    quote = request(qtbot, panel)
    buy, sell = panel.sides["buy"], panel.sides["sell"]
    assert buy.pay.text() == f"Pay {_grouped(quote.quote.buy.source)}"
    assert buy.get.text() == "Get 0.01000000 BTC"
    assert sell.pay.text() == "Pay 0.01000000 BTC"
    assert sell.get.text() == f"Get {_grouped(quote.quote.sell.destination)}"
    assert buy.accept.text() == "&Buy 0.01000000 BTC"
    assert sell.accept.text() == "&Sell 0.01000000 BTC"
    assert buy.price.text() == f"{quote.quote.buy.price.value:,.2f}"
    # The markup is measured against the book the panel has now: ask for buy, bid for sell.
    books: list[Any] = []
    live.bridge.topOfBook.connect(lambda b: books.append(b[PAIR]) if PAIR in b else None)
    qtbot.waitUntil(lambda: len(books) >= 1)
    top = books[-1]
    expected_buy = f"Markup {quote.markup_bps('buy', top):+.1f} bp vs ask"
    expected_sell = f"Markup {quote.markup_bps('sell', top):+.1f} bp vs bid"
    assert buy.markup.text() == expected_buy and sell.markup.text() == expected_sell


def _grouped(amount: Amount) -> str:
    return f"{amount.value:,.2f} {amount.asset}"


# -- expiry -----------------------------------------------------------------------------------


def short_quote(
    qtbot: QtBot, live_factory: LiveFactory, sandbox: SandboxProcess
) -> tuple[Live, Ticket, LiveQuote]:
    """A trader on the short-lived-quote sandbox, the ticket (its window must be kept, or the
    panel goes with it), and the quote it requested."""
    live = live_factory(sandbox)
    ticket = open_ticket(qtbot, live)
    return live, ticket, request(qtbot, ticket.panel)


@pytest.mark.slow
def test_the_accept_button_closes_near_expiry_and_stays_closed_after(
    qtbot: QtBot, live_factory: LiveFactory, short_sandbox: SandboxProcess
) -> None:
    _live, ticket, quote = short_quote(qtbot, live_factory, short_sandbox)
    panel = ticket.panel
    buy = panel.sides["buy"]
    assert buy.accept.isEnabled() and state(panel, "buy") == "live"
    # Amber under 3 s, still acceptable.
    qtbot.waitUntil(lambda: state(panel, "buy") == "amber", timeout=5000)
    assert 0 < quote.remaining("buy") < 3.0 and buy.accept.isEnabled()
    # Disabled while time remains but less than the accept margin.
    left_when_closed: list[float] = []

    def closed() -> bool:
        if buy.accept.isEnabled():
            return False
        left_when_closed.append(quote.remaining("buy"))
        return True

    qtbot.waitUntil(closed, timeout=5000)
    margin = quote.accept_margin
    assert margin >= 0.5
    assert 0 < left_when_closed[0] <= margin + 0.05  # within a frame of the margin
    assert state(panel, "buy") in ("closing", "expired")
    # Expired: disabled for good, the frame timer stops, the desk reports both sides.
    qtbot.waitUntil(lambda: buy.countdown.text == "expired", timeout=5000)
    qtbot.waitUntil(lambda: not panel.frame_timer_active, timeout=2000)
    qtbot.waitUntil(lambda: sum(k == "expired" for k, _ in history_kinds(panel)) == 2)
    assert not buy.accept.isEnabled() and not panel.sides["sell"].accept.isEnabled()
    assert buy.countdown.fraction == 0.0
    # Asking anyway sends nothing and says why.
    panel.accept("buy")
    qtbot.waitUntil(lambda: "expired" in panel.message.text())
    assert panel.message.text() == "Not sent: the buy side has expired; request a new quote"
    assert not any(k in ("accepted", "refused") for k, _ in history_kinds(panel))
    assert not buy.accept.isEnabled()


@pytest.mark.slow
def test_a_forced_accept_after_expiry_shows_the_servers_refusal(
    qtbot: QtBot, live_factory: LiveFactory, short_sandbox: SandboxProcess
) -> None:
    live, ticket, quote = short_quote(qtbot, live_factory, short_sandbox)
    panel = ticket.panel
    qtbot.waitUntil(lambda: panel.sides["sell"].countdown.text == "expired", timeout=8000)
    before = free(qtbot, live)
    result = run(qtbot, live.desks.rfq.force_accept("sell"))
    assert result.status == "refused" and result.http_status == 410
    assert result.message.startswith("Quote expired at ")
    # The server's words, verbatim, in the ticket.
    qtbot.waitUntil(lambda: result.message in panel.message.text())
    assert panel.message.text() == f"Refused by the service: {result.message}"
    assert panel.message.property("level") == "error"
    refused = panel.history_model.events()[-1]
    assert (refused.kind, refused.side, refused.quote_id) == ("refused", "sell", quote.order_id)
    assert (
        panel.history_model.index(0, panel.history_model.column("details")).data() == result.message
    )
    assert panel.sides["sell"].countdown.text == "refused"
    assert free(qtbot, live) == before


# -- clock skew -------------------------------------------------------------------------------


@pytest.mark.parametrize("skew", [30, -30])
def test_the_countdown_follows_the_server_clock_when_the_local_clock_is_off(
    qtbot: QtBot, live: Live, skew: int
) -> None:
    """Tolerance 0.3 s: the display floors to tenths (≤ 0.1 s) and is at most one frame old
    (~0.05 s with jitter); the quote's receipt and the probe below each add half a loopback
    round trip (milliseconds), and the offset estimate half of its best round trip. A countdown
    that trusted the skewed local clock would be 30 s off, 100 times the tolerance."""
    clock = live.session.client.clock
    clock.now = lambda: system_now() + timedelta(seconds=skew)
    clock.round_trip = None  # forget the unskewed sample: the next one is kept
    run(qtbot, live.session.client.service_time())
    assert clock.offset.total_seconds() == pytest.approx(-skew, abs=0.2)

    ticket = open_ticket(qtbot, live)
    panel = ticket.panel
    quote = request(qtbot, panel)

    async def probe() -> tuple[float, datetime, float]:
        sent = time.monotonic()
        server = await live.session.client.service_time()
        return sent, server, time.monotonic()

    sent, server_now, received = run(qtbot, probe())
    middle = (sent + received) / 2
    for side in SIDES:
        truth_at_probe = (quote.quote.side(side).expires_at - server_now).total_seconds()
        truth_now = truth_at_probe - (time.monotonic() - middle)
        assert 5.0 < truth_now < 10.0
        assert shown_seconds(panel, side) == pytest.approx(truth_now, abs=0.3)
        remaining = panel.sides[side].countdown.remaining
        assert remaining is not None and remaining == pytest.approx(truth_now, abs=0.2)


# -- keyboard ---------------------------------------------------------------------------------


@pytest.mark.parametrize("side", SIDES)
def test_keyboard_only_f3_size_enter_and_alt_letter_fill(
    qtbot: QtBot, live: Live, side: Side
) -> None:
    ticket = open_ticket(qtbot, live)
    panel, window = ticket.panel, ticket.window
    panel.size_edit.setText("5")  # an old size: F3 selects it, typing replaces it
    ticket.dock.close()  # the trader closed the dock: F3 brings it back
    assert not ticket.dock.isVisible()
    assert QApplication.focusWidget() is ticket.elsewhere
    before = free(qtbot, live)

    QTest.keyClick(ticket.elsewhere, Qt.Key.Key_F3)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is panel.size_edit)
    assert ticket.dock.isVisible() and panel.size_edit.selectedText() == "5"
    QTest.keyClicks(panel.size_edit, SIZE)
    assert panel.size_edit.text() == SIZE
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.live_quote is not None)
    quote = panel.live_quote
    assert quote is not None and quote.pair == PAIR and quote.size == Amount(Decimal(SIZE), "BTC")
    button = panel.sides[side].accept
    qtbot.waitUntil(button.isEnabled)

    focus = QApplication.focusWidget()
    assert focus is not None
    QTest.keyClick(focus, KEYS[side], Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(lambda: panel.last_result is not None)
    assert panel.last_result is not None and panel.last_result.status == "filled"
    assert panel.size_edit.text() == SIZE  # the letter was not typed into the field
    quoted = quote.quote.side(side)
    after = free(qtbot, live)
    assert before[quoted.source.asset] - after[quoted.source.asset] == quoted.source.value
    assert after[quoted.destination.asset] - before[quoted.destination.asset] == (
        quoted.destination.value
    )
    assert window.isActiveWindow()


def test_the_alt_mnemonics_work_from_anywhere_in_the_window(qtbot: QtBot, live: Live) -> None:
    """With the focus outside the ticket (no text field of the panel involved), Alt+S reaches
    the sell button through its mnemonic alone."""
    ticket = open_ticket(qtbot, live)
    panel = ticket.panel
    quote = request(qtbot, panel)
    qtbot.waitUntil(panel.sides["sell"].accept.isEnabled)
    ticket.elsewhere.setFocus()
    assert QApplication.focusWidget() is ticket.elsewhere
    QTest.keyClick(ticket.elsewhere, Qt.Key.Key_S, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(lambda: panel.last_result is not None)
    assert panel.last_result is not None and panel.last_result.status == "filled"
    assert panel.last_result.side == "sell" and quote.accepted_side == "sell"
    assert ticket.elsewhere.text() == ""


@pytest.mark.slow
def test_a_double_alt_b_sends_one_accept(qtbot: QtBot, live: Live, sandbox: SandboxProcess) -> None:
    ticket = open_ticket(qtbot, live)
    panel = ticket.panel
    account = live.account.account
    # A slow accept (0.8 s) so the later presses land while it is in flight; the rule also
    # turns the sandbox's request log on.
    path = f"/account/{account}/order/rfq/.*/accept$"
    admin_faults(sandbox, [{"kind": "latency", "path": path, "seconds": 0.8}])
    try:
        request(qtbot, panel)
        qtbot.waitUntil(panel.sides["buy"].accept.isEnabled)
        panel.size_edit.setFocus()
        focus = QApplication.focusWidget()
        assert focus is panel.size_edit
        QTest.keyClick(focus, Qt.Key.Key_B, Qt.KeyboardModifier.AltModifier)
        QTest.keyClick(focus, Qt.Key.Key_B, Qt.KeyboardModifier.AltModifier)  # at once
        qtbot.waitUntil(lambda: live.desks.rfq.accepting)
        assert not panel.sides["buy"].accept.isEnabled()
        assert not panel.sides["sell"].accept.isEnabled()
        QTest.keyClick(focus, Qt.Key.Key_B, Qt.KeyboardModifier.AltModifier)  # in flight
        assert panel.message.text() == "An accept (buy) is already in flight"
        qtbot.waitUntil(lambda: panel.last_result is not None, timeout=5000)
        assert panel.last_result is not None and panel.last_result.status == "filled"
        assert len(accept_posts(sandbox, account)) == 1
        accepts = [e for e in live.desks.journal.entries() if e.kind == "accept"]
        assert len(accepts) == 1
        assert history_kinds(panel) == [("requested", None), ("accepted", "buy")]
        assert panel.size_edit.text() == SIZE
    finally:
        clear_faults(sandbox)


@pytest.mark.qt_log_ignore(
    "This plugin does not support propagateSizeHints", "This plugin does not support raise"
)
def test_f3_without_a_dock_shows_the_panel_and_selects_the_size(qtbot: QtBot, live: Live) -> None:
    panel = RfqTicketPanel(live.context, live.desks.rfq)
    qtbot.addWidget(panel)
    panel.size_edit.setText("0.25")
    panel.show()
    qtbot.waitExposed(panel)
    panel.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is panel)
    panel.request_button.setFocus()
    QTest.keyClick(panel.request_button, Qt.Key.Key_F3)
    assert QApplication.focusWidget() is panel.size_edit
    assert panel.size_edit.selectedText() == "0.25"


@pytest.mark.parametrize("menu_entry", [True, False])
def test_f3_in_the_terminals_main_window_with_or_without_a_trade_menu_entry(
    qtbot: QtBot, live: Live, menu_entry: bool
) -> None:
    """Registered with ``shortcut="F3"`` the Trade menu entry owns the key and the panel adds
    no second binding (two would be ambiguous and neither would fire); registered without, the
    panel's own F3 does the job. Either way F3 brings a closed dock back with the size
    selected."""
    spec = PanelSpec(
        "rfqTicket",
        "RFQ",
        Qt.DockWidgetArea.RightDockWidgetArea,
        lambda context: RfqTicketPanel(context, live.desks.rfq),
        shortcut="F3" if menu_entry else "",
    )
    window = MainWindow(live.context, [spec], "test")
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    dock = window.docks["rfqTicket"]
    panel = dock.widget()
    assert isinstance(panel, RfqTicketPanel)
    assert (panel.focus_shortcut is None) == menu_entry
    panel.size_edit.setText("0.5")
    dock.close()
    QTest.keyClick(window, Qt.Key.Key_F3)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is panel.size_edit)
    assert dock.isVisible() and panel.size_edit.selectedText() == "0.5"


# -- requote ----------------------------------------------------------------------------------


def test_requote_gives_a_new_quote_for_the_same_pair_and_size(qtbot: QtBot, live: Live) -> None:
    ticket = open_ticket(qtbot, live)
    panel = ticket.panel
    assert not panel.requote_button.isEnabled()  # nothing to requote yet
    first = request(qtbot, panel, size="150", pair="ETH/USD")
    panel.size_edit.setText("999")  # requote reuses the quote's size, not the field
    QTest.mouseClick(panel.requote_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.live_quote is not first)
    second = panel.live_quote
    assert second is not None and second.order_id != first.order_id
    assert (second.pair, second.size) == ("ETH/USD", Amount(Decimal(150), "ETH"))
    assert second.order_id[:8] in panel.quote_label.text()
    assert history_kinds(panel) == [("requested", None), ("requested", None)]


@pytest.mark.slow
def test_auto_requote_after_expiry_requests_again_and_is_remembered(
    qtbot: QtBot, live_factory: LiveFactory, short_sandbox: SandboxProcess
) -> None:
    live = live_factory(short_sandbox)
    ticket = open_ticket(qtbot, live)
    panel = ticket.panel
    desk = live.desks.rfq
    assert not panel.auto_requote.isChecked() and not auto(desk)
    panel.auto_requote.click()
    assert auto(desk)
    assert live.context.settings.value(SETTINGS_AUTO_REQUOTE, type=bool) is True
    first = request(qtbot, panel)
    qtbot.waitUntil(lambda: panel.live_quote is not first, timeout=SHORT_TTL * 1000 + 5000)
    second = panel.live_quote
    assert second is not None and second.order_id != first.order_id
    assert (second.pair, second.size) == (first.pair, first.size)
    assert panel.frame_timer_active and panel.sides["buy"].accept.isEnabled()
    kinds = [k for k, _ in history_kinds(panel)]
    assert kinds[0] == "requested" and kinds[-1] == "requested" and kinds.count("expired") == 2
    panel.auto_requote.click()  # off again: the desk and the setting follow
    assert not auto(desk)
    assert live.context.settings.value(SETTINGS_AUTO_REQUOTE, type=bool) is False


def auto(desk: RfqDesk) -> bool:
    return desk.auto_requote


def test_a_new_panel_reads_the_auto_requote_setting(qtbot: QtBot, live: Live) -> None:
    live.context.settings.setValue(SETTINGS_AUTO_REQUOTE, True)
    panel = RfqTicketPanel(live.context, live.desks.rfq)
    qtbot.addWidget(panel)
    assert panel.auto_requote.isChecked() and live.desks.rfq.auto_requote


# -- pair, size unit and errors ---------------------------------------------------------------


def test_the_pair_follows_the_selection_until_picked_and_the_size_can_be_in_quote(
    qtbot: QtBot, live: Live
) -> None:
    ticket = open_ticket(qtbot, live)
    panel = ticket.panel
    assert panel.pair_box.currentText() == live.session.selected_pair
    live.bridge.select_pair("ETH/USD")
    assert panel.pair_box.currentText() == "ETH/USD"
    assert panel.unit_button.text() == "ETH"
    line = panel.pair_box.lineEdit()
    assert line is not None
    line.selectAll()
    QTest.keyClicks(line, "SOL/USD")  # typed by hand: the box stops following
    live.bridge.select_pair("BTC/USD")
    assert panel.pair_box.currentText() == "SOL/USD"
    QTest.mouseClick(panel.unit_button, Qt.MouseButton.LeftButton)
    assert panel.unit_button.text() == "USD"
    panel.size_edit.setText("1,000")
    QTest.mouseClick(panel.request_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.live_quote is not None)
    quote = panel.live_quote
    assert quote is not None and quote.pair == "SOL/USD"
    assert quote.size == Amount(Decimal(1000), "USD")
    assert quote.quote.buy.source == Amount(Decimal(1000), "USD")  # pay exactly 1,000 USD


def test_switching_the_size_asset_converts_a_typed_size_at_the_mid(
    qtbot: QtBot, live: Live
) -> None:
    """A size already typed never keeps its digits in the other asset: it is converted at the
    mid of the book, visibly, and back again."""
    ticket = open_ticket(qtbot, live)
    panel = ticket.panel
    qtbot.waitUntil(lambda: PAIR in (live.bridge.topOfBook.latest or {}), timeout=5000)
    panel.pair_box.setEditText(PAIR)
    panel.size_edit.setText("0.01")
    QTest.mouseClick(panel.unit_button, Qt.MouseButton.LeftButton)
    assert panel.unit_button.text() == "USD"
    converted = Decimal(panel.size_edit.text())
    assert Decimal(100) < converted < Decimal(10_000)  # 0.01 BTC near 90,000 USD
    assert converted == converted.quantize(Decimal("0.01"))  # USD's decimals
    message = panel.message.text()
    assert message.startswith("Size converted at the mid "), message
    assert message.endswith(f": 0.01 BTC ≈ {converted:,.2f} USD")
    assert panel.message.property("level") == "info"
    QTest.mouseClick(panel.unit_button, Qt.MouseButton.LeftButton)
    assert panel.unit_button.text() == "BTC"
    back = Decimal(panel.size_edit.text())
    assert abs(back - Decimal("0.01")) < Decimal("0.0001")


def test_a_task_that_fails_unexpectedly_is_said_until_something_else_is(
    qtbot: QtBot, live: Live
) -> None:
    """An unforeseen failure of one of the panel's tasks stays in the message: the next market
    snapshot (a preview a few times a second) does not wipe it."""
    ticket = open_ticket(qtbot, live)
    panel = ticket.panel

    async def broken() -> None:
        raise RuntimeError("the feed handed back nonsense")

    panel._tasks.spawn(broken(), "RFQ check")
    expected = "RFQ check: the feed handed back nonsense"
    qtbot.waitUntil(lambda: panel.message.text() == expected, timeout=5000)
    assert panel.message.property("level") == "error"
    live.desks.rfq.session.market.pairs_changed()  # a new snapshot: a new preview
    assert panel.ticket.preview.message.text == expected
    assert panel.message.text() == expected


def request_by_click(qtbot: QtBot, live: Live, pair: str, size: str) -> Ticket:
    """A fresh RFQ ticket with ``pair`` and ``size`` typed in and Request clicked (keep the
    ticket: its window holds the panel)."""
    ticket = open_ticket(qtbot, live)
    ticket.panel.pair_box.setEditText(pair)
    ticket.panel.size_edit.setText(size)
    QTest.mouseClick(ticket.panel.request_button, Qt.MouseButton.LeftButton)
    return ticket


@pytest.mark.parametrize(
    ("pair", "size", "expected"),
    [
        (PAIR, "abc", "The size must be a number such as 0.5 (got 'abc')"),
        (PAIR, "-1", "The size must be greater than zero"),
        (PAIR, "", "Enter a size"),
        ("BTCUSD", "1", "Choose a pair such as BTC/USD (got 'BTCUSD')"),
    ],
)
def test_bad_input_is_explained_locally_and_nothing_is_requested(
    qtbot: QtBot, live: Live, pair: str, size: str, expected: str
) -> None:
    ticket = request_by_click(qtbot, live, pair, size)
    panel = ticket.panel
    assert panel.message.text() == expected and panel.message.property("level") == "error"
    assert not panel.requesting and live.desks.rfq.events == []
    assert (panel.pair_box.currentText(), panel.size_edit.text()) == (pair, size)


@pytest.mark.parametrize(
    ("pair", "size", "expected"),
    [
        (PAIR, "0.000000001", "HTTP 400: size has more than the 8 decimal places allowed"),
        ("DOGE/USD", "1", "HTTP 400: Unknown assetPair 'DOGE/USD'"),
    ],
)
def test_the_servers_refusal_of_a_request_shows_inline_and_values_stay(
    qtbot: QtBot, live: Live, pair: str, size: str, expected: str
) -> None:
    ticket = request_by_click(qtbot, live, pair, size)
    panel = ticket.panel
    qtbot.waitUntil(lambda: not panel.requesting)
    message = panel.message.text()
    assert message.startswith(f"No quote for {pair} ") and expected in message, message
    assert panel.live_quote is None and panel.request_button.isEnabled()
    assert (panel.pair_box.currentText(), panel.size_edit.text()) == (pair, size)


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        ({"kind": "status", "status": 503}, ": HTTP 503"),
        ({"kind": "drop"}, ": connection to "),
    ],
)
def test_a_server_failure_shows_inline_and_the_next_request_works(
    qtbot: QtBot, live: Live, sandbox: SandboxProcess, fault: dict[str, Any], expected: str
) -> None:
    ticket = open_ticket(qtbot, live)
    panel = ticket.panel
    path = f"/account/{live.account.account}/order/rfq$"
    admin_faults(sandbox, [{**fault, "path": path, "method": "POST", "count": 10}])
    try:
        panel.pair_box.setEditText(PAIR)
        panel.size_edit.setText(SIZE)
        QTest.mouseClick(panel.request_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: not panel.requesting, timeout=15000)
        message = panel.message.text()
        assert message.startswith(f"No quote for {PAIR} 0.01 BTC{expected}"), message
        assert "Traceback" not in message and panel.live_quote is None
        assert panel.size_edit.text() == SIZE
    finally:
        clear_faults(sandbox)
    quote = request(qtbot, panel)
    assert panel.message.text() == "" and quote.pair == PAIR


def test_a_closed_panel_leaves_no_subscriber_on_the_desk(qtbot: QtBot, live: Live) -> None:
    desk = live.desks.rfq
    before = (len(desk.quotes._subscribers), len(desk.history._subscribers))
    panel = RfqTicketPanel(live.context, live.desks.rfq)
    assert len(desk.quotes._subscribers) == before[0] + 1
    destroyed: list[bool] = []
    panel.destroyed.connect(lambda: destroyed.append(True))
    panel.deleteLater()
    qtbot.waitUntil(lambda: bool(destroyed))
    QApplication.processEvents()
    assert (len(desk.quotes._subscribers), len(desk.history._subscribers)) == before


def test_quote_history_model_contract(qtmodeltester: ModelTester) -> None:
    """The history, a column spec on the keyed table, keeps Qt's model contract as events
    arrive newest first."""
    model = QuoteHistoryModel()
    size = Amount(Decimal("0.01"), "BTC")
    model.add(QuoteEvent("requested", "q1", "BTC/USD", size))
    model.add(QuoteEvent("accepted", "q1", "BTC/USD", size, side="buy", ms_left=1234))
    qtmodeltester.check(model)  # type: ignore[no-untyped-call]
    assert [e.kind for e in model.events()] == ["requested", "accepted"]
    assert model.index(0, model.column("event")).data() == "accepted"
    assert model.index(0, model.column("ms_left")).data() == "1,234"


@pytest.mark.slow
@pytest.mark.parametrize("jump", [600, -600])
def test_a_wall_clock_jump_leaves_the_countdown_on_server_time(
    qtbot: QtBot, live_factory: LiveFactory, short_sandbox: SandboxProcess, jump: int
) -> None:
    """The wall clock jumps ±600 s after start, then back mid-countdown: the countdown shows
    the server's time left throughout (not 600 s more, not expired at once), and at expiry the
    accept buttons go off. (A ``SHORT_TTL`` quote, to reach its expiry quickly; the desk test
    runs a 10 s quote.)"""
    live = live_factory(short_sandbox)
    clock = live.session.client.clock
    clock.now = lambda: system_now() + timedelta(seconds=jump)
    ticket = open_ticket(qtbot, live)
    panel = ticket.panel
    quote = request(qtbot, panel)
    assert clock.jumps >= 1
    assert clock.offset.total_seconds() == pytest.approx(-jump, abs=0.2)
    expires = quote.quote.buy.expires_at

    def truth() -> float:
        return (expires - clock.server_now()).total_seconds()

    qtbot.waitUntil(lambda: panel.sides["buy"].accept.isEnabled())
    assert 0 < shown_seconds(panel, "buy") <= SHORT_TTL
    assert shown_seconds(panel, "buy") == pytest.approx(truth(), abs=0.3)
    clock.now = system_now  # the clock is set right again, mid-countdown
    qtbot.wait(200)
    assert shown_seconds(panel, "buy") == pytest.approx(truth(), abs=0.3)
    assert (clock.server_now() - system_now()).total_seconds() == pytest.approx(0, abs=0.2)
    qtbot.waitUntil(lambda: panel.sides["buy"].countdown.text == "expired", timeout=8000)
    assert truth() <= 0.1
    assert not panel.sides["buy"].accept.isEnabled()
    assert not panel.sides["sell"].accept.isEnabled()
