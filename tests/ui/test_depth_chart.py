"""Depth ladder and live chart: fed by the real sandbox through the bridge, and by hand where
the model or the buffer is the code under test."""

from __future__ import annotations

import time
from decimal import Decimal
from typing import Any

import numpy as np
import pytest
from PySide6.QtCore import QModelIndex, QPoint, QPointF, Qt
from PySide6.QtGui import QColor, QWheelEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLabel, QTabWidget
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from app.domain.display import Precision, format_number
from app.domain.money import format_trimmed
from app.ui import palette
from app.ui.models.columns import column_numbers
from app.ui.models.depth_model import COLUMNS, INSIDE_TIP, DepthModel, DepthRole
from app.ui.palette import DEFAULT_PALETTE, TradePalette
from app.ui.panels.base import PanelContext
from app.ui.panels.chart import ChartPanel, plot_sample
from app.ui.panels.depth import DepthPanel
from app.ui.panels.ladder_painter import bar_space
from app.ui.ring_buffer import RingBuffer
from app.ui.theme import trade_palette
from tests.helpers.live import Live, OfflineContext
from tests.helpers.order_books import book, ladder_book
from tests.helpers.top_of_book import top
from tests.ui.chart_helpers import hover

D = Decimal
#: Column numbers by key (the model's column spec list).
COL = column_numbers(COLUMNS)


@pytest.fixture
def offline(offline_context: OfflineContext) -> PanelContext:
    """A never-started session on BTC/USD: the test alone feeds the signals."""
    return offline_context("BTC/USD")


# -- depth: the model ---------------------------------------------------------------------------

BIDS = [("100.0", "1"), ("99.5", "2"), ("99.0", "3")]
ASKS = [("100.5", "5"), ("101.0", "5"), ("101.5", "5")]  # asks total 15 > bids total 6


class Recorder:
    """Every dataChanged cell (split by value vs bar-only roles) and every reset of a model."""

    def __init__(self, model: DepthModel) -> None:
        self.values: list[tuple[int, int]] = []
        self.bars: list[tuple[int, int]] = []
        self.roles: list[list[int]] = []  # every signal's roles, kept
        self.resets = 0
        model.dataChanged.connect(self._changed)
        model.modelReset.connect(self._reset)

    def _changed(self, top_left: QModelIndex, bottom_right: QModelIndex, roles: list[int]) -> None:
        self.roles.append(list(roles))
        cells = [
            (row, column)
            for row in range(top_left.row(), bottom_right.row() + 1)
            for column in range(top_left.column(), bottom_right.column() + 1)
        ]
        if list(roles) == [DepthRole.BAR_FRACTION]:
            self.bars += cells
        else:
            self.values += cells

    def _reset(self) -> None:
        self.resets += 1

    def take(self) -> tuple[set[tuple[int, int]], set[tuple[int, int]], int]:
        taken = (set(self.values), set(self.bars), self.resets)
        self.values, self.bars, self.resets = [], [], 0
        return taken


def test_model_ladder_layout_and_cumulative_sums() -> None:
    model = DepthModel(Precision())
    # The server's order is not trusted: shuffled levels come out sorted.
    model.set_book(book("BTC/USD", [BIDS[1], BIDS[0], BIDS[2]], [ASKS[2], ASKS[0], ASKS[1]]))
    prices = [model.index(r, COL["price"]).data(DepthRole.VALUE) for r in range(6)]
    sides = [model.index(r, 0).data(DepthRole.SIDE) for r in range(6)]
    cumulative = [model.index(r, COL["cumulative"]).data(DepthRole.VALUE) for r in range(6)]
    assert sides == ["ask"] * 3 + ["bid"] * 3
    # Best ask (row 2) and best bid (row 3) meet in the middle.
    assert prices == [D("101.5"), D("101.0"), D("100.5"), D("100.0"), D("99.5"), D("99.0")]
    assert cumulative == [D(15), D(10), D(5), D(1), D(3), D(6)]
    assert all(isinstance(value, Decimal) for value in prices + cumulative)
    assert model.spread() == D("0.5")
    # Display: pair precision for prices; sizes at the base asset's precision without
    # trailing zeros (whole numbers here), right-aligned.
    assert model.index(3, COL["price"]).data() == "100.00"
    assert model.index(4, COL["size"]).data() == "2"
    assert model.index(0, COL["cumulative"]).data() == "15"
    alignment = model.index(0, COL["size"]).data(Qt.ItemDataRole.TextAlignmentRole)
    assert alignment & int(Qt.AlignmentFlag.AlignRight)
    assert model.headerData(COL["price"], Qt.Orientation.Horizontal) == "Price\n(USD)"
    assert model.headerData(COL["own"], Qt.Orientation.Horizontal) == "Own\n(BTC)"
    assert model.headerData(COL["cumulative"], Qt.Orientation.Horizontal) == "Cumulative\n(BTC)"
    # Bars: share of the largest size / cumulative size in the visible book, in Decimal.
    assert model.index(5, COL["size"]).data(DepthRole.BAR_FRACTION) == D(3) / D(5)
    assert model.index(0, COL["cumulative"]).data(DepthRole.BAR_FRACTION) == D(1)
    assert model.index(3, COL["cumulative"]).data(DepthRole.BAR_FRACTION) == D(1) / D(15)
    assert model.index(0, COL["price"]).data(DepthRole.BAR_FRACTION) is None


