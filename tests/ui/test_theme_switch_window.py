"""A theme switch on the real main window (every panel, a live sandbox session) changes the
look and nothing else: the connection's health and its reason, the notices, the panels'
freshness ("stale since" marks) and every dock's place stay as they were, both ways; the
window's parts wear the new theme (and a dialog opened afterwards too), restyled part by part
over the event loop's turns, never in one long turn (``app.ui.theme``). And a stale watchlist
row is grey when selected too."""

from __future__ import annotations

import time
from collections.abc import Iterator
from decimal import Decimal

import pytest
from PySide6.QtCore import QRect, Qt, QTimer
from PySide6.QtGui import QAction, QColor, QImage, QPalette
from PySide6.QtWidgets import QApplication, QLabel, QMessageBox, QTableView
from pytestqt.qtbot import QtBot

from app.domain.display import Precision
from app.domain.money import AssetPair
from app.domain.records import TopOfBook
from app.services.health import Health, HealthState
from app.services.session import FeedIntervals
from app.ui.freshness import FeedFreshness
from app.ui.launch import default_panels
from app.ui.main_window import MainWindow
from app.ui.models import top_of_book_model
from app.ui.models.columns import column_numbers
from app.ui.models.top_of_book_model import TopOfBookModel
from app.ui.palette import current_palette
from app.ui.panels.watchlist_table import WatchlistTable
from app.ui.theme import COLOURS, apply_theme, restyling, sheet_theme, theme_restyled, trade_palette
from tests.helpers.live import Live

WAIT_MS = 15_000
TOP_COL = column_numbers(top_of_book_model.COLUMNS)


class Stalls:
    """A 1 ms timer's longest gap: the longest the event loop went without a turn."""

    def __init__(self) -> None:
        self.longest = 0.0
        self._last = time.perf_counter()
        self._timer = QTimer()
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(1)
        self._timer.timeout.connect(self._shot)
        self._timer.start()

    def _shot(self) -> None:
        now = time.perf_counter()
        self.longest = max(self.longest, now - self._last)
        self._last = now

    def stop(self) -> None:
        self._timer.stop()


@pytest.fixture
def window(qtbot: QtBot, live: Live, app: QApplication) -> Iterator[MainWindow]:
    """The terminal's main window with every panel, shown at 1366×768 on a live session, in
    the dark theme, the connection live."""
    shown = MainWindow(live.context, default_panels(live.desks), "9.9.9")
    qtbot.addWidget(shown)
    shown.resize(1366, 768)
    shown.show()
    qtbot.waitExposed(shown)
    qtbot.waitUntil(lambda: live.bridge.health_now.health == Health.LIVE, timeout=WAIT_MS)
    yield shown
    qtbot.waitUntil(lambda: not restyling(), timeout=WAIT_MS)


def switch(qtbot: QtBot, window: MainWindow, name: str) -> float:
    """Pick ``name`` in View > Theme and wait until every part wears it; the event loop's
    longest stall meanwhile (s)."""
    stalls = Stalls()
    action = window.findChild(QAction, f"theme_{name}")
    assert isinstance(action, QAction)
    with qtbot.waitSignal(theme_restyled, timeout=WAIT_MS):
        action.trigger()
    stalls.stop()
    assert not restyling()
    return stalls.longest


def freshness_of(window: MainWindow) -> dict[str, bool]:
    """Every panel's feed freshness: stale or not, by panel."""
    found: dict[str, bool] = {}
    for name, dock in window.docks.items():
        for number, watch in enumerate(dock.widget().findChildren(FeedFreshness)):
            found[f"{name}/{number}"] = watch.stale
    return found


def stale_marks(window: MainWindow) -> list[str]:
    """Texts of the labels that say their data is stale."""
    return [
        label.text()
        for label in window.findChildren(QLabel)
        if "stale since" in label.text() or "no data from the service" in label.text()
    ]


def dock_places(window: MainWindow) -> dict[str, tuple[QRect, bool, object]]:
    return {
        name: (dock.geometry(), dock.isVisible(), window.dockWidgetArea(dock))
        for name, dock in window.docks.items()
    }


def table_base(window: MainWindow, dock: str) -> QColor:
    table = window.docks[dock].widget().findChild(QTableView)
    assert isinstance(table, QTableView)
    table.ensurePolished()
    return table.palette().color(QPalette.ColorRole.Base)


@pytest.mark.slow
def test_a_switch_leaves_health_notices_and_freshness_alone_both_ways(
    qtbot: QtBot, live: Live, window: MainWindow
) -> None:
    # Polls a second apart (stale after three): a loaded machine's own pauses cannot make a feed
    # late, so a health change could only come from the switch; the stall itself is bounded
    # below (the old one-go restyle took 1.7–2.7 s).
    live.session.set_intervals(FeedIntervals(top_of_book=1.0, balances=2.0, order_book=1.0))
    changes: list[HealthState] = []
    unsubscribe = live.session.health.changes.subscribe(changes.append)
    before = live.bridge.health_now
    notices = window.notices.visible_messages()
    logged = len(window.log_panel.lines)
    fresh = freshness_of(window)
    assert fresh and not any(fresh.values())
    try:
        for name in ("light", "dark"):
            assert switch(qtbot, window, name) < 1.0
            # a poll or two after the switch: a late feed would show by now
            polled = live.session.top_of_book.snapshot().last_ok

            def polled_again(since: float | None = polled) -> bool:
                return live.session.top_of_book.snapshot().last_ok != since

            qtbot.waitUntil(polled_again, timeout=WAIT_MS)
            live.session.health.evaluate()
            assert changes == []
            now = live.bridge.health_now
            assert (now.health, now.reason) == (before.health, before.reason)
            assert window.notices.visible_messages() == notices
            assert len(window.log_panel.lines) == logged + 0
            assert freshness_of(window) == fresh
            assert stale_marks(window) == []
    finally:
        unsubscribe()


