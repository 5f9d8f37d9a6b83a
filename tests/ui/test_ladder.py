"""The depth ladder against the live sandbox: the touch centred on open, after a pair change
and a resize, kept in view on its held price rows after an update, Space recentring after the
trader scrolled away, size bars beside the digits inside their rows, cumulative sizes as
running sums. Driven with real key events. (Clicks on a moving ladder: test_ladder_click.py;
own orders, sizes and colours: test_ladder_own.py.)"""

from __future__ import annotations

from decimal import Decimal

import pytest
from PySide6.QtCore import QPoint, QPointF, QRect, Qt
from PySide6.QtGui import QEnterEvent, QFontMetrics
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QDockWidget, QLabel, QMainWindow
from pytestqt.qtbot import QtBot

from app.ui.models.depth_model import ASK, BID, DepthRole
from app.ui.panels.base import PanelContext
from app.ui.panels.depth import DepthPanel
from app.ui.panels.ladder_painter import BAR_INSET, bar_rect, bar_space
from app.ui.widgets.cell_painter import text_margin
from tests.helpers.live import Live, OfflineContext
from tests.helpers.order_books import ladder_book

#: Size of the ladder in the tests: far fewer rows than the sandbox's 2 x 25 levels.
WIDTH, HEIGHT = 420, 300


def open_ladder(qtbot: QtBot, live: Live, pair: str = "BTC/USD") -> DepthPanel:
    live.bridge.select_pair(pair)
    panel = DepthPanel(live.context)
    qtbot.addWidget(panel)
    panel.resize(WIDTH, HEIGHT)
    panel.show()
    qtbot.waitExposed(panel)
    wait_for_book(qtbot, panel, pair)
    return panel


def wait_for_book(qtbot: QtBot, panel: DepthPanel, pair: str) -> None:
    qtbot.waitUntil(
        lambda: (
            panel.model.pair == pair and panel.model.ask_count > 0 and panel.model.bid_count > 0
        ),
        timeout=10_000,
    )


def next_book(qtbot: QtBot, live: Live) -> None:
    """One more poll of the order book delivered to the panels."""
    with qtbot.waitSignal(live.bridge.orderBook.qt_signal, timeout=10_000):
        pass


def following(panel: DepthPanel) -> bool:
    """Whether the ladder follows the touch (a call: mypy would narrow the property)."""
    return panel.following


def hovered(panel: DepthPanel) -> bool:
    """Whether the ladder holds still for the pointer (a call: mypy would narrow a property)."""
    return panel.view.hovered


def touch_rows(panel: DepthPanel) -> tuple[int, int]:
    ask, bid = panel.model.best_ask_row, panel.model.best_bid_row
    assert ask is not None and bid is not None
    return ask, bid


def touch_rects(panel: DepthPanel) -> tuple[QRect, QRect]:
    """The best ask's and the best bid's rows on screen (viewport coordinates)."""
    model, view = panel.model, panel.view
    ask, bid = touch_rows(panel)
    return view.visualRect(model.index(ask, 0)), view.visualRect(model.index(bid, 0))


def assert_touch_shown(panel: DepthPanel) -> None:
    """Best ask and best bid on rows inside the viewport."""
    viewport = panel.view.viewport().rect()
    best_ask, best_bid = touch_rects(panel)
    assert viewport.contains(best_ask) and viewport.contains(best_bid), (viewport, best_ask)
    ask, bid = touch_rows(panel)
    assert panel.model.row(ask).side == ASK and panel.model.row(bid).side == BID


def assert_touch_centred(panel: DepthPanel) -> None:
    """Best ask and best bid inside the viewport, meeting in its middle (within one row)."""
    assert_touch_shown(panel)
    viewport = panel.view.viewport().rect()
    _, best_bid = touch_rects(panel)
    middle = viewport.height() // 2
    assert abs(best_bid.top() - middle) <= best_bid.height(), (best_bid.top(), middle)


def prices(panel: DepthPanel) -> list[Decimal]:
    return [row.price for row in panel.model.rows]


def assert_held_or_recentred(panel: DepthPanel, before: list[Decimal]) -> None:
    """After an update with the pointer away: every price still on its row with the touch in
    view, or (the touch left the view) rows from the new book with the touch centred."""
    if prices(panel) == before:
        assert_touch_shown(panel)
    else:
        book = panel.model.book
        assert book is not None
        assert prices(panel) == sorted({p for p, _ in book.asks + book.bids}, reverse=True)
        assert_touch_centred(panel)