def test_model_signals_only_changed_cells_and_resets_on_level_count() -> None:
    model = DepthModel(Precision())
    seen = Recorder(model)
    model.set_book(book("BTC/USD", BIDS, ASKS))
    assert seen.take() == (set(), set(), 1)

    # The deepest ask moves: one price cell, nothing else.
    asks = [ASKS[0], ASKS[1], ("102.0", "5")]
    model.set_book(book("BTC/USD", BIDS, asks))
    assert seen.take() == ({(0, COL["price"])}, set(), 0)
    assert model.index(0, COL["price"]).data(DepthRole.VALUE) == D("102.0")

    # The second bid's size (2 -> 4): its size cell and the running totals from it outward;
    # the largest size (5) and cumulative size (15) stay, so no bar rescale.
    bids = [BIDS[0], ("99.5", "4"), BIDS[2]]
    model.set_book(book("BTC/USD", bids, asks))
    values, bars, resets = seen.take()
    assert values == {(4, COL["size"]), (4, COL["cumulative"]), (5, COL["cumulative"])}
    assert (bars, resets) == (set(), 0)
    assert model.index(5, COL["cumulative"]).data(DepthRole.VALUE) == D(8)

    # The best bid grows to 10: a new largest size and a new largest total (17 > 15), so
    # every bar of both columns is rescaled (bar role only), plus the changed values.
    bids = [("100.0", "10"), ("99.5", "4"), BIDS[2]]
    model.set_book(book("BTC/USD", bids, asks))
    values, bars, resets = seen.take()
    assert values == {(3, COL["size"]), (3, COL["cumulative"])} | {
        (r, COL["cumulative"]) for r in (4, 5)
    }
    assert bars == {(r, c) for r in range(6) for c in (COL["size"], COL["cumulative"])}
    assert resets == 0
    assert model.index(1, COL["size"]).data(DepthRole.BAR_FRACTION) == D(5) / D(10)
    # The touch did not move: no row changed colour (nor background).
    assert all(roles != list(model.colour_roles) for roles in seen.roles)

    # The same snapshot again: silence.
    model.set_book(book("BTC/USD", bids, asks))
    assert seen.take() == (set(), set(), 0)

    # One ask level fewer: a reset, no cell signals.
    model.set_book(book("BTC/USD", bids, asks[:2]))
    assert seen.take() == (set(), set(), 1)
    assert model.rowCount() == 5
    # Same level counts but another pair: a reset too (units and precision change).
    model.set_book(book("ETH/USD", bids, asks[:2]))
    assert seen.take() == (set(), set(), 1)
    model.set_book(None)
    assert seen.take() == (set(), set(), 1)
    assert model.rowCount() == 0


