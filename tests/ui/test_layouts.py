"""Layouts that fit: the whole terminal, real panels on the live sandbox, at
1280×720, 1366×768 and 1920×1080. Every dock lies inside the window and every widget inside
its dock, no panel is squeezed below its minimum, the watchlist and balances need no
horizontal scrollbar, the chart and the blotter are tall enough on a large screen, and the
window keeps its size when ticket warnings appear or the connection drops."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QCoreApplication, QPoint, QRect, QSize, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QApplication,
    QDockWidget,
    QScrollArea,
    QTableView,
    QWidget,
)
from pytestqt.qtbot import QtBot

from app.ui.launch import default_panels
from app.ui.main_window import MIN_SIZE, MainWindow
from app.ui.panels.balances import BalancesPanel
from app.ui.panels.instructions import InstructionsPanel
from app.ui.panels.order_ticket import OrderTicketPanel
from app.ui.panels.rfq_ticket import RfqTicketPanel
from app.ui.panels.top_of_book import DEFAULT_HIDDEN as WATCH_HIDDEN
from app.ui.panels.top_of_book import TopOfBookPanel
from app.ui.workspaces import COMPACT, WIDE, Plan, needed_width, plan_for, split_width
from tests.harness import Faults
from tests.helpers.live import Live
from tests.helpers.qt import right_click

SIZES = [(QSize(1280, 720), COMPACT), (QSize(1366, 768), COMPACT), (QSize(1920, 1080), WIDE)]
WAIT_MS = 10_000
TICKETS = ("orderTicket", "rfqTicket", "algoTicket")
#: A dock's width may differ from the width asked for by a separator's few pixels.
SPLITTER_SLACK = 8


@pytest.fixture
def terminal(qtbot: QtBot, live: Live, app: QApplication) -> Iterator[MainWindow]:
    """The terminal's window with every panel, on the live sandbox, as a trader gets it: the
    dark theme with the shipped fonts."""
    window = MainWindow(live.context, default_panels(live.desks), "9.9.9")
    qtbot.addWidget(window)
    window.show()
    yield window
    window.close()


def settle() -> None:
    for _ in range(3):
        QCoreApplication.processEvents()


def at_size(qtbot: QtBot, window: MainWindow, size: QSize, plan: Plan) -> None:
    window.resize(size)
    qtbot.waitUntil(lambda: window.size() == size)
    window.apply_plan(plan)
    settle()


def scrolled(widget: QWidget, panel: QWidget) -> bool:
    """Inside a scroll area's viewport: placed by scrolling, not by the dock's layout."""
    parent = widget.parentWidget()
    while parent is not None and parent is not panel:
        area = parent.parentWidget()
        if isinstance(area, QAbstractScrollArea) and area.viewport() is parent:
            return True
        parent = area
    return False


def rect_in(widget: QWidget, ancestor: QWidget) -> QRect:
    return QRect(widget.mapTo(ancestor, QPoint(0, 0)), widget.size())


def misfits(window: MainWindow, name: str, dock: QDockWidget) -> list[str]:
    """What does not fit in the shown ``dock``: the dock outside the window or over another
    shown dock, its panel squeezed below its minimum size, a widget outside the dock."""
    found = []
    place = rect_in(dock, window)
    if not window.rect().contains(place):
        found.append(f"{name}: dock {place} outside {window.rect()}")
    for other_name, other in window.docks.items():
        other_place = rect_in(other, window)
        shown = other.isVisible() and window.rect().intersects(other_place)
        if other is not dock and shown and place.intersects(other_place):
            found.append(f"{name}: dock {place} over {other_name} at {other_place}")
    panel = dock.widget()
    least = panel.minimumSizeHint()
    if panel.width() < least.width() or panel.height() < least.height():
        found.append(f"{name}: panel {panel.size()} below its minimum {least}")
    for area in panel.findChildren(QScrollArea):
        content, off = area.widget(), Qt.ScrollBarPolicy.ScrollBarAlwaysOff
        if area.isVisible() and content and area.horizontalScrollBarPolicy() == off:
            least_width = content.minimumSizeHint().width()
            if area.viewport().width() < least_width:  # no scrollbar: cut off at the right
                found.append(f"{name}: {area.viewport().width()} px for {least_width} px")
    for child in panel.findChildren(QWidget):
        if child.isVisible() and not scrolled(child, panel):
            where = rect_in(child, dock)
            if not dock.rect().contains(where):
                found.append(f"{name}: {child.objectName() or type(child).__name__} at {where}")
    return found


def every_dock_misfits(window: MainWindow) -> list[str]:
    """Each dock brought to the front of its tab group in turn, then checked."""
    found = []
    for name, dock in window.docks.items():
        dock.raise_()
        settle()
        assert dock.isVisible(), name
        found += misfits(window, name, dock)
    return found


def test_the_screen_chooses_the_layout() -> None:
    assert plan_for(QSize(1366, 728)) is COMPACT  # 1366×768 less a panel
    assert plan_for(QSize(1280, 680)) is COMPACT
    assert plan_for(QSize(1920, 1040)) is WIDE
    assert plan_for(QSize(2560, 1400)) is WIDE


def test_the_minimum_size_fits_1280_by_720(terminal: MainWindow) -> None:
    least = terminal.minimumSize()
    assert least.width() <= 1280 and least.height() <= 720 - 40  # room for a title bar
    assert least == MIN_SIZE


@pytest.mark.slow
@pytest.mark.parametrize(("size", "plan"), SIZES, ids=["1280x720", "1366x768", "1920x1080"])
def test_every_dock_and_widget_fits_and_no_horizontal_scrollbar(
    qtbot: QtBot, terminal: MainWindow, size: QSize, plan: Plan
) -> None:
    at_size(qtbot, terminal, size, plan)
    assert every_dock_misfits(terminal) == []
    assert terminal.size() == size
    watchlist = terminal.docks["topOfBook"].widget()
    balances = terminal.docks["balances"].widget()
    assert isinstance(watchlist, TopOfBookPanel) and isinstance(balances, BalancesPanel)
    qtbot.waitUntil(lambda: watchlist._sized, timeout=WAIT_MS)  # columns fitted to data
    qtbot.waitUntil(lambda: len(balances.model.assets()) >= 3, timeout=WAIT_MS)
    settle()
    for table in (watchlist.table, balances.table):
        assert table.horizontalHeader().length() <= table.viewport().width(), table.objectName()
        assert not table.horizontalScrollBar().isVisible(), table.objectName()


@pytest.mark.slow
@pytest.mark.parametrize(("size", "plan"), SIZES, ids=["1280x720", "1366x768", "1920x1080"])
def test_send_stays_in_view_with_a_limit_typed_and_the_what_if_shown(
    qtbot: QtBot, terminal: MainWindow, size: QSize, plan: Plan
) -> None:
    """Send and the outcome line are anchored under the ticket's scrolling part: whatever the
    ticket shows (a limit, its warnings, the what-if), they are inside the ticket's dock."""
    at_size(qtbot, terminal, size, plan)
    dock = terminal.docks["orderTicket"]
    dock.raise_()
    ticket = dock.widget()
    assert isinstance(ticket, OrderTicketPanel)
    qtbot.waitUntil(lambda: ticket.pair_box.currentText() != "", timeout=WAIT_MS)
    ticket.type_box.setCurrentIndex(ticket.type_box.findData("limit"))
    ticket.size_edit.setFocus()
    QTest.keyClicks(ticket.size_edit, "100")
    ticket.limit_edit.setFocus()
    QTest.keyClicks(ticket.limit_edit, "1")  # far from the book: a warning line too
    qtbot.waitUntil(lambda: ticket.what_if_cells[0][0].text() != "", timeout=WAIT_MS)
    assert ticket.what_if_toggle.isChecked() and ticket.what_if_box.isVisible()
    settle()
    send = ticket.send_button
    assert send.isVisible() and not scrolled(send, ticket)
    assert dock.rect().contains(rect_in(send, dock)), (rect_in(send, dock), dock.rect())
    assert send.visibleRegion().boundingRect() == send.rect()  # nothing covers it
    assert dock.rect().contains(rect_in(ticket.outcome_label, dock))
    QTest.mouseClick(ticket.what_if_toggle, Qt.MouseButton.LeftButton)  # the what-if folds
    assert not ticket.what_if_box.isVisible()