def test_touch_is_centred_on_open_after_an_update_and_after_a_pair_change(
    qtbot: QtBot, live: Live
) -> None:
    panel = open_ladder(qtbot, live)
    rows_shown = panel.view.viewport().height() // panel.view.rowHeight(0)
    assert panel.model.rowCount() > rows_shown  # the ladder scrolls: centring is needed
    assert_touch_centred(panel)
    before = prices(panel)
    next_book(qtbot, live)
    assert_held_or_recentred(panel, before)

    live.bridge.select_pair("ETH/USD")
    wait_for_book(qtbot, panel, "ETH/USD")
    assert_touch_centred(panel)
    before = prices(panel)
    next_book(qtbot, live)
    assert_held_or_recentred(panel, before)

    # Resized (e.g. the dock is dragged taller): still in the middle.
    panel.resize(WIDTH, HEIGHT + 120)
    qtbot.waitUntil(lambda: panel.view.viewport().height() > HEIGHT - 40)
    assert_touch_centred(panel)


# -- driven through the bridge's order book topic ------------------------------------------------


@pytest.fixture
def offline(offline_context: OfflineContext) -> PanelContext:
    return offline_context("BTC/USD")


def touch_in_middle_third(panel: DepthPanel) -> bool:
    """Best ask and best bid shown, meeting in the middle third of the viewport."""
    viewport = panel.view.viewport().rect()
    best_ask, best_bid = touch_rects(panel)
    third = viewport.height() // 3
    return (
        viewport.contains(best_ask)
        and viewport.contains(best_bid)
        and third <= best_bid.top() <= viewport.height() - third
    )


def docked_ladder(qtbot: QtBot, context: PanelContext) -> tuple[QMainWindow, DepthPanel]:
    """A ladder in a dock beside a central widget, as in the main window (not shown yet)."""
    window = QMainWindow()
    qtbot.addWidget(window)
    window.setCentralWidget(QLabel("chart"))
    dock = QDockWidget("Depth", window)
    panel = DepthPanel(context)
    dock.setWidget(panel)
    window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
    window.resize(700, 260)
    return window, panel


def test_a_docked_ladder_is_centred_once_the_layout_settles(
    qtbot: QtBot, offline: PanelContext
) -> None:
    """A first book, then the window (and its dock) resized; and a book that arrives while
    hidden, then shown with a size change pending: the touch ends in the middle."""
    window, panel = docked_ladder(qtbot, offline)
    window.show()
    qtbot.waitExposed(window)
    offline.bridge.orderBook.emit(ladder_book(30, 30))
    qtbot.waitUntil(lambda: touch_in_middle_third(panel))
    height = panel.view.viewport().height()
    window.resize(700, 820)
    qtbot.waitUntil(lambda: panel.view.viewport().height() > height + 300)
    qtbot.waitUntil(lambda: touch_in_middle_third(panel))
    assert_touch_centred(panel)

    window.hide()
    offline.bridge.orderBook.emit(ladder_book(30, 30, mid=1500))
    window.resize(700, 300)
    window.show()
    qtbot.waitExposed(window)
    qtbot.waitUntil(lambda: panel.view.viewport().height() < height + 60)
    qtbot.waitUntil(lambda: touch_in_middle_third(panel))
    assert_touch_centred(panel)


def test_with_the_pointer_away_a_touch_that_drifts_to_the_edge_is_recentred(
    qtbot: QtBot, offline: PanelContext
) -> None:
    """The market runs up the held rows one row per book: with the pointer away the ladder
    never leaves the touch on its top rows (a ladder of bids with one ask on top); it takes
    new rows with the touch in the middle."""
    window, panel = docked_ladder(qtbot, offline)
    window.show()
    qtbot.waitExposed(window)
    offline.bridge.orderBook.emit(ladder_book(30, 30))
    qtbot.waitUntil(lambda: touch_in_middle_third(panel))
    rows_shown = panel.view.viewport().height() // panel.view.rowHeight(0)
    first = prices(panel)
    for mid in range(1001, 1001 + rows_shown):
        offline.bridge.orderBook.emit(ladder_book(30, 30, mid=mid))
        assert touch_in_middle_third(panel), mid
    assert prices(panel) != first  # new rows were taken on the way


def test_a_ladder_that_appears_under_a_still_pointer_follows_until_the_pointer_moves(
    qtbot: QtBot, offline: PanelContext
) -> None:
    """The window opens where the pointer rests (Qt sends Enter, no move): the ladder keeps
    the touch in the middle as the market runs. Once the pointer moves over it, it holds its
    rows."""
    window, panel = docked_ladder(qtbot, offline)
    window.show()
    qtbot.waitExposed(window)
    offline.bridge.orderBook.emit(ladder_book(30, 30))
    qtbot.waitUntil(lambda: touch_in_middle_third(panel))
    view = panel.view
    at = QPointF(view.rect().center())
    QApplication.sendEvent(view, QEnterEvent(at, at, QPointF(view.mapToGlobal(at))))
    assert not hovered(panel)
    rows_shown = view.viewport().height() // view.rowHeight(0)
    for mid in range(1001, 1001 + rows_shown):
        offline.bridge.orderBook.emit(ladder_book(30, 30, mid=mid))
        assert touch_in_middle_third(panel), mid

    QTest.mouseMove(window, view.viewport().mapTo(window, QPoint(10, 10)))
    assert hovered(panel)
    held = prices(panel)
    for mid in range(1001 + rows_shown, 1001 + 2 * rows_shown):
        offline.bridge.orderBook.emit(ladder_book(30, 30, mid=mid))
        assert prices(panel) == held, mid


