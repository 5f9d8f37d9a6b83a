"""The kill switch and the risk limits in the window: the hotkey halts (a real key event) and a
second press stays halted, the status bar and the toolbar say so in words, re-enabling asks
first, the halt comes back after a restart (the settings file), Settings stores and applies the
limits, a hand order from the ticket is refused with the limit's name and an RFQ accept (Alt+B)
while halted is refused, nothing sent."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QDialogButtonBox, QLabel, QLineEdit, QMessageBox
from pytestqt.qtbot import QtBot

from app.services.log_events import LogEvent
from app.services.risk import RiskGate, RiskLimits
from app.ui.launch import default_panels
from app.ui.main_window import HALT_KEY, HALTED_KEY, MIN_SIZE, Area, MainWindow, PanelSpec
from app.ui.order_confirm import SETTINGS_KEY as CONFIRM_KEY
from app.ui.panels.order_ticket import OrderTicketPanel
from app.ui.panels.rfq_ticket import RfqTicketPanel
from app.ui.preferences import Preferences
from app.ui.status_bar import HALTED_TEXT
from tests.helpers.live import Live
from tests.helpers.qt import run

CTRL_SHIFT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier


def open_window(qtbot: QtBot, live: Live, risk: RiskGate | None = None) -> MainWindow:
    """The order ticket in a window with the desks' risk gate (or ``risk``), active."""
    specs = [
        PanelSpec(
            "orderTicket",
            "Order ticket",
            Area.RightDockWidgetArea,
            lambda context: OrderTicketPanel(context, live.desks.orders),
            shortcut="F2",
            menu="Trade",
        )
    ]
    window = MainWindow(live.context, specs, "test", risk=risk or live.desks.risk)
    qtbot.addWidget(window)
    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    return window


def ticket_of(window: MainWindow) -> OrderTicketPanel:
    panel = window.docks["orderTicket"].widget()
    assert isinstance(panel, OrderTicketPanel)
    return panel


def press_halt(window: MainWindow) -> None:
    QTest.keyClick(window.focusWidget() or window, Qt.Key.Key_H, CTRL_SHIFT)


def halted(risk: RiskGate) -> bool:
    """The kill switch now (a call: mypy would narrow the property between key presses)."""
    return risk.halted


def stored_halt(live: Live) -> bool:
    return str(live.context.settings.value(HALTED_KEY, False)).lower() == "true"


def resume_box(qtbot: QtBot, window: MainWindow) -> QMessageBox:
    box = window.resume_box
    assert box is not None
    qtbot.waitUntil(box.isVisible)
    return box


def test_the_hotkey_halts_at_once_and_a_second_press_stays_halted(qtbot: QtBot, live: Live) -> None:
    window = open_window(qtbot, live)
    risk = live.desks.risk
    status = window.status
    assert not halted(risk) and status.halted.isHidden()
    assert window.kill_action.text() == "■ Halt trading"
    hint = status.minimumSizeHint()
    press_halt(window)
    assert halted(risk)  # synchronous: set before the key event returned
    assert risk.why.startswith(f"halted with {HALT_KEY} or the Trade menu at ")
    assert status.halted.isVisible() and status.halted.text().startswith(HALTED_TEXT)
    assert risk.why in status.halted.toolTip()
    assert window.kill_action.text() == "■ TRADING HALTED — Re-enable…"  # words, not only red
    assert window.kill_button.styleSheet() != ""
    assert stored_halt(live)
    assert status.offset.isHidden() and status.token.isHidden()  # their room, not more
    assert status.minimumSizeHint().width() <= hint.width() and window.minimumSize() == MIN_SIZE
    why = risk.why
    press_halt(window)  # again: never re-enables, and keeps the first reason
    assert risk.halted and risk.why == why
    assert window.resume_box is None  # the key never asks to re-enable