def test_a_held_model_keeps_its_price_rows_and_signals_only_cells() -> None:
    """Held, a moved book is laid on the rows of the first: no reset, no price changes; an
    ask on the lowest row at or above it, a bid on the highest at or below it; rows the touch
    crossed change colour (their side); ``regrid`` takes the current book's own rows."""
    model = DepthModel(Precision())
    model.set_held(True)
    seen = Recorder(model)
    assert model.set_book(book("BTC/USD", BIDS, ASKS)) is True  # a first book: its rows
    assert seen.take() == (set(), set(), 1)
    rows = [r.price for r in model.rows]
    assert rows == [D("101.5"), D("101.0"), D("100.5"), D("100.0"), D("99.5"), D("99.0")]

    sides: list[list[int]] = []
    model.dataChanged.connect(lambda _t, _b, roles: sides.append(list(roles)))
    # Up a quarter: asks 100.75 / 101.25 / 101.75, bids 100.25 / 99.75 / 99.25.
    up = book(
        "BTC/USD",
        [("100.25", "1"), ("99.75", "2"), ("99.25", "3")],
        [("100.75", "5"), ("101.25", "6"), ("101.75", "7")],
    )
    assert model.set_book(up) is False
    assert seen.take()[2] == 0  # no reset
    assert [r.price for r in model.rows] == rows
    assert [r.side for r in model.rows] == ["ask", "ask", "inside", "bid", "bid", "bid"]
    assert [r.size for r in model.rows] == [D(6), D(5), D(0), D(1), D(2), D(3)]  # 101.75: off
    assert [r.cumulative for r in model.rows] == [D(11), D(5), D(0), D(1), D(3), D(6)]
    assert (model.best_ask_row, model.best_bid_row) == (1, 3)
    assert (model.best_ask(), model.best_bid()) == (D("100.75"), D("100.25"))  # the book's
    assert list(model.colour_roles) in sides  # 100.5 turned (and the touch moved)
    assert model.index(2, COL["size"]).data() == ""  # nothing at a row inside the spread
    assert model.index(2, COL["price"]).data(Qt.ItemDataRole.ToolTipRole) == INSIDE_TIP
    assert model.index(1, COL["price"]).data(Qt.ItemDataRole.ToolTipRole) is None
    assert model.index(2, COL["price"]).data(Qt.ItemDataRole.ForegroundRole) == (model.palette.text)

    model.regrid()
    assert [r.price for r in model.rows] == [
        D("101.75"),
        D("101.25"),
        D("100.75"),
        D("100.25"),
        D("99.75"),
        D("99.25"),
    ]
    assert (model.best_ask_row, model.best_bid_row) == (2, 3)
    # Another pair: its own rows, held or not.
    assert model.set_book(book("ETH/USD", BIDS, ASKS)) is True
    assert model.pair == "ETH/USD" and model.row_of_price(D("99.5")) == 4


def test_depth_model_honours_the_qt_model_contract(qtmodeltester: ModelTester) -> None:
    model = DepthModel(Precision())
    model.set_book(book("BTC/USD", BIDS, ASKS))
    qtmodeltester.check(model)  # type: ignore[no-untyped-call]
    # The tester stays connected: updates and resets are checked as they happen.
    model.set_book(book("BTC/USD", [("100.0", "4"), *BIDS[1:]], ASKS))
    model.set_book(book("BTC/USD", BIDS[:1], ASKS))
    model.set_book(None)
    model.set_book(book("ETH/BTC", BIDS, ASKS))
    assert model.rowCount() == 6


# -- depth: the panel ---------------------------------------------------------------------------


def _check_ladder(panel: DepthPanel, precision: Precision) -> None:
    panel.recentre()  # rows from the current book (held rows may lay a later one on older rows)
    model = panel.model
    pair = model.pair
    assert pair is not None and model.book is not None
    rows = model.rows
    asks, bids = rows[: model.ask_count], rows[model.ask_count :]
    assert asks and bids
    ask_prices = [row.price for row in reversed(asks)]  # best first
    bid_prices = [row.price for row in bids]
    assert ask_prices == sorted(ask_prices) and len(set(ask_prices)) == len(ask_prices)
    assert bid_prices == sorted(bid_prices, reverse=True)
    assert bid_prices[0] < ask_prices[0]
    for side in (list(reversed(asks)), bids):
        running = Decimal(0)
        for row in side:
            running += row.size
            assert isinstance(row.cumulative, Decimal) and row.cumulative == running
    # The same levels the server sent.
    assert sorted((r.price, r.size) for r in bids) == sorted(model.book.bids)
    assert sorted((r.price, r.size) for r in asks) == sorted(model.book.asks)
    first_bid = model.index(model.ask_count, COL["price"])
    assert first_bid.data() == precision.price_text(bid_prices[0], pair)
    places = model.decimals(COL["size"])  # the fewest that show every size exactly
    assert places == max(len(format_trimmed(r.size).partition(".")[2]) for r in rows)
    assert places <= precision.asset(model.book.pair.base)
    assert model.index(0, COL["size"]).data() == format_number(asks[0].size, places)
    spread = precision.price_text(ask_prices[0] - bid_prices[0], pair)
    assert panel.header.text().startswith(f"{pair}   Spread {spread}")


