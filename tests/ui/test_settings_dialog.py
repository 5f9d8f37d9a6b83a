"""Edit > Settings: stored and read back exactly, bad values refused with a reason, and every
change at work at once in the running terminal (no restart)."""

from __future__ import annotations

import logging
from decimal import Decimal

from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QPalette
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QDialogButtonBox
from pytestqt.qtbot import QtBot

from app.ui.main_window import Area, MainWindow, PanelSpec
from app.ui.panels.balances import BalancesPanel
from app.ui.panels.order_ticket import OrderTicketPanel
from app.ui.panels.rfq_ticket import RfqTicketPanel
from app.ui.preferences import Preferences
from app.ui.settings_dialog import SettingsDialog
from app.ui.theme import current_theme, trade_palette
from tests.helpers.live import Live


def open_window(qtbot: QtBot, live: Live) -> MainWindow:
    """Balances and both tickets: the tickets take their share of the preferences (limits,
    auto-requote) for their desks."""
    specs = [
        PanelSpec("balances", "Balances", Area.LeftDockWidgetArea, BalancesPanel),
        PanelSpec(
            "orderTicket",
            "Order ticket",
            Area.RightDockWidgetArea,
            lambda context: OrderTicketPanel(context, live.desks.orders),
            shortcut="F2",
            menu="Trade",
        ),
        PanelSpec(
            "rfqTicket",
            "RFQ",
            Area.RightDockWidgetArea,
            lambda context: RfqTicketPanel(context, live.desks.rfq),
            tab_with="orderTicket",
        ),
    ]
    window = MainWindow(live.context, specs, "test")
    qtbot.addWidget(window)
    window.show()
    return window


def settings_dialog(qtbot: QtBot, window: MainWindow) -> SettingsDialog:
    window.settings_action.trigger()
    dialog = window.settings_dialog
    qtbot.waitUntil(dialog.isVisible)
    return dialog


def error_colour(dialog: SettingsDialog) -> object:
    dialog.error.ensurePolished()
    return dialog.error.palette().color(QPalette.ColorRole.WindowText)


def test_preferences_round_trip_exactly(settings: QSettings) -> None:
    prefs = Preferences(
        top_of_book=Decimal("0.25"),
        max_notional=Decimal("1000000.01"),
        max_distance_percent=Decimal("2.5"),
        default_watchlist=("BTC/USD",),
        notify=(),
        confirm_orders=False,
        theme="light",
        log_level="DEBUG",
        slippage_bps=Decimal("12.5"),
    )
    prefs.save(settings)
    assert Preferences.load(settings) == prefs
    assert Preferences.load(settings).check_limits().max_distance == Decimal("0.025")


def test_bad_values_are_refused_with_a_reason(qtbot: QtBot, live: Live) -> None:
    window = open_window(qtbot, live)
    dialog = settings_dialog(qtbot, window)
    before = Preferences.load(live.context.settings)
    dialog.intervals["top_of_book"].setText("0.01")
    assert not dialog.apply()
    assert dialog.error.text() == "poll interval must be between 0.1 and 60 seconds, not 0.01"
    assert dialog.intervals["top_of_book"].text() == "0.01"  # what was typed stays
    dialog.intervals["top_of_book"].setText("fast")
    assert not dialog.apply()
    assert dialog.error.text() == "'fast' is not a number"
    dialog.intervals["top_of_book"].setText("0.5")
    dialog.watchlist.setText("BTC/USD, NOPE/USD")
    assert not dialog.apply()
    assert dialog.error.text() == "not traded on this service: NOPE/USD"
    dialog.watchlist.setText("")
    dialog.slippage.setText("600")
    assert not dialog.apply()
    assert dialog.error.text() == "the slippage collar is between 0 and 500 bps, not 600"
    dialog.slippage.setText("10")
    dialog.max_distance.setText("0")
    assert not dialog.apply()
    assert "between 0 and 100" in dialog.error.text()
    assert Preferences.load(live.context.settings) == before  # nothing stored
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    QTest.mouseClick(ok, Qt.MouseButton.LeftButton)
    assert dialog.isVisible()  # OK with a bad value keeps the dialog open


def test_changes_apply_at_once(qtbot: QtBot, live: Live, app: QApplication) -> None:
    window = open_window(qtbot, live)
    dialog = settings_dialog(qtbot, window)
    dialog.intervals["top_of_book"].setText("2")
    dialog.intervals["balances"].setText("0.5")
    dialog.max_notional.setText("5000")
    dialog.max_distance.setText("1")
    dialog.slippage.setText("25")
    dialog.auto_requote.setChecked(True)
    dialog.confirm.setChecked(False)
    dialog.log_level.setCurrentText("DEBUG")
    dialog.currency.setCurrentText("BTC")
    dialog.watchlist.setText("eth/usd, BTC/USD")
    old_level = logging.getLogger().level
    try:
        with qtbot.waitSignal(window.preferences_applied):
            assert dialog.apply()
        session, desks = live.session, live.desks
        assert session.top_of_book.interval == 2.0 and session.balances.interval == 0.5
        assert desks.orders.limits.max_notional == Decimal(5000)
        assert desks.orders.limits.max_distance == Decimal("0.01")
        assert desks.orders.limits.valuation == "BTC"
        assert desks.rfq.auto_requote
        assert logging.getLogger().level == logging.DEBUG
        assert session.watchlist == ["ETH/USD", "BTC/USD"]
        balances = window.docks["balances"].widget()
        assert isinstance(balances, BalancesPanel) and balances.valuation_currency == "BTC"
        assert live.context.settings.value("orders/confirm") in (False, "false")
        stored = Preferences.load(live.context.settings)
        assert stored.max_notional == Decimal(5000) and stored.auto_requote
        assert stored.slippage_bps == Decimal(25)  # persisted, and the ticket uses it
        ticket = window.docks["orderTicket"].widget()
        assert isinstance(ticket, OrderTicketPanel) and ticket.slippage_bps == Decimal(25)
    finally:
        logging.getLogger().setLevel(old_level)


def test_help_lists_every_shortcut(qtbot: QtBot, live: Live) -> None:
    window = open_window(qtbot, live)
    keys = dict(window.shortcut_list())
    assert keys["F2"] == "Trade > Order ticket"
    assert keys["Ctrl+,"] == "Edit > Settings…"
    assert keys["F1"] == "Help > Help on this panel"
    assert keys["Shift+F1"] == "Help > Keyboard shortcuts"
    assert "Alt+B / Alt+S" in keys
    window.show_shortcuts()
    qtbot.waitUntil(window.shortcuts_box.isVisible)
    assert "Order ticket" in window.shortcuts_box.text()


def test_the_reason_follows_a_theme_switched_by_the_dialog(
    qtbot: QtBot, live: Live, app: QApplication
) -> None:
    """Apply switches the theme with the dialog still open: a later refusal reads in the new
    theme's error colour."""
    window = open_window(qtbot, live)
    dialog = settings_dialog(qtbot, window)
    dialog.intervals["top_of_book"].setText("fast")
    assert not dialog.apply()
    assert error_colour(dialog) == trade_palette("dark").error
    dialog.intervals["top_of_book"].setText("0.5")
    dialog.theme.setCurrentText("light")
    assert dialog.apply()
    assert current_theme(app) == "light"
    dialog.intervals["top_of_book"].setText("fast")
    assert not dialog.apply()
    assert dialog.error.text() == "'fast' is not a number"
    assert error_colour(dialog) == trade_palette("light").error