def test_re_enabling_asks_first_and_cancel_keeps_the_halt(qtbot: QtBot, live: Live) -> None:
    window = open_window(qtbot, live)
    risk = live.desks.risk
    assert not window.resume_action.isEnabled()
    QTest.mouseClick(window.kill_button, Qt.MouseButton.LeftButton)  # the toolbar halts
    assert risk.halted and "toolbar" in risk.why
    assert window.resume_action.isEnabled()
    window.resume_action.trigger()  # Trade > Re-enable trading…
    box = resume_box(qtbot, window)
    assert risk.why in box.text()
    QTest.mouseClick(box.button(QMessageBox.StandardButton.Cancel), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not box.isVisible())
    assert risk.halted and stored_halt(live)
    QTest.mouseClick(window.kill_button, Qt.MouseButton.LeftButton)  # halted: it asks too
    box = resume_box(qtbot, window)
    yes = box.button(QMessageBox.StandardButton.Yes)
    assert yes.text() == "Re-enable trading"
    QTest.mouseClick(yes, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not risk.halted)
    assert window.status.halted.isHidden() and not stored_halt(live)
    assert window.status.offset.isVisible() and window.status.token.isVisible()
    assert window.kill_action.text() == "■ Halt trading"


def test_the_halt_and_the_limits_come_back_after_a_restart(qtbot: QtBot, live: Live) -> None:
    first = open_window(qtbot, live)
    press_halt(first)
    why = live.desks.risk.why
    Preferences(risk_max_order_notional=Decimal(2500)).save(live.context.settings)
    first.close()
    # A new terminal: a new gate, the same settings file.
    gate = RiskGate(clock=live.session.client.clock)
    said: list[LogEvent] = []
    live.session.events.subscribe(said.append)
    second = open_window(qtbot, live, gate)
    assert gate.halted and gate.why == why
    assert gate.limits == RiskLimits(max_order_notional=Decimal(2500))
    assert second.status.halted.isVisible() and why in second.status.halted.toolTip()
    assert any("as it was when the terminal last closed" in event.message for event in said)


@pytest.mark.slow
def test_the_hotkey_is_listed_once_among_every_shortcut(qtbot: QtBot, live: Live) -> None:
    window = MainWindow(live.context, default_panels(live.desks), "test", risk=live.desks.risk)
    qtbot.addWidget(window)
    shortcuts = window.shortcut_list()
    assert ("Ctrl+Shift+H", "Trade > Halt trading (kill switch)") in shortcuts
    menu_keys = Counter(keys for keys, what in shortcuts if ">" in what)
    assert menu_keys[HALT_KEY] == 1
    assert all(count == 1 for count in menu_keys.values()), menu_keys


def test_settings_store_and_apply_the_limits(qtbot: QtBot, live: Live) -> None:
    window = open_window(qtbot, live)
    window.settings_action.trigger()
    dialog = window.settings_dialog
    qtbot.waitUntil(dialog.isVisible)
    apply = dialog.buttons.button(QDialogButtonBox.StandardButton.Apply)
    labels = {label.text() for label in dialog.findChildren(QLabel)}
    assert {"Max order notional (USD)", "Max orders per minute", "Max position"} <= labels

    def enter(name: str, text: str) -> QLineEdit:
        edit = dialog.risk[name]
        edit.clear()
        QTest.keyClicks(edit, text)
        return edit

    enter("risk_max_order_notional", "100,000")
    per_minute = enter("risk_max_orders_per_minute", "2.5")
    QTest.mouseClick(apply, Qt.MouseButton.LeftButton)
    assert dialog.error.text() == "max orders per minute: a whole number of orders, not 2.5"
    assert per_minute.text() == "2.5"  # what was typed stays
    enter("risk_max_orders_per_minute", "30")
    positions = enter("risk_max_position", "BTC: lots")
    QTest.mouseClick(apply, Qt.MouseButton.LeftButton)
    assert dialog.error.text() == "max position: BTC: 'lots' is not a number"
    assert positions.text() == "BTC: lots"
    enter("risk_max_position", "BTC: 5; eth: 1,000")
    enter("risk_max_notional_per_day", "-1")
    QTest.mouseClick(apply, Qt.MouseButton.LeftButton)
    assert dialog.error.text() == (
        "max notional per day: greater than zero, or empty for no limit, not -1"
    )
    enter("risk_max_notional_per_day", "")  # empty: no limit
    QTest.mouseClick(apply, Qt.MouseButton.LeftButton)
    assert dialog.error.text() == ""
    expected = RiskLimits(
        max_order_notional=Decimal(100_000),
        max_orders_per_minute=30,
        max_position={"BTC": Decimal(5), "ETH": Decimal(1000)},
        currency="USD",
    )
    assert live.desks.risk.limits == expected  # applied at once
    stored = Preferences.load(live.context.settings)
    assert stored.risk_limits() == expected and stored.risk_max_notional_per_day is None