@pytest.mark.slow
def test_every_dock_keeps_its_place_and_the_parts_wear_the_theme(
    qtbot: QtBot, live: Live, window: MainWindow, app: QApplication
) -> None:
    places = dock_places(window)
    assert sheet_theme(app) == "dark"
    switch(qtbot, window, "light")
    assert dock_places(window) == places
    assert current_palette() == trade_palette("light")
    assert app.palette().color(QPalette.ColorRole.Window) == QColor(COLOURS["light"].window)
    for dock in ("topOfBook", "orders"):
        assert table_base(window, dock) == QColor(COLOURS["light"].base)
    # a dialog the window opens after the switch wears the theme from its first paint
    box = QMessageBox(window)
    box.setText("after the switch")
    box.open()
    qtbot.waitExposed(box)
    assert box.palette().color(QPalette.ColorRole.Window) == QColor(COLOURS["light"].window)
    box.close()
    switch(qtbot, window, "dark")
    assert dock_places(window) == places
    for dock in ("topOfBook", "orders"):
        assert table_base(window, dock) == QColor(COLOURS["dark"].base)
    for part in window.docks.values():
        assert part.styleSheet() == ""  # back on the application's own sheet
    assert sheet_theme(app) == "dark"


@pytest.mark.slow
def test_the_switch_call_itself_is_short(qtbot: QtBot, window: MainWindow) -> None:
    """What the menu's click runs (the palette, the trading colours' first followers): the
    parts come after, a turn at a time. It took 0.5–2.5 s when it restyled every widget."""
    action = window.findChild(QAction, "theme_light")
    assert isinstance(action, QAction)
    started = time.perf_counter()
    action.trigger()
    took = time.perf_counter() - started
    assert restyling()  # the parts are still to come
    qtbot.waitUntil(lambda: not restyling(), timeout=WAIT_MS)
    assert took < 0.5  # a bound for a loaded 2-core machine: typically 5–25 ms (was 1.7 s)


# -- the watchlist: a selected stale row greys out too ---------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def book(pair: str, bid: str, ask: str) -> TopOfBook:
    b, a = Decimal(bid), Decimal(ask)
    return TopOfBook(AssetPair.parse(pair), b, Decimal(1), a, Decimal(1), a - b)


def ink(image: QImage, rect: QRect, ground: QColor) -> QColor:
    """The pixel in ``rect`` farthest from ``ground``: the text's own colour (its strokes'
    middle), whatever the font."""

    def distance(colour: QColor) -> int:
        return (
            abs(colour.red() - ground.red())
            + abs(colour.green() - ground.green())
            + abs(colour.blue() - ground.blue())
        )

    best = ground
    for x in range(rect.left(), rect.right() + 1):
        for y in range(rect.top(), rect.bottom() + 1):
            colour = image.pixelColor(x, y)
            if distance(colour) > distance(best):
                best = colour
    return best


def nearer(colour: QColor, one: QColor, other: QColor) -> bool:
    def gap(a: QColor, b: QColor) -> int:
        return abs(a.red() - b.red()) + abs(a.green() - b.green()) + abs(a.blue() - b.blue())

    return gap(colour, one) < gap(colour, other)


@pytest.mark.parametrize("theme_name", ["dark", "light"])
def test_a_selected_stale_row_is_grey_like_the_others(
    qtbot: QtBot, app: QApplication, theme_name: str
) -> None:
    apply_theme(app, theme_name)
    clock = FakeClock()
    model = TopOfBookModel(Precision(), clock=clock, stale_after=0.75)
    model.set_pairs(["BTC/USD", "ETH/USD"])
    model.update(
        {
            "BTC/USD": book("BTC/USD", "91234.50", "91235.00"),
            "ETH/USD": book("ETH/USD", "3100", "3101"),
        }
    )
    table = WatchlistTable()
    qtbot.addWidget(table)
    table.setModel(model)
    table.resize(700, 200)
    table.show()
    qtbot.waitExposed(table)
    table.selectRow(0)
    clock.now += 5.0  # stale, every row
    model.refresh_ages()
    assert model.is_stale(0) and model.is_stale(1)
    table.viewport().repaint()
    image = table.viewport().grab().toImage()
    palette = table.palette()
    group = QPalette.ColorGroup.Active if table.isActiveWindow() else QPalette.ColorGroup.Inactive
    highlight = palette.color(group, QPalette.ColorRole.Highlight)
    highlighted_text = palette.color(group, QPalette.ColorRole.HighlightedText)
    stale = trade_palette(theme_name).stale
    column = TOP_COL["bid"]
    cell = QRect(
        table.columnViewportPosition(column),
        table.rowViewportPosition(0),
        table.columnWidth(column),
        table.rowHeight(0),
    )
    fill = image.pixelColor(cell.left() + 1, cell.top() + 1)
    assert fill == highlight  # still shown as selected
    text = ink(image, cell.adjusted(1, 1, -1, -1), highlight)
    assert nearer(text, stale, highlighted_text), (text.name(), stale.name())
    # the row beside it, not selected: the same grey
    other = cell.translated(0, table.rowHeight(0))
    plain = ink(
        image, other.adjusted(1, 1, -1, -1), image.pixelColor(other.left() + 1, other.top() + 1)
    )
    assert nearer(plain, stale, palette.color(group, QPalette.ColorRole.Text))
    model.deleteLater()
