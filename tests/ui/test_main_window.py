"""The main window: title, docks and View menu, layout persistence, status bar, log and
notices, About, and errors that do not stop the app. Panels here are simple labels: the real
panels have tests of their own."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QSettings, QTimer
from PySide6.QtWidgets import QApplication, QLabel, QMainWindow, QWidget
from pytestqt.qtbot import QtBot

from app.domain import Amount
from app.services.health import Health, HealthState
from app.services.log_events import LogLevel
from app.services.poller import FeedStatus, Poller
from app.services.ticket import TicketInput
from app.ui import errors
from app.ui.launch import default_panels
from app.ui.main_window import MIN_SIZE, Area, MainWindow, PanelSpec
from app.ui.panels.base import PanelContext
from app.ui.panels.chart import ChartPanel
from app.ui.panels.deposits import DepositsPanel
from app.ui.panels.orders import OrdersPanel
from app.ui.settings import open_settings
from app.ui.status_bar import STATE_STYLE
from tests.helpers.live import Live
from tests.helpers.qt import filter_of, run


def label_panel(text: str) -> Callable[[PanelContext], QWidget]:
    def build(_: PanelContext) -> QWidget:
        return QLabel(text)

    return build


SPECS = [
    PanelSpec("alpha", "Alpha", Area.LeftDockWidgetArea, label_panel("alpha")),
    PanelSpec("beta", "Beta", Area.RightDockWidgetArea, label_panel("beta")),
    PanelSpec("gamma", "Gamma", Area.RightDockWidgetArea, label_panel("gamma"), tab_with="beta"),
]


def make_window(qtbot: QtBot, live: Live, settings: QSettings | None = None) -> MainWindow:
    context = (
        live.context
        if settings is None
        else PanelContext(live.bridge, live.context.precision, settings, live.context.notify)
    )
    window = MainWindow(context, SPECS, "9.9.9")
    qtbot.addWidget(window)
    window.show()
    return window


def test_title_names_account_and_environment(qtbot: QtBot, live: Live) -> None:
    window = make_window(qtbot, live)
    assert window.windowTitle().startswith("Tradeterm")
    assert live.account.account in window.windowTitle()
    assert "Sandbox" in window.windowTitle()


def test_view_menu_hides_and_shows_every_dock(qtbot: QtBot, live: Live) -> None:
    window = make_window(qtbot, live)
    assert set(window.docks) == {"alpha", "beta", "gamma", "log"}
    toggle = window.docks["alpha"].toggleViewAction()
    assert toggle in window._view_menu.actions()
    toggle.trigger()
    assert window.docks["alpha"].isHidden()
    toggle.trigger()
    assert not window.docks["alpha"].isHidden()
    assert window.tabifiedDockWidgets(window.docks["beta"]) == [window.docks["gamma"]]


def test_layout_survives_a_restart_and_reset_restores_default(
    qtbot: QtBot, live: Live, tmp_path: Path
) -> None:
    settings = open_settings(tmp_path / "layout")
    first = make_window(qtbot, live, settings)
    first.docks["beta"].hide()
    first.removeDockWidget(first.docks["alpha"])
    first.addDockWidget(Area.BottomDockWidgetArea, first.docks["alpha"])
    first.docks["alpha"].show()
    first.close()
    second = make_window(qtbot, live, open_settings(tmp_path / "layout"))
    assert second.docks["beta"].isHidden()
    assert second.dockWidgetArea(second.docks["alpha"]) == Area.BottomDockWidgetArea
    second.reset_layout()
    assert not second.docks["beta"].isHidden()
    assert second.dockWidgetArea(second.docks["alpha"]) == Area.LeftDockWidgetArea


def test_status_bar_shows_live_state_badge_and_ticking_ages(qtbot: QtBot, live: Live) -> None:
    window = make_window(qtbot, live)
    status = window.status
    qtbot.waitUntil(lambda: live.session.health.current.health == Health.LIVE, timeout=10000)
    qtbot.waitUntil(lambda: "LIVE" in status.state.text(), timeout=5000)
    assert status.badge.text().strip() == "SANDBOX" and not status.badge.isHidden()
    assert status.version.text() == "v9.9.9"
    qtbot.waitUntil(lambda: status.latency.text().endswith("ms"), timeout=5000)
    qtbot.waitUntil(
        lambda: status.age.text().startswith("data ") and "—" not in status.age.text(), timeout=5000
    )
    assert status.token.text().startswith("token 23:") or status.token.text().startswith(
        "token 24:"
    )
    assert status.offset.text().startswith("clock ")


def test_warnings_reach_the_log_and_a_notice(qtbot: QtBot, live: Live) -> None:
    window = make_window(qtbot, live)
    live.session.log(LogLevel.WARNING, "something the trader should see")
    qtbot.waitUntil(
        lambda: any("something the trader should see" in line for line in window.log_panel.lines),
        timeout=2000,
    )
    assert "something the trader should see" in window.notices.visible_messages()
    live.session.log(LogLevel.INFO, "routine event")
    qtbot.waitUntil(lambda: any("routine event" in line for line in window.log_panel.lines))
    assert "routine event" not in window.notices.visible_messages()


def test_notices_are_in_words_and_the_log_keeps_the_url(qtbot: QtBot, live: Live) -> None:
    """A client message names the request's URL; the notice names the service's host only and
    says no word twice; the log panel keeps the message whole."""
    window = make_window(qtbot, live)
    url = f"{live.account.base_url}/api/v1/routing/account/{live.account.account}/topofbook"
    message = f"order refused: refused: cannot reach {url}?page=2: connection refused"
    live.session.log(LogLevel.ERROR, message)
    host = live.account.base_url.split("://")[1]
    shown = f"order refused: cannot reach the service at {host}: connection refused"
    qtbot.waitUntil(lambda: shown in window.notices.visible_messages(), timeout=2000)
    assert not any("http" in text for text in window.notices.visible_messages())
    assert any(url in line for line in window.log_panel.lines)


def test_the_status_bar_groups_thousands(qtbot: QtBot, live: Live) -> None:
    window = make_window(qtbot, live)
    run(qtbot, live.session.stop())  # no poll overwrites the status fed below
    status = FeedStatus("top of book", 0.25, time.monotonic() - 1234.5, 1.2345, 0, None)
    live.bridge.feedStatus.emit(status)
    assert window.status.latency.text() == "1,234 ms"
    assert window.status.age.text().startswith("data 1,23")


def test_an_exception_in_a_slot_is_shown_and_the_app_keeps_running(
    qtbot: QtBot, live: Live
) -> None:
    window = make_window(qtbot, live)
    errors.install(window.notify)

    def broken() -> None:
        raise RuntimeError("slot went wrong")

    QTimer.singleShot(0, broken)
    qtbot.waitUntil(
        lambda: any("slot went wrong" in m for m in window.notices.visible_messages()), timeout=3000
    )
    beats: list[float] = []
    timer = QTimer(window)
    timer.timeout.connect(lambda: beats.append(time.monotonic()))
    timer.start(20)
    qtbot.waitUntil(lambda: len(beats) >= 5, timeout=2000)


def test_about_lists_the_three_sub_services(qtbot: QtBot, live: Live) -> None:
    window = make_window(qtbot, live)
    window.show_about()
    qtbot.waitUntil(lambda: "routing" in window.about_box.text(), timeout=5000)
    text = window.about_box.text()
    assert "accounting" in text and "identity" in text and "9.9.9" in text
    window.about_box.close()


@pytest.mark.slow
def test_fills_refusals_and_expiring_quotes_reach_the_desktop_when_away(
    qtbot: QtBot, live: Live
) -> None:
    window = make_window(qtbot, live)
    elsewhere = QLabel("another application's window")
    qtbot.addWidget(elsewhere)
    elsewhere.show()
    elsewhere.activateWindow()
    qtbot.waitUntil(lambda: not window.isActiveWindow())
    orders = live.desks.orders
    qtbot.waitUntil(lambda: orders.balances is not None and "BTC/USD" in orders.top_of_book)
    filled = run(qtbot, orders.submit(TicketInput("USD", "BTC", Decimal(100))))
    assert filled.status == "filled"
    refused = run(qtbot, orders.submit(TicketInput("USD", "BTC", Decimal(900_000))))
    assert refused.status == "rejected"
    qtbot.waitUntil(lambda: len(window.notifier.shown_tray) == 2)
    fill, refusal = window.notifier.shown_tray
    assert (fill.kind, refusal.kind) == ("fill", "refusal")
    assert filled.message in fill.message and refused.message in refusal.message
    # in the window too, always
    assert any(filled.message in text for text in window.notices.visible_messages())
    run(qtbot, live.desks.rfq.request("BTC/USD", Amount(Decimal("0.01"), "BTC")))
    qtbot.waitUntil(lambda: len(window.notifier.shown_tray) == 3, timeout=12_000)
    assert window.notifier.shown_tray[2].kind == "quote_expiring"
    assert "expires in" in window.notifier.shown_tray[2].message


@pytest.mark.slow
def test_every_panel_of_the_terminal_is_reachable_from_the_keyboard(
    qtbot: QtBot, live: Live
) -> None:
    window = MainWindow(live.context, default_panels(live.desks), "9.9.9")
    qtbot.addWidget(window)
    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    assert set(window.go_actions) == set(window.docks)  # every dock, the log included
    keys = {action.shortcut().toString() for action in window.go_actions.values()}
    assert len(keys) == len(window.go_actions)  # no two panels share a key
    for name, action in window.go_actions.items():
        window.docks[name].hide()
        action.trigger()
        dock = window.docks[name]
        qtbot.waitUntil(dock.isVisible)
        focused = QApplication.focusWidget()
        assert focused is not None and dock.isAncestorOf(focused), name
    # at quit the feeds panels own stop before the client closes
    orders, deposits = window.docks["orders"].widget(), window.docks["deposits"].widget()
    assert isinstance(orders, OrdersPanel) and isinstance(deposits, DepositsPanel)
    pollers: list[Poller[Any]] = [orders.feed.poller, deposits.feed.poller]
    assert all(poller.running for poller in pollers)
    waiting = window.tasks.spawn(asyncio.Event().wait(), "a task the quit must end")
    run(qtbot, window.tasks.aclose())  # the window's own tasks end first (launch does this)
    assert waiting.cancelled()
    run(qtbot, window.stop_panel_feeds())
    assert not any(poller.running for poller in pollers)
    window.close()


def test_the_status_bar_keeps_its_width_whatever_it_says(qtbot: QtBot, live: Live) -> None:
    """A longer state text used to widen the window; every label has one fixed width."""
    window = make_window(qtbot, live)
    status = window.status
    widths = [label.width() for label in (status.state, status.latency, status.age)]
    hint = status.minimumSizeHint()
    for health in STATE_STYLE:
        status.show_health(HealthState(health, "a reason", ()))
        status.latency.setText("12,345 ms")
        status.age.setText("data 9,999.9 s")
        assert [label.width() for label in (status.state, status.latency, status.age)] == widths
        assert status.minimumSizeHint() == hint
    assert window.minimumSize() == MIN_SIZE


def test_docks_are_not_animated_and_a_steady_state_is_not_restyled(
    qtbot: QtBot, live: Live
) -> None:
    """Idle CPU: animated docks ran QPropertyAnimations on every relayout, and the state's
    style sheet was set again on every poll."""
    window = make_window(qtbot, live)
    assert not window.isAnimated()
    assert not window.dockOptions() & QMainWindow.DockOption.AnimatedDocks
    status = window.status
    qtbot.waitUntil(lambda: "LIVE" in status.state.text(), timeout=10000)
    polished: list[int] = []
    status.state.installEventFilter(filter_of(polished, QEvent.Type.StyleChange))
    status.show_health(live.session.health.current)  # the same state again
    qtbot.wait(20)
    assert polished == []
    status.show_health(HealthState(Health.OFFLINE, "a reason", ()))
    qtbot.waitUntil(lambda: polished != [])


@pytest.mark.slow
def test_ticking_prices_never_relayout_the_window(qtbot: QtBot, live: Live) -> None:
    """Idle CPU: the chart title, the balances total and the status bar's ages changed their
    size hints on every tick and the whole window was laid out again each time."""
    window = MainWindow(live.context, default_panels(live.desks), "9.9.9")
    qtbot.addWidget(window)
    window.resize(1366, 768)
    window.show()
    window.docks["chart"].raise_()
    chart = window.docks["chart"].widget()
    assert isinstance(chart, ChartPanel)
    qtbot.waitUntil(lambda: "bid —" not in chart.title.text(), timeout=10000)
    qtbot.wait(1500)  # the first data fitted the columns; from here on it only ticks
    requests: list[int] = []
    window.installEventFilter(filter_of(requests, QEvent.Type.LayoutRequest))
    titles = {chart.title.text()}

    def three_titles() -> bool:
        titles.add(chart.title.text())
        return len(titles) >= 3

    qtbot.waitUntil(three_titles, timeout=10000)
    assert requests == []