def test_a_hand_order_is_refused_with_the_limit_named_and_nothing_sent(
    qtbot: QtBot, live: Live
) -> None:
    live.context.settings.setValue(CONFIRM_KEY, False)  # Enter sends
    window = open_window(qtbot, live)
    panel = ticket_of(window)
    live.bridge.select_pair("BTC/USD")
    qtbot.waitUntil(lambda: panel.pair_box.currentText() == "BTC/USD", timeout=10_000)
    qtbot.waitUntil(
        lambda: (
            "BTC/USD" in (live.bridge.topOfBook.latest or {})
            and live.bridge.balances.latest is not None
        ),
        timeout=10_000,
    )
    live.desks.risk.limits = RiskLimits(max_order_notional=Decimal(500))
    panel.size_edit.clear()
    QTest.keyClicks(panel.size_edit, "1000")  # buy BTC for 1,000 USD
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.outcome_label.text().startswith("Not sent"), timeout=10_000)
    assert panel.outcome_label.text() == (
        "Not sent: Refused by the risk limit 'max order notional': this order is 1,000 USD, "
        "the limit is 500 USD"
    )
    assert panel.size_edit.text() == "1000"
    press_halt(window)  # the kill switch, with the cursor in the ticket
    live.desks.risk.limits = RiskLimits()
    QTest.keyClick(panel.size_edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "kill switch" in panel.outcome_label.text(), timeout=10_000)
    assert panel.outcome_label.text().startswith("Not sent: Trading is halted by the kill switch")
    assert live.desks.journal.entries() == []
    assert run(qtbot, live.session.client.orders()) == []


def test_an_rfq_accept_is_refused_while_halted(qtbot: QtBot, live: Live) -> None:
    specs = [
        PanelSpec(
            "rfqTicket",
            "RFQ",
            Area.RightDockWidgetArea,
            lambda context: RfqTicketPanel(context, live.desks.rfq),
        )
    ]
    window = MainWindow(live.context, specs, "test", risk=live.desks.risk)
    qtbot.addWidget(window)
    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    panel = window.docks["rfqTicket"].widget()
    assert isinstance(panel, RfqTicketPanel)
    panel.pair_box.setEditText("BTC/USD")
    panel.size_edit.setText("0.01")
    QTest.mouseClick(panel.request_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.live_quote is not None, timeout=10_000)
    qtbot.waitUntil(panel.sides["buy"].accept.isEnabled, timeout=10_000)
    panel.size_edit.setFocus()
    press_halt(window)
    QTest.keyClick(panel.size_edit, Qt.Key.Key_B, Qt.KeyboardModifier.AltModifier)  # accept
    qtbot.waitUntil(lambda: "kill switch" in panel.message.text(), timeout=10_000)
    assert panel.message.text().startswith("Not sent: Trading is halted by the kill switch (")
    assert [e for e in live.desks.journal.entries() if e.kind == "accept"] == []
    assert run(qtbot, live.session.client.orders()) == []