@pytest.mark.slow
def test_space_recentres_after_the_trader_scrolled_away(qtbot: QtBot, live: Live) -> None:
    panel = open_ladder(qtbot, live)
    view = panel.view
    view.setFocus()
    QTest.keyClick(view, Qt.Key.Key_End)  # to the deepest bid
    viewport = view.viewport().rect()
    assert not following(panel)
    assert not viewport.intersects(touch_rects(panel)[0])  # the touch is off screen
    next_book(qtbot, live)
    next_book(qtbot, live)
    assert not viewport.intersects(touch_rects(panel)[0])  # updates leave it where it was put

    QTest.keyClick(view, Qt.Key.Key_Space)
    assert following(panel)
    assert_touch_centred(panel)
    before = prices(panel)
    next_book(qtbot, live)
    assert_held_or_recentred(panel, before)  # and keeps the touch in view again

    QTest.keyClick(view, Qt.Key.Key_Home)  # away to the deepest ask, then another pair
    assert not following(panel)
    live.bridge.select_pair("ETH/BTC")
    wait_for_book(qtbot, panel, "ETH/BTC")
    assert_touch_centred(panel)  # a pair change recentres


def test_size_bars_stand_beside_the_digits_inside_their_own_rows(qtbot: QtBot, live: Live) -> None:
    """Each bar is painted exactly where ``bar_rect`` puts it: left of the room its column's
    longest text takes, inset from its row's top and bottom (apart from its neighbours'), one
    solid colour; no pixel of that colour in the digits' room."""
    panel = open_ladder(qtbot, live)
    view, model = panel.view, panel.model
    image = view.viewport().grab().toImage()
    metrics = QFontMetrics(view.font())
    margin = text_margin(view)
    checked = 0
    for key in ("size", "cumulative"):
        column = model.column(key)
        room = panel.painter.room(column, view.font())
        for row in range(model.rowCount()):
            rect = view.visualRect(model.index(row, column))
            fraction = model.bar_fraction_at(row, column)
            if not view.viewport().rect().contains(rect) or fraction <= 0:
                continue
            text = model.index(row, column).data()
            assert metrics.horizontalAdvance(text) + 2 * margin <= room  # the digits fit
            space = bar_space(rect, room)
            assert space is not None  # 420 px wide: room for bars beside the digits
            bar = bar_rect(rect, room, fraction)
            assert bar.right() < rect.right() - room  # never reaches the digits' room
            assert (bar.top(), bar.bottom()) == (rect.top() + BAR_INSET, rect.bottom() - BAR_INSET)
            y = bar.center().y()
            colour = image.pixelColor(bar.left(), y)
            line = [image.pixelColor(x, y) for x in range(rect.left(), rect.right() + 1)]
            painted = [rect.left() + n for n, pixel in enumerate(line) if pixel == colour]
            assert painted == list(range(bar.left(), bar.right() + 1)), (key, row)
            x = bar.left()
            assert image.pixelColor(x, bar.top() - 1) != colour
            assert image.pixelColor(x, bar.top()) == colour
            assert image.pixelColor(x, bar.bottom()) == colour
            assert image.pixelColor(x, bar.bottom() + 1) != colour
            checked += 1
    assert checked >= 8


def test_cumulative_sizes_are_running_sums_from_the_touch(qtbot: QtBot, live: Live) -> None:
    panel = open_ladder(qtbot, live)
    panel.recentre()  # rows from the current book (held rows may show a later one)
    model = panel.model
    book = model.book
    assert book is not None
    size, cumulative = model.column("size"), model.column("cumulative")
    asks = [model.row(r) for r in reversed(range(model.ask_count))]  # best ask first
    bids = [model.row(r) for r in range(model.ask_count, model.rowCount())]  # best bid first
    for side in (asks, bids):
        total = Decimal(0)
        for level in side:
            total += level.size
            row = model.rows.index(level)
            assert model.index(row, cumulative).data(DepthRole.VALUE) == total
            assert model.index(row, size).data(DepthRole.VALUE) == level.size
    assert sum(size for _, size in book.asks) == asks[-1].cumulative
    assert sum(size for _, size in book.bids) == bids[-1].cumulative
    assert model.headerData(cumulative, Qt.Orientation.Horizontal) == "Cumulative\n(BTC)"