def test_depth_panel_follows_the_live_selected_book(qtbot: QtBot, live: Live) -> None:
    panel = DepthPanel(live.context)
    qtbot.addWidget(panel)
    selected = live.session.selected_pair
    assert selected is not None and panel.pair == selected
    qtbot.waitUntil(lambda: panel.model.pair == selected and panel.model.rowCount() > 0)
    _check_ladder(panel, live.context.precision)

    assert "ETH/BTC" in live.session.watchlist
    live.bridge.select_pair("ETH/BTC")
    qtbot.waitUntil(lambda: panel.model.pair == "ETH/BTC" and panel.model.rowCount() > 0)
    _check_ladder(panel, live.context.precision)
    assert panel.model.headerData(0, Qt.Orientation.Horizontal) == "Price\n(BTC)"
    decimals = live.context.precision.price("ETH/BTC")
    assert len(panel.model.index(0, COL["price"]).data().split(".")[1]) == decimals


def shown_depth(qtbot: QtBot, context: PanelContext) -> DepthPanel:
    """A depth panel on screen at 480×400, waiting for the books the test emits."""
    panel = DepthPanel(context)
    qtbot.addWidget(panel)
    panel.resize(480, 400)
    panel.show()
    qtbot.waitExposed(panel)
    return panel


def test_depth_panel_ignores_stale_books_paints_bars_and_activates_levels(
    qtbot: QtBot, offline: PanelContext
) -> None:
    panel = shown_depth(qtbot, offline)
    assert panel.header.text() == "BTC/USD   waiting for the order book…"
    offline.bridge.orderBook.emit(book("BTC/USD", BIDS, ASKS))
    assert panel.model.rowCount() == 6
    assert panel.header.text() == "BTC/USD   Spread 0.50 (49.9 bps)"

    # Size bars, beside the digits: the largest size (5, an ask) fills its bar's space; the
    # second bid's (2) two fifths of it.
    view = panel.view
    image = view.viewport().grab().toImage()

    def pixel(row: int, column: int, across: float) -> QColor:
        """The pixel ``across`` (0 to 1) of the way through the cell's bar space."""
        rect = view.visualRect(panel.model.index(row, column))
        space = bar_space(rect, panel.painter.room(column, view.font()))
        assert space is not None
        x = space.left() + int(space.width() * across)
        return image.pixelColor(QPoint(x, rect.center().y()))

    background = pixel(4, COL["price"], 0.1)  # price cells have no bar, text sits right
    full = pixel(0, COL["size"], 0.05)  # the far end of a full ask bar
    assert full != background and full.red() > full.blue()  # ask: orange
    assert pixel(4, COL["size"], 0.3) == background  # two fifths, from the digits' side,
    bid_bar = pixel(4, COL["size"], 0.8)  # do not reach 30 % of the way; they cover 80 %
    assert bid_bar != background and bid_bar.blue() > bid_bar.red()  # bid: blue

    # Double-click a level: the pair, side and Decimal price for the ticket.
    centre = view.visualRect(panel.model.index(4, COL["price"])).center()
    with qtbot.waitSignal(panel.levelActivated, timeout=2000) as activated:
        # An item view acts on a double-click only after a press on the same item.
        QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=centre)
        QTest.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=centre)
    # QTest leaves the button down after a double-click; later moves would be drags.
    QTest.mouseRelease(view.viewport(), Qt.MouseButton.LeftButton, pos=centre)
    assert QApplication.mouseButtons() == Qt.MouseButton.NoButton
    assert activated.args == ["BTC/USD", "bid", D("99.5")]

    # The trader switches: the ladder empties, and a late book of the old pair is ignored.
    offline.bridge.select_pair("ETH/BTC")
    assert panel.model.rowCount() == 0
    assert panel.header.text().startswith("ETH/BTC")
    offline.bridge.orderBook.emit(book("BTC/USD", BIDS, ASKS))
    assert panel.model.rowCount() == 0
    offline.bridge.orderBook.emit(book("ETH/BTC", [("0.031", "2")], [("0.032", "1")]))
    assert panel.model.pair == "ETH/BTC" and panel.model.rowCount() == 2


