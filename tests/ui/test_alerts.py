"""Price alerts in the terminal, on the live sandbox with real mouse and key events:
made from the watchlist's row menu and from the Alerts panel, bad levels refused in words with
the values kept, fired by the sandbox's price (held by its admin price route), re-armed,
edited and deleted in the panel, told through the notices and the tray, and still there after
a restart (the settings file)."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QAction
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLabel, QMenu, QToolBar, QToolButton, QWidget
from pytestqt.qtbot import QtBot

from app.domain.alerts import Condition, PriceAlert, PriceSource, Repeat, new_alert_id
from app.domain.display import format_number
from app.domain.records import TopOfBook
from app.services.log_events import EventKind, LogEvent
from app.ui.alert_dialog import AlertDialog
from app.ui.launch import default_panels
from app.ui.main_window import MainWindow
from app.ui.notifier import TrayMessage
from app.ui.panels.alerts import AlertsPanel, read_alerts
from app.ui.panels.top_of_book import TopOfBookPanel
from tests.harness import SandboxProcess
from tests.helpers.live import Live, LiveFactory
from tests.helpers.qt import right_click, shown

PAIR = "BTC/USD"
WAIT_MS = 10_000
POPUP_LOGS = (
    "^This plugin does not support raise\\(\\)$",  # the offscreen platform, for the popup menu
    "^This plugin does not support grabbing the keyboard$",
)


def press(qtbot: QtBot, toolbar: QToolBar, action: QAction) -> None:
    """A mouse click on the toolbar button of ``action``."""
    button = toolbar.widgetForAction(action)
    assert isinstance(button, QToolButton) and button.isEnabled(), action.text()
    QTest.mouseClick(button, Qt.MouseButton.LeftButton)


def type_into(qtbot: QtBot, field: QWidget, text: str) -> None:
    """Replace the field's text by typing, as a trader does (select all, then the keys)."""
    field.setFocus()
    QTest.keyClick(field, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    QTest.keyClick(field, Qt.Key.Key_Delete)
    QTest.keyClicks(field, text)


def refused(qtbot: QtBot, dialog: AlertDialog, text: str, message: str) -> None:
    """Typing ``text`` and Enter: the dialog stays with ``message`` and keeps every value."""
    terms = (dialog.pair.currentText(), dialog.source.currentText(), dialog.condition.currentText())
    type_into(qtbot, dialog.level, text)
    QTest.keyClick(dialog.level, Qt.Key.Key_Return)
    assert dialog.isVisible()
    assert dialog.error.isVisible() and dialog.error.text() == message
    assert dialog.level.text() == text
    assert dialog.focusWidget() is dialog.level
    assert terms == (
        dialog.pair.currentText(),
        dialog.source.currentText(),
        dialog.condition.currentText(),
    )


def cells(panel: AlertsPanel, row: int = 0) -> dict[str, str]:
    model = panel.model
    return {spec.key: model.cell(row, n).display for n, spec in enumerate(model.columns)}


def pin(sandbox: SandboxProcess, mid: str, pair: str = PAIR) -> None:
    with sandbox.admin() as admin:
        response = admin.post("/api/v1/sandbox/admin/price", json={"assetPair": pair, "mid": mid})
        assert response.status_code == 200, response.text


def polls(qtbot: QtBot, live: Live, count: int = 3) -> None:
    """Wait for ``count`` more top-of-book polls."""
    seen: list[dict[str, TopOfBook]] = []
    live.bridge.topOfBook.connect(seen.append)
    qtbot.waitUntil(lambda: len(seen) >= count, timeout=WAIT_MS)
    live.bridge.topOfBook.disconnect(seen.append)


def shows(qtbot: QtBot, live: Live, mid: Decimal) -> None:
    """Wait for a poll whose BTC/USD mid is ``mid``."""
    seen: list[dict[str, TopOfBook]] = []
    live.bridge.topOfBook.connect(seen.append)
    qtbot.waitUntil(
        lambda: any(PAIR in books and books[PAIR].mid == mid for books in seen), timeout=WAIT_MS
    )
    live.bridge.topOfBook.disconnect(seen.append)


def fired(events: list[LogEvent]) -> list[str]:
    return [event.message for event in events if event.kind == EventKind.PRICE_ALERT]


def listen(live: Live) -> list[LogEvent]:
    events: list[LogEvent] = []
    live.bridge.logEvent.connect(events.append)
    return events


@pytest.mark.qt_log_ignore(*POPUP_LOGS)
def test_an_alert_is_made_from_the_watchlist_row_menu_and_bad_levels_are_refused(
    qtbot: QtBot, live: Live
) -> None:
    watch = shown(qtbot, TopOfBookPanel(live.context), 900, 400)
    alerts = shown(qtbot, AlertsPanel(live.context), 900, 300)
    model = watch.model
    qtbot.waitUntil(
        lambda: (row := model.row_of(PAIR)) is not None and model.record(row).bid is not None,
        timeout=WAIT_MS,
    )
    row = model.row_of(PAIR)
    assert row is not None
    index = model.index(row, model.column("bid"))
    bid = model.record(row).bid
    assert bid is not None
    right_click(watch.table.viewport(), watch.table.visualRect(index).center())
    qtbot.waitUntil(lambda: isinstance(QApplication.activePopupWidget(), QMenu))
    menu = QApplication.activePopupWidget()
    assert isinstance(menu, QMenu)
    action = menu.findChild(QAction, "newPriceAlert")
    assert action is not None and action.text() == f"Price &alert on {PAIR}…"
    QTest.mouseClick(menu, Qt.MouseButton.LeftButton, pos=menu.actionGeometry(action).center())
    qtbot.waitUntil(lambda: watch.alert_dialog is not None and watch.alert_dialog.isVisible())
    dialog = watch.alert_dialog
    assert dialog is not None
    assert dialog.pair.currentText() == PAIR
    assert dialog.source.currentText() == "Bid"
    assert dialog.level.text() == format_number(bid, 2, grouping=False)  # the bid clicked on
    assert dialog.unit.text() == "USD per BTC"

    refused(qtbot, dialog, "", "Enter a price in USD per BTC.")
    refused(
        qtbot,
        dialog,
        "ninety",
        "'ninety' is not a price: write a number such as 1234.5 (USD per BTC).",
    )
    refused(qtbot, dialog, "-5", "A price is greater than zero, not -5.")
    refused(
        qtbot,
        dialog,
        "1000.001",
        "BTC/USD prices have at most 2 decimals; 1000.001 has more (USD per BTC).",
    )
    assert alerts.model.rowCount() == 0

    label = dialog.findChild(QLabel, "alertLevelLabel")
    assert label is not None and label.buddy() is dialog.level  # "&Level" is Alt+L, not text
    dialog.activateWindow()
    qtbot.waitUntil(dialog.isActiveWindow)  # a mnemonic is a shortcut of the active window
    dialog.condition.setFocus()
    QTest.keyClick(dialog.condition, Qt.Key.Key_L, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(dialog.level.hasFocus)
    dialog.condition.setFocus()
    QTest.keyClick(dialog.condition, Qt.Key.Key_Down)  # At or above -> At or below
    assert dialog.condition.currentText() == "At or below"
    type_into(qtbot, dialog.level, "1,000")
    QTest.keyClick(dialog.level, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not dialog.isVisible())
    qtbot.waitUntil(lambda: alerts.model.rowCount() == 1)
    assert cells(alerts) | {"last_fired_at": ""} == {
        "pair": PAIR,
        "source": "Bid",
        "condition": "At or below",
        "level": "1,000.00",
        "repeat": "Once",
        "state": "Armed",
        "fired": "0",
        "last_fired_at": "",
        "last_price": "—",
    }
    stored, unreadable = read_alerts(live.context.settings)
    assert unreadable == 0 and [a.level for a in stored] == [Decimal(1000)]


def new_alert(qtbot: QtBot, panel: AlertsPanel, level: str) -> None:
    """New… in the panel: BTC/USD, mid, at or above ``level``, once."""
    press(qtbot, panel.toolbar, panel.new_action)
    qtbot.waitUntil(lambda: panel.dialog is not None and panel.dialog.isVisible())
    dialog = panel.dialog
    assert dialog is not None
    dialog.pair.setFocus()
    QTest.keyClick(dialog.pair, Qt.Key.Key_Home)  # the first pair the service lists
    assert dialog.pair.currentText() == PAIR
    assert dialog.source.currentText() == "Mid"
    assert dialog.repeat.currentText() == "Once"
    type_into(qtbot, dialog.level, level)
    QTest.keyClick(dialog.level, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not dialog.isVisible())


@pytest.mark.slow
def test_an_alert_fires_once_on_the_sandbox_price_is_rearmed_and_survives_a_restart(
    qtbot: QtBot,
    live_factory: LiveFactory,
    sandbox_factory: Callable[..., SandboxProcess],
    settings: QSettings,
) -> None:
    sandbox = sandbox_factory()
    pin(sandbox, "90000")  # BTC/USD mid held at 90,000
    live = live_factory(sandbox)
    live.bridge.set_watchlist(["ETH/USD"])  # the alert's pair is not watched
    events = listen(live)
    panel = shown(qtbot, AlertsPanel(live.context), 900, 300)
    new_alert(qtbot, panel, "91000")
    qtbot.waitUntil(lambda: panel.model.rowCount() == 1)
    polls(qtbot, live)
    assert fired(events) == []

    pin(sandbox, "92000")
    qtbot.waitUntil(lambda: len(fired(events)) == 1, timeout=WAIT_MS)
    assert fired(events) == [
        "Price alert: BTC/USD mid is at or above 91,000.00, now 92,000.00 USD per BTC "
        "(once: re-arm it in Alerts)"
    ]
    qtbot.waitUntil(lambda: cells(panel)["state"] == "Fired — re-arm")
    assert (cells(panel)["fired"], cells(panel)["last_price"]) == ("1", "92,000.00")
    header = panel.table.horizontalHeader()
    for column in range(header.count()):  # the time it fired, whole ("2026-11-24 0…" was cut)
        assert header.sectionSize(column) >= panel.table.sizeHintForColumn(column), column
    pin(sandbox, "90000")
    polls(qtbot, live)
    pin(sandbox, "92000")
    polls(qtbot, live)
    assert len(fired(events)) == 1  # once: silent until re-armed

    panel.table.selectRow(0)
    press(qtbot, panel.toolbar, panel.rearm_action)  # still above: due at the next poll
    qtbot.waitUntil(lambda: len(fired(events)) == 2, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: cells(panel)["fired"] == "2")
    assert cells(panel)["state"] == "Fired — re-arm" and panel.rearm_action.isEnabled()

    # a restart: a new session and panel over the same settings file
    again = live_factory(sandbox)
    again.bridge.set_watchlist([PAIR])  # watched now: the test sees the price go back
    later = listen(again)
    reopened = shown(qtbot, AlertsPanel(again.context), 900, 300)
    assert reopened.model.rowCount() == 1
    assert cells(reopened) | {"last_fired_at": ""} == cells(panel) | {"last_fired_at": ""}
    assert cells(reopened)["state"] == "Fired — re-arm"
    pin(sandbox, "90000")
    shows(qtbot, again, Decimal(90000))
    reopened.table.selectRow(0)
    press(qtbot, reopened.toolbar, reopened.rearm_action)
    polls(qtbot, again)
    assert fired(later) == []  # below the level
    pin(sandbox, "91500")
    qtbot.waitUntil(lambda: len(fired(later)) == 1, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: cells(reopened)["fired"] == "3")


def test_an_alert_is_edited_and_deleted_in_the_panel(qtbot: QtBot, live: Live) -> None:
    panel = shown(qtbot, AlertsPanel(live.context), 900, 300)
    new_alert(qtbot, panel, "10000000")
    qtbot.waitUntil(lambda: panel.model.rowCount() == 1)
    assert not panel.edit_action.isEnabled() and not panel.delete_action.isEnabled()
    rect = panel.table.visualRect(panel.model.index(0, 0))
    QTest.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert panel.edit_action.isEnabled() and not panel.rearm_action.isEnabled()
    QTest.keyClick(panel.table, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.dialog is not None and panel.dialog.isVisible())
    dialog = panel.dialog
    assert dialog is not None
    assert dialog.windowTitle() == "Edit price alert"
    assert (dialog.pair.currentText(), dialog.level.text()) == (PAIR, "10000000.00")
    refused(
        qtbot,
        dialog,
        "12.345",
        "BTC/USD prices have at most 2 decimals; 12.345 has more (USD per BTC).",
    )
    dialog.condition.setFocus()
    QTest.keyClick(dialog.condition, Qt.Key.Key_End)  # Crossing
    dialog.repeat.setFocus()
    QTest.keyClick(dialog.repeat, Qt.Key.Key_Down)  # Every time
    type_into(qtbot, dialog.level, "12000000.5")
    QTest.mouseClick(
        dialog.buttons.button(dialog.buttons.StandardButton.Ok), Qt.MouseButton.LeftButton
    )
    qtbot.waitUntil(lambda: not dialog.isVisible())
    qtbot.waitUntil(lambda: cells(panel)["level"] == "12,000,000.50")
    assert (cells(panel)["condition"], cells(panel)["repeat"]) == ("Crossing", "Every time")
    assert panel.model.rowCount() == 1  # changed, not added
    stored, _ = read_alerts(live.context.settings)
    assert [(a.level, a.condition) for a in stored] == [(Decimal("12000000.5"), "crossing")]

    panel.table.setFocus()
    QTest.keyClick(panel.table, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: panel.model.rowCount() == 0)
    assert live.session.price_alerts.alerts == ()
    assert read_alerts(live.context.settings) == ([], 0)


@pytest.mark.slow
def test_the_terminal_tells_a_fired_alert_and_goes_to_the_panel_with_its_key(
    qtbot: QtBot, live: Live
) -> None:
    window = MainWindow(live.context, default_panels(live.desks), "9.9.9")
    qtbot.addWidget(window)
    window.show()
    elsewhere = QWidget()
    qtbot.addWidget(elsewhere)
    elsewhere.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    QTest.keyClick(
        window,
        Qt.Key.Key_A,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    dock = window.docks["alerts"]
    qtbot.waitUntil(lambda: dock.isVisible() and not dock.visibleRegion().isEmpty())
    panel = dock.widget()
    assert isinstance(panel, AlertsPanel)
    elsewhere.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is elsewhere, timeout=2000)
    pair = live.bridge.selected_pair or PAIR
    live.bridge.price_alerts.put(  # the mid is above 1: due at the next poll
        PriceAlert(new_alert_id(), pair, PriceSource.MID, Condition.ABOVE, Decimal(1), Repeat.ONCE)
    )

    def told() -> list[TrayMessage]:
        return [m for m in window.notifier.shown_tray if m.kind == EventKind.PRICE_ALERT]

    qtbot.waitUntil(lambda: bool(told()), timeout=WAIT_MS)
    message = told()[0]
    assert message.title == "Price alert"
    assert message.message.startswith(f"Price alert: {pair} mid is at or above 1")
    # in the window as well: the log line at warning level (and a notice, as every warning)
    assert any(
        line.endswith(message.message) and level == "warning"
        for line, level in zip(window.log_panel.lines, window.log_panel.levels, strict=True)
    )
    window.close()
