"""Candles a trader can read: rises and falls in the palette's up and down colours (a rise
hollow, a fall filled; both grey while stale), only timeframes of at least four polls of the
top of book (re-offered when the poll interval changes), and fill markers that grow with the
fill (real sandbox, real execution engine)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from app.services.algos.specs import AlgoSpec
from app.services.session import FeedIntervals
from app.ui.palette import DARK_PALETTE, LIGHT_PALETTE, set_palette
from app.ui.panels.base import PanelContext
from app.ui.panels.chart import VIEW_KEY, ChartPanel
from app.ui.panels.chart_candles import (
    POLLS_PER_CANDLE,
    TIMEFRAMES,
    nearest_offered,
    offered_timeframes,
)
from app.ui.panels.chart_fills import MARKER_MAX, MARKER_MIN, marker_sizes
from app.ui.preferences import Preferences
from tests.helpers.live import Live, OfflineContext
from tests.helpers.top_of_book import top

D = Decimal
T0 = 1_700_000_000.0 - 1_700_000_000.0 % 3600
PAIR = "BTC/USD"


@pytest.fixture
def offline(offline_context: OfflineContext) -> PanelContext:
    return offline_context("ETH/USD")


def shown(qtbot: QtBot, context: PanelContext) -> ChartPanel:
    panel = ChartPanel(context)
    qtbot.addWidget(panel)
    panel.resize(900, 500)
    panel.show()
    qtbot.waitExposed(panel)
    return panel


def choose(panel: ChartPanel, view: str) -> None:
    """Pick ``view`` with the keyboard, as a trader would."""
    box = panel.view_choice
    box.setFocus()
    while box.currentText() != view:
        step = Qt.Key.Key_Down if box.findText(view) > box.currentIndex() else Qt.Key.Key_Up
        QTest.keyClick(box, step)


def pixels(image: QImage, colour: QColor) -> int:
    """How many pixels of ``image`` are exactly ``colour`` (1 px pens, no antialiasing)."""
    wanted = colour.rgb()
    return sum(
        1
        for y in range(image.height())
        for x in range(image.width())
        if image.pixel(x, y) == wanted
    )


@pytest.mark.slow
def test_rises_and_falls_get_their_own_pen_and_brush(qtbot: QtBot, offline: PanelContext) -> None:
    set_palette(DARK_PALETTE)
    panel = shown(qtbot, offline)
    # 1 min candles: a rise (10 -> 14), a fall (14 -> 9), a rise (9 -> 12), still open
    mids = [(0, "10"), (30, "14"), (59, "14"), (60, "14"), (119, "9"), (120, "9"), (150, "12")]
    for at, mid in mids:
        half = D("0.24")
        panel.add_ticks(
            {"ETH/USD": top("ETH/USD", str(D(mid) - half), str(D(mid) + half))}, at=T0 + at
        )
    choose(panel, "1 min")
    qtbot.waitUntil(lambda: panel._candles is not None and len(panel._candles) == 3)
    made = panel._candles
    assert made is not None
    assert [made.rises(i) for i in range(3)] == [True, False, True]

    item = panel.candle_item
    up_pen, up_brush = item.style(True)
    down_pen, down_brush = item.style(False)
    assert up_pen.color() == DARK_PALETTE.up and down_pen.color() == DARK_PALETTE.down
    assert up_brush.style() == Qt.BrushStyle.NoBrush  # a rise is hollow
    assert down_brush.style() == Qt.BrushStyle.SolidPattern
    assert down_brush.color() == DARK_PALETTE.down
    assert up_brush != down_brush and up_pen.color() != down_pen.color()
    assert up_pen.width() == 1 and up_pen.isCosmetic()

    # what is painted: both colours on screen
    qtbot.waitUntil(lambda: not panel.redraw_pending())
    image = panel.plots.grab().toImage()
    assert pixels(image, DARK_PALETTE.up) > 20 and pixels(image, DARK_PALETTE.down) > 20
    legend = dict(panel.legend_entries())
    assert legend["up"] == DARK_PALETTE.up and legend["down"] == DARK_PALETTE.down

    # a theme switch recolours them
    set_palette(LIGHT_PALETTE)
    try:
        assert item.style(True)[0].color() == LIGHT_PALETTE.up
        assert item.style(False)[1].color() == LIGHT_PALETTE.down
    finally:
        set_palette(DARK_PALETTE)


def test_the_timeframe_rule() -> None:
    """A candle spans at least four polls of the top of book."""
    assert POLLS_PER_CANDLE == 4
    at_default = list(offered_timeframes(0.5))  # the sandbox's default poll: 2 a second
    assert at_default == ["Line", "5 s", "15 s", "1 min", "5 min", "15 min", "1 h"]
    assert "1 s" in offered_timeframes(0.25)  # four polls in exactly a second
    assert "1 s" not in offered_timeframes(0.26)
    assert list(offered_timeframes(2.0))[:2] == ["Line", "15 s"]
    assert list(offered_timeframes(900.0)) == ["Line", "1 h"]
    assert list(offered_timeframes(5000.0)) == ["Line"]
    for interval in (0.1, 0.5, 1.0, 3.0, 20.0):
        offered = offered_timeframes(interval)
        assert offered["Line"] == 0
        assert all(s == 0 or s >= 4 * interval for s in offered.values())
        assert all(s in offered.values() for s in TIMEFRAMES.values() if s >= 4 * interval)
    # a wanted timeframe no longer offered: the next longer one, else the longest
    assert nearest_offered(1, offered_timeframes(0.5)) == "5 s"
    assert nearest_offered(60, offered_timeframes(0.5)) == "1 min"
    assert nearest_offered(3600, offered_timeframes(5000.0)) == "Line"
    assert nearest_offered(0, offered_timeframes(0.5)) == "Line"


def test_the_view_box_offers_what_the_poll_rate_allows(qtbot: QtBot, offline: PanelContext) -> None:
    offline.settings.setValue(VIEW_KEY, "1 s")  # remembered from a faster poll
    assert offline.bridge.top_of_book_interval == 0.5
    panel = shown(qtbot, offline)
    assert panel.offered_views() == list(offered_timeframes(0.5))
    assert panel.view_choice.currentText() == "5 s" and panel.timeframe == 5
    for i in range(40):
        panel.add_ticks({"ETH/USD": top("ETH/USD", f"{3000 + i}", f"{3001 + i}")}, at=T0 + i / 2)
    qtbot.waitUntil(lambda: panel._candles is not None and panel._candles.seconds == 5)

    # Settings: polls four times a second; the window re-times the feed, then tells the panels
    offline.bridge.set_intervals(FeedIntervals(top_of_book=0.25))
    panel.apply_preferences(Preferences(top_of_book=D("0.25")))
    assert "1 s" in panel.offered_views() and panel.timeframe == 5  # the view in force stays
    # polls every 2 s: 5 s candles go, the chart shows the next longer ones at once
    offline.bridge.set_intervals(FeedIntervals(top_of_book=2.0))
    panel.apply_preferences(Preferences(top_of_book=D(2)))
    assert panel.offered_views()[:2] == ["Line", "15 s"]
    assert panel.view_choice.currentText() == "15 s"
    qtbot.waitUntil(lambda: panel._candles is not None and panel._candles.seconds == 15)
    assert offline.settings.value(VIEW_KEY) == "1 s"  # the trader's own choice is kept


def test_marker_sizes_grow_with_the_fill_and_stay_bounded() -> None:
    sizes = marker_sizes([0.01, 0.04, 1.0, 0.0])
    assert sizes[0] < sizes[1] < sizes[2] == MARKER_MAX
    assert sizes[3] == MARKER_MIN
    assert all(MARKER_MIN <= s <= MARKER_MAX for s in sizes)
    assert sizes[1] - MARKER_MIN == pytest.approx(2 * (sizes[0] - MARKER_MIN))  # area-like
    assert marker_sizes([5.0]) == [MARKER_MAX]
    assert marker_sizes([]) == []
    assert marker_sizes([float("nan"), 2.0]) == [MARKER_MIN, MARKER_MAX]


def test_a_larger_fill_has_a_larger_marker(qtbot: QtBot, live: Live) -> None:
    live.bridge.select_pair(PAIR)
    qtbot.waitUntil(lambda: PAIR in (live.bridge.topOfBook.latest or {}), timeout=10_000)
    engine = live.bridge.algos
    assert engine is not None
    engine.resting_poll = 0.1
    chart = ChartPanel(live.context)
    qtbot.addWidget(chart)
    chart.resize(800, 400)
    chart.show()
    big = engine.submit(
        AlgoSpec(
            "twap",
            PAIR,
            "buy",
            D(3000),
            slices=1,
            duration_seconds=D("0.1"),
            collar_bps=D(50),
        )
    )
    qtbot.waitUntil(lambda: big.ended, timeout=20_000)
    small = engine.submit(AlgoSpec("clip", PAIR, "sell", D("0.004"), display=D("0.004")))
    qtbot.waitUntil(lambda: small.ended, timeout=20_000)
    qtbot.waitUntil(lambda: len(chart.marker_points) == 2, timeout=15_000)
    marks = zip(chart.marker_points, chart.marker_sizes, strict=True)
    sizes = {side: size for (_, _, side), size in marks}
    drawn = sorted(float(s) for s in chart.fill_markers.data["size"])
    assert drawn == sorted(sizes.values())
    # about 0.033 BTC bought against 0.004 sold
    assert sizes["buy"] == MARKER_MAX
    assert MARKER_MIN < sizes["sell"] < sizes["buy"] - 5