def rows_shown(table: QTableView) -> int:
    return table.viewport().height() // table.verticalHeader().defaultSectionSize()


def test_chart_blotter_and_depth_are_tall_enough_at_1920(
    qtbot: QtBot, terminal: MainWindow
) -> None:
    at_size(qtbot, terminal, QSize(1920, 1080), WIDE)
    assert terminal.docks["chart"].height() >= 220
    orders = terminal.docks["orders"].widget().findChild(QTableView)
    assert orders is not None and rows_shown(orders) >= 15
    depth = terminal.docks["depth"].widget().findChild(QTableView)
    assert depth is not None and rows_shown(depth) >= 2 * 10 + 1  # 10 levels each side
    for name in ("chart", "depth", "orders", "orderTicket", "topOfBook", "balances"):
        assert terminal.docks[name].isVisible(), name  # none tabbed away at 1920


@pytest.mark.slow
def test_the_window_keeps_its_size_as_warnings_appear_and_the_connection_drops(
    qtbot: QtBot, terminal: MainWindow, faults: Faults
) -> None:
    at_size(qtbot, terminal, QSize(1366, 768), COMPACT)
    ticket = terminal.docks["orderTicket"].widget()
    assert isinstance(ticket, OrderTicketPanel)
    qtbot.waitUntil(lambda: ticket.pair_box.currentText() != "", timeout=WAIT_MS)
    ticket.size_edit.clear()
    QTest.keyClicks(ticket.size_edit, "90000000")  # far above funds and credit: warnings
    qtbot.waitUntil(lambda: ticket.checks_label.text() != "", timeout=WAIT_MS)
    settle()
    assert terminal.size() == QSize(1366, 768)
    assert every_dock_misfits(terminal) == []
    faults({"kind": "drop", "path": ".*", "method": "*", "rate": 1, "count": 100_000})
    qtbot.waitUntil(lambda: "OFFLINE" in terminal.status.state.text(), timeout=30_000)
    settle()
    assert terminal.size() == QSize(1366, 768)
    assert terminal.minimumSize() == MIN_SIZE