def test_depth_panel_repaints_prices_and_bars_when_the_palette_switches(
    qtbot: QtBot, offline: PanelContext
) -> None:
    panel = shown_depth(qtbot, offline)
    offline.bridge.orderBook.emit(book("BTC/USD", BIDS, ASKS))
    view, model = panel.view, panel.model
    colours: list[list[int]] = []
    model.dataChanged.connect(lambda _top, _bottom, roles: colours.append(list(roles)))

    def ask_bar() -> QColor:
        rect = view.visualRect(model.index(0, COL["size"]))  # a full ask bar
        image = view.viewport().grab().toImage()
        return image.pixelColor(QPoint(rect.left() + 3, rect.center().y()))

    dark_bar = ask_bar()
    light = trade_palette("light")
    try:
        palette.set_palette(light)
        assert colours == [
            [Qt.ItemDataRole.ForegroundRole, DepthRole.SIDE_COLOUR, Qt.ItemDataRole.BackgroundRole]
        ]
        assert model.index(0, COL["price"]).data(Qt.ItemDataRole.ForegroundRole) == light.ask
        assert model.index(5, COL["price"]).data(Qt.ItemDataRole.ForegroundRole) == light.bid
        assert model.index(0, COL["size"]).data(DepthRole.SIDE_COLOUR) == light.ask
        light_bar = ask_bar()
        assert light_bar != dark_bar and light_bar.red() > light_bar.blue()
    finally:
        palette.set_palette(DEFAULT_PALETTE)
    assert ask_bar() == dark_bar


def is_following(panel: DepthPanel) -> bool:
    """Whether the ladder follows the touch (a call: mypy would narrow the property)."""
    return panel.following


def test_a_held_row_without_a_level_shows_neither_size_nor_cumulative() -> None:
    """A held row whose price the book has no level for any more is blank in both columns (a
    running sum beside an empty size would read as a level with no size); the rows with a
    level keep their running sums from the touch."""
    model = DepthModel(Precision())
    model.set_held(True)
    model.set_book(book("BTC/USD", BIDS, ASKS))
    gaps = book(
        "BTC/USD",
        [("100.0", "1"), ("99.0", "3")],  # nothing at 99.5 any more
        [("100.5", "4"), ("101.5", "7")],  # nothing at 101.0
    )
    model.set_book(gaps)
    assert [r.price for r in model.rows] == [
        D("101.5"), D("101.0"), D("100.5"), D("100.0"), D("99.5"), D("99.0")
    ]  # fmt: skip
    assert [r.size for r in model.rows] == [D(7), D(0), D(4), D(1), D(0), D(3)]
    assert [r.cumulative for r in model.rows] == [D(11), D(0), D(4), D(1), D(0), D(4)]
    for row in (1, 4):
        assert model.index(row, COL["size"]).data() == ""
        assert model.index(row, COL["cumulative"]).data() == ""
        assert model.index(row, COL["cumulative"]).data(DepthRole.BAR_FRACTION) == D(0)
    assert model.index(5, COL["cumulative"]).data() == "4"