@pytest.mark.qt_log_ignore(
    "^This plugin does not support raise\\(\\)$",  # the offscreen platform, for the popup menu
    "^This plugin does not support grabbing the keyboard$",
)
def test_watchlist_columns_are_chosen_from_the_header_menu_and_remembered(
    qtbot: QtBot, live: Live
) -> None:
    panel = TopOfBookPanel(live.context)
    qtbot.addWidget(panel)
    panel.resize(480, 300)
    panel.show()
    table, keys = panel.table, [spec.key for spec in panel.model.columns]
    assert [k for k in keys if table.isColumnHidden(keys.index(k))] == list(WATCH_HIDDEN)
    header = table.horizontalHeader()
    right_click(header.viewport(), QPoint(header.sectionViewportPosition(0) + 4, 4))
    qtbot.waitUntil(lambda: QApplication.activePopupWidget() is panel.columns.menu)
    menu, mid = panel.columns.menu, panel.columns.actions["mid"]
    QTest.mouseClick(menu, Qt.MouseButton.LeftButton, pos=menu.actionGeometry(mid).center())
    qtbot.waitUntil(lambda: not table.isColumnHidden(keys.index("mid")))
    again = TopOfBookPanel(live.context)
    qtbot.addWidget(again)
    assert not again.table.isColumnHidden(keys.index("mid"))
    assert again.table.isColumnHidden(keys.index("bid_size"))