def test_depth_panel_keeps_the_touch_centred_when_the_levels_change(
    qtbot: QtBot, offline: PanelContext
) -> None:
    """Books of a new shape (more asks, fewer bids) around the same touch: the held price rows
    keep the touch in the middle without any resize, and Space brings it back (with rows
    from the current book) after the trader scrolled."""
    panel = DepthPanel(offline)
    qtbot.addWidget(panel)
    panel.resize(400, 300)
    offline.bridge.orderBook.emit(ladder_book(30, 30))  # while hidden (a tab behind the chart)
    panel.show()
    qtbot.waitExposed(panel)
    view = panel.view
    middle = view.viewport().height() // 2
    assert view.visualRect(panel.model.index(30, 0)).top() == middle  # centred once shown
    for asks, bids in ((30, 30), (45, 15), (12, 40), (45, 15)):
        offline.bridge.orderBook.emit(ladder_book(asks, bids))
        # The price rows are held (the first book's 60): the touch stays on its rows.
        assert panel.model.rowCount() == 60
        bid_row, ask_row = panel.model.best_bid_row, panel.model.best_ask_row
        assert ask_row == 29 and bid_row == 30
        best_bid = view.visualRect(panel.model.index(bid_row, 0))
        assert best_bid.top() == middle, (asks, bids, best_bid.top(), middle)
        assert panel.model.row(bid_row).price == D(998)
        assert panel.model.row(ask_row).price == D(1001)
    view.setFocus()
    centre = QPointF(view.viewport().rect().center())
    wheel = QWheelEvent(
        centre,
        QPointF(view.viewport().mapToGlobal(centre.toPoint())),
        QPoint(),
        QPoint(0, 120 * 3),  # three notches up
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(view.viewport(), wheel)
    scrolled = view.verticalScrollBar().value()
    assert not is_following(panel) and scrolled < 45 * view.rowHeight(0) - middle
    offline.bridge.orderBook.emit(ladder_book(20, 20))
    assert view.verticalScrollBar().value() == scrolled  # left where the trader put it
    QTest.keyClick(view, Qt.Key.Key_Space)
    assert is_following(panel)
    assert view.visualRect(panel.model.index(20, 0)).top() == middle
    QTest.keyClick(view, Qt.Key.Key_Home)  # the keys scroll away too
    offline.bridge.orderBook.emit(ladder_book(25, 20))
    assert view.verticalScrollBar().value() == 0


# -- chart: the ring buffer ---------------------------------------------------------------------


def test_ring_buffer_keeps_the_latest_window_in_order_past_capacity() -> None:
    ring = RingBuffer(4, 2)
    assert len(ring) == 0 and ring.window().shape == (2, 0) and ring.last() is None
    for n in range(1, 14):
        ring.append((float(n), float(-n)))
        expected = list(range(max(1, n - 3), n + 1))
        window = ring.window()
        assert window.shape == (2, len(expected))
        assert window[0].tolist() == expected
        assert window[1].tolist() == [-v for v in expected]
        assert ring.column(0).flags.c_contiguous
        last = ring.last()
        assert last is not None and last.tolist() == [n, -n]
    assert len(ring) == 4 and ring.appended == 13
    ring.clear()
    assert len(ring) == 0 and ring.window().shape == (2, 0)
    ring.append((1.0, 2.0))
    assert ring.window().tolist() == [[1.0], [2.0]]
    with pytest.raises(ValueError, match="expected 2 values"):
        ring.append((1.0,))


# -- chart: the panel ---------------------------------------------------------------------------


def _data(panel: ChartPanel, name: str) -> tuple[Any, Any]:
    curve = panel.curves[name]
    return curve.xData, curve.yData


def _length(panel: ChartPanel, name: str = "bid") -> int:
    x, _ = _data(panel, name)
    return 0 if x is None else len(x)


@pytest.mark.slow
def test_chart_plots_live_ticks_per_pair(qtbot: QtBot, live: Live) -> None:
    panel = ChartPanel(live.context)
    qtbot.addWidget(panel)
    selected = live.session.selected_pair
    assert selected is not None
    # Live plotting settings from the notes: 1 px pens, no antialiasing (the panel reduces the
    # lines to two points a pixel column itself: test_chart, test_peak_display).
    for curve in panel.curves.values():
        assert curve.opts["pen"].width() <= 1 and not curve.opts["antialias"]

    qtbot.waitUntil(lambda: _length(panel) >= 3, timeout=10_000)
    grown = _length(panel)
    qtbot.waitUntil(lambda: _length(panel) > grown, timeout=10_000)
    x, bid = _data(panel, "bid")
    _, ask = _data(panel, "ask")
    _, mid = _data(panel, "mid")
    _, spread = _data(panel, "spread")
    n = len(x)
    assert len(bid) == len(ask) == len(mid) == len(spread) == n
    assert np.all(np.diff(x) >= 0) and abs(x[-1] - time.time()) < 60
    assert np.all(bid <= mid) and np.all(mid <= ask)
    assert np.allclose(spread, ask - bid, rtol=1e-9, atol=1e-9)
    assert panel.title.text().startswith(f"{selected}   bid ")

    # Every watched pair was recorded in the background, a sample a second (not every tick in
    # memory: a ring buffer per watched pair cost 1.5 MB each): switching shows ETH/BTC at once.
    assert panel.buffer("ETH/BTC") is None
    stored = panel.history.read("ETH/BTC")
    assert stored.shape[1] > 0
    live.bridge.select_pair("ETH/BTC")
    qtbot.waitUntil(lambda: panel.pair == "ETH/BTC" and float(np.max(_data(panel, "bid")[1])) < 1)
    eth = panel.buffer("ETH/BTC")
    assert eth is not None and len(eth) >= stored.shape[1]
    assert np.array_equal(eth.column(1)[: stored.shape[1]], stored[1])  # the seconds first
    assert panel.title.text().startswith("ETH/BTC")
    assert panel.buffer(selected) is not None  # shown a moment ago: still every tick


def test_the_chart_title_is_never_cut_in_a_narrow_dock(qtbot: QtBot, live: Live) -> None:
    """At 1366×768 the title was cut to "... spread" → "sprea": it takes a second line instead,
    and one line again when the dock is wide enough."""
    panel = ChartPanel(live.context)
    qtbot.addWidget(panel)
    panel.resize(1200, 500)
    panel.show()
    title = panel.title
    qtbot.waitUntil(lambda: "spread" in title.text(), timeout=10_000)
    host = title.parentWidget()
    assert host is not None
    one_line = host.height()
    narrow = title.fontMetrics().horizontalAdvance(title.text()) * 2 // 3
    panel.resize(narrow + 150, 500)  # the chart type box sits beside the title
    qtbot.waitUntil(lambda: host.height() > one_line)
    assert host.height() >= title.heightForWidth(host.width())
    panel.resize(1200, 500)
    qtbot.waitUntil(lambda: host.height() == one_line)


def test_chart_redraws_at_most_once_a_frame(
    qtbot: QtBot, offline: PanelContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    panel = ChartPanel(offline)
    qtbot.addWidget(panel)
    calls = {name: 0 for name in panel.curves}
    for name, curve in panel.curves.items():

        def counting(*args: Any, _name: str = name, _real: Any = curve.setData) -> None:
            calls[_name] += 1
            _real(*args)

        monkeypatch.setattr(curve, "setData", counting)

    for i in range(100):
        offline.bridge.topOfBook.emit({"BTC/USD": top("BTC/USD", f"{100 + i}", f"{101 + i}")})
    # the burst costs no drawing: the one frame asked for draws it (how long the loop above
    # takes is the machine's, and the benchmarks' business, not a rule to test)
    assert panel.redraw_pending() and calls["bid"] == 0  # nothing drawn per tick

    qtbot.waitUntil(lambda: _length(panel) == 100)
    qtbot.waitUntil(lambda: not panel.redraw_pending())
    assert all(1 <= count <= 2 for count in calls.values()), calls
    _, ask = _data(panel, "ask")
    assert ask[0] == 101.0 and ask[-1] == 200.0

    # Ticks of a pair that is not shown are kept but draw nothing.
    before = dict(calls)
    offline.bridge.topOfBook.emit({"ETH/USD": top("ETH/USD", "3000", "3001")})
    assert not panel.redraw_pending() and calls == before
    # A later tick of the shown pair draws once more.
    offline.bridge.topOfBook.emit({"BTC/USD": top("BTC/USD", "300", "301")})
    qtbot.waitUntil(lambda: _length(panel) == 101)
    assert calls["bid"] == before["bid"] + 1


def test_chart_wraps_at_capacity_and_keeps_per_pair_history(
    qtbot: QtBot, offline: PanelContext
) -> None:
    panel = ChartPanel(offline, capacity=50)
    qtbot.addWidget(panel)
    for i in range(120):
        panel.add_ticks(
            {
                "BTC/USD": top("BTC/USD", f"{1000 + i}", f"{1001 + i}"),
                "ETH/BTC": top("ETH/BTC", "0.031", "0.032"),
            },
            at=1_700_000_000.0 + i,
        )
    qtbot.waitUntil(lambda: _length(panel) == 50)
    x, bid = _data(panel, "bid")
    assert x.tolist() == [1_700_000_000.0 + i for i in range(70, 120)]
    assert bid.tolist() == [1000.0 + i for i in range(70, 120)]
    offline.bridge.select_pair("ETH/BTC")
    qtbot.waitUntil(lambda: _data(panel, "ask")[1] is not None and _data(panel, "ask")[1][0] < 1)
    assert _length(panel, "ask") == 50


def test_chart_takes_its_colours_from_the_palette_and_follows_a_switch(
    qtbot: QtBot, offline: PanelContext
) -> None:
    panel = ChartPanel(offline)
    qtbot.addWidget(panel)

    def check(expected: TradePalette) -> None:
        assert panel.trade_palette == expected
        for name, colour in (("bid", expected.bid), ("ask", expected.ask)):
            curve = panel.curves[name]
            pen = curve.opts["pen"]
            assert pen.color() == colour
            assert pen.width() == 1 and pen.isCosmetic() and curve.opts["antialias"] is False
        assert panel.curves["mid"].opts["pen"].color() == expected.mid
        assert panel.plots.backgroundBrush().color() == expected.background
        for plot in (panel.price_plot, panel.spread_plot):
            assert plot.getAxis("left").pen().color() == expected.mid
            assert plot.getAxis("left").textPen().color() == expected.text
        assert dict(panel.legend_entries())["bid"] == expected.bid
        assert f"color:{expected.ask.name()}" in panel.legend.text()

    check(DEFAULT_PALETTE)
    light = trade_palette("light")
    try:
        palette.set_palette(light)
        check(light)
    finally:
        palette.set_palette(DEFAULT_PALETTE)
    check(DEFAULT_PALETTE)


def test_plot_sample_is_the_float_boundary() -> None:
    assert plot_sample(5.0, top("BTC/USD", "90000.5", "90001.5")) == (
        5.0,
        90000.5,
        90001.5,
        90001.0,
        1.0,
    )


def test_crosshair_follows_the_mouse_with_a_price_readout(
    qtbot: QtBot, offline: PanelContext
) -> None:
    panel = ChartPanel(offline)
    qtbot.addWidget(panel)
    panel.resize(800, 600)
    panel.show()
    qtbot.waitExposed(panel)
    assert QApplication.mouseButtons() == Qt.MouseButton.NoButton  # a hover, not a drag
    for i in range(20):
        panel.add_ticks(
            {"BTC/USD": top("BTC/USD", f"{90000 + i}", f"{90010 + i}")}, at=1_700_000_000.0 + i
        )
    qtbot.waitUntil(lambda: _length(panel) == 20)
    assert panel.readout.text() == ""
    view_box = panel.price_plot.vb
    # The view auto-ranges onto the data when it next paints.
    qtbot.waitUntil(lambda: view_box.viewRange()[1][0] > 80_000)

    scene_point: QPointF = view_box.sceneBoundingRect().center()
    taken = hover(qtbot, panel, panel.plots.mapFromScene(scene_point), "price")
    expected = view_box.mapSceneToView(panel.plots.mapToScene(taken))
    text = panel.readout.text()
    assert text == panel.readout_text(expected.x(), expected.y(), "price")
    price = D(text.split("price ")[1].replace(",", ""))
    assert D(90000) <= price <= D(90030) and price == price.quantize(D("0.01"))
    assert panel._vlines[panel.price_plot].isVisible()
    assert panel._vlines[panel.price_plot].value() == pytest.approx(expected.x())

    # Over the spread plot the readout names the spread.
    spread_centre = panel.spread_plot.vb.sceneBoundingRect().center()
    hover(qtbot, panel, panel.plots.mapFromScene(spread_centre), "spread")


def test_the_price_axis_groups_thousands(qtbot: QtBot, offline: PanelContext) -> None:
    """Our numbers have thousands separators, the chart's ticks too (a trader reads 91,000
    on the table and must read it the same on the axis)."""
    panel = ChartPanel(offline)
    qtbot.addWidget(panel)
    axis = panel.price_plot.getAxis("left")
    assert axis.tickStrings([90995.0, 91000.0], 1.0, 5.0) == ["90,995", "91,000"]
    assert axis.tickStrings([12345.5], 1.0, 0.5) == ["12,345.5"]
    spread = panel.spread_plot.getAxis("left")
    assert spread.tickStrings([0.0001, 0.0002], 1.0, 0.0001) == ["0.0001", "0.0002"]


def test_a_chart_hidden_behind_a_tab_draws_nothing_until_shown(
    qtbot: QtBot, offline: PanelContext
) -> None:
    """A hidden chart costs nothing: it redrew on every tick while the depth tab hid it."""
    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    panel = ChartPanel(offline)
    tabs.addTab(QLabel("depth"), "Depth")
    tabs.addTab(panel, "Chart")
    tabs.show()
    qtbot.waitExposed(tabs)
    assert not panel.isVisible()
    qtbot.waitUntil(lambda: not panel.redraw_pending())  # what was asked before it was hidden
    before = panel.redraws
    for i in range(5):
        offline.bridge.topOfBook.emit({"BTC/USD": top("BTC/USD", f"{100 + i}", f"{101 + i}")})
    qtbot.wait(100)
    assert not panel.redraw_pending() and panel.redraws == before
    tabs.setCurrentWidget(panel)  # shown: what came while hidden is drawn, once
    qtbot.waitUntil(lambda: panel.redraws == before + 1)
    assert _length(panel) == 5
    qtbot.wait(60)
    assert panel.redraws == before + 1