def test_columns_share_the_width_but_each_gets_what_it_needs() -> None:
    assert split_width(1000, [50, 50], [0, 0]) == [500, 500]
    assert split_width(1000, [38, 30, 32], [0, 430, 400]) == [
        1000 - 430 - 400,
        430,
        400,
    ]  # a narrow window: the flexible column gives way
    assert split_width(1000, [1, 1], [700, 700]) == [500, 500]  # nothing to take from
    assert split_width(1000, [38, 0, 32], [0, 400, 0]) == [325, 400, 274]  # 0: just its need
    assert split_width(600, [38, 0, 32], [300, 400, 300]) == [108, 400, 91]  # even when short


@pytest.mark.parametrize(("size", "plan"), SIZES, ids=["1280", "1366", "1920"])
def test_the_tickets_take_the_width_they_need_and_the_watchlist_the_rest(
    qtbot: QtBot, terminal: MainWindow, size: QSize, plan: Plan
) -> None:
    at_size(qtbot, terminal, size, plan)
    ticket = terminal.docks["orderTicket"]
    need = max(needed_width(terminal.docks[name]) for name in TICKETS)
    assert abs(ticket.width() - need) <= SPLITTER_SLACK, (ticket.width(), need)
    watchlist = terminal.docks["topOfBook"]
    assert watchlist.width() > ticket.width()


def dock_places(window: MainWindow) -> dict[str, QRect]:
    return {name: rect_in(dock, window) for name, dock in window.docks.items() if dock.isVisible()}


@pytest.mark.slow
@pytest.mark.parametrize(("size", "plan"), SIZES[1:], ids=["1366", "1920"])
def test_no_dock_moves_as_the_rfq_ticket_fills_and_empties(
    qtbot: QtBot, terminal: MainWindow, size: QSize, plan: Plan
) -> None:
    """A quote's terms, its fill and a refusal change the ticket's texts, never the docks."""
    at_size(qtbot, terminal, size, plan)
    terminal.go_to("rfqTicket")
    settle()
    panel = terminal.docks["rfqTicket"].widget()
    assert isinstance(panel, RfqTicketPanel)
    places = dock_places(terminal)
    panel.pair_box.setEditText("BTC/USD")
    panel.size_edit.setText("0.01")
    QTest.mouseClick(panel.request_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.live_quote is not None, timeout=WAIT_MS)
    qtbot.waitUntil(panel.sides["buy"].accept.isEnabled, timeout=WAIT_MS)
    settle()
    assert dock_places(terminal) == places
    QTest.mouseClick(panel.sides["buy"].accept, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.last_result is not None, timeout=WAIT_MS)
    settle()
    assert panel.message.text().startswith("Filled: bought ")
    assert dock_places(terminal) == places
    panel.size_edit.setText("a size nobody would type, far too long to fit in any ticket")
    QTest.mouseClick(panel.request_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "The size must be a number" in panel.message.text())
    settle()
    assert dock_places(terminal) == places


@pytest.mark.slow
@pytest.mark.parametrize("asset", ["USDT", "BTC"])
def test_a_deposit_card_and_its_qr_code_are_whole_in_the_wide_layout(
    qtbot: QtBot, terminal: MainWindow, asset: str
) -> None:
    at_size(qtbot, terminal, QSize(1920, 1080), WIDE)
    terminal.go_to("instructions")
    panel = terminal.docks["instructions"].widget()
    assert isinstance(panel, InstructionsPanel)
    qtbot.waitUntil(lambda: panel.loaded, timeout=WAIT_MS)
    panel.set_asset(asset)
    settle()
    assert panel.cards
    viewport = panel.scroll_area.viewport()
    for card in panel.cards:
        qr = card.findChild(QWidget, "cardQr")
        assert qr is not None
        panel.scroll_area.ensureWidgetVisible(card, 0, 0)
        settle()
        where = rect_in(qr, viewport)
        assert viewport.rect().contains(where), f"{asset} QR at {where} in {viewport.rect()}"
