"""The chart a trader reads: labels that never overlap, the spread in price units,
clock time, a legend beside the lines, candles from the polled mids, a crosshair readout, and
history kept across a rebuild. Real widgets, fed through the bridge's ``topOfBook`` signal."""

from __future__ import annotations

import itertools
import re
import stat
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QRectF, QSettings, Qt
from PySide6.QtGui import QImage, QPainter
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.services.mid_history import MAGIC, MidHistory, file_name
from app.ui.palette import DEFAULT_PALETTE
from app.ui.panels.base import PanelContext
from app.ui.panels.chart import KEPT_PAIRS, MAX_BUCKETS, WAITING, ChartPanel, history_folder
from app.ui.panels.chart_candles import candles
from app.ui.ring_buffer import RingBuffer
from tests.helpers.live import OfflineContext
from tests.helpers.qt import run
from tests.helpers.top_of_book import top
from tests.ui.chart_helpers import hover

D = Decimal
#: 2023-11-14 22:13:20 UTC: a whole hour, so buckets of every timeframe start on it.
T0 = 1_700_000_000.0 - 1_700_000_000.0 % 3600


@pytest.fixture
def offline(offline_context: OfflineContext) -> PanelContext:
    """A never-started session on ETH/USD: the test alone feeds the signals."""
    return offline_context("ETH/USD")


def shown(qtbot: QtBot, context: PanelContext, width: int, height: int) -> ChartPanel:
    panel = ChartPanel(context)
    qtbot.addWidget(panel)
    panel.resize(width, height)
    panel.show()
    qtbot.waitExposed(panel)
    return panel


def feed_at(panel: ChartPanel, mids: list[tuple[float, str]], spread: str = "0.48") -> None:
    """Ticks of ETH/USD with these mids at these times."""
    half = D(spread) / 2
    for at, mid in mids:
        panel.add_ticks({"ETH/USD": top("ETH/USD", str(D(mid) - half), str(D(mid) + half))}, at=at)


def drawn(qtbot: QtBot, panel: ChartPanel, count: int) -> None:
    """The lines stand for ``count`` samples (reduced to two points a pixel column at most)."""
    qtbot.waitUntil(lambda: panel.drawn_samples == count)


def settled(qtbot: QtBot, panel: ChartPanel) -> None:
    """Painted, and the value axes as wide as their labels asked (a layout pass later)."""
    axes = [plot.getAxis("left") for plot in (panel.price_plot, panel.spread_plot)]

    def done() -> bool:
        panel.grab()
        return all(axis.width() == axis.minimumWidth() for axis in axes)

    qtbot.waitUntil(done)


def axis_texts(panel: ChartPanel) -> dict[str, tuple[list[tuple[QRectF, str]], QRectF | None]]:
    """Each visible axis' tick labels (rectangle, text) and its title's rectangle (if shown),
    all in the axis' own coordinates, as pyqtgraph lays them out for painting."""
    found = {}
    image = QImage(4, 4, QImage.Format.Format_ARGB32)
    for plot_name, plot in (("price", panel.price_plot), ("spread", panel.spread_plot)):
        for side in ("left", "bottom"):
            axis = plot.getAxis(side)
            painter = QPainter(image)
            try:
                specs = axis.generateDrawSpecs(painter)
            finally:
                painter.end()
            labels = [(QRectF(rect), text) for rect, _, text in specs[2]] if specs else []
            title = axis.label.mapRectToParent(axis.label.boundingRect())
            found[f"{plot_name}-{side}"] = (labels, title if axis.label.isVisible() else None)
    return found


@pytest.mark.parametrize("size", [(360, 150), (1200, 640)], ids=["small", "large"])
def test_axis_labels_never_overlap_at_small_and_large_docks(
    qtbot: QtBot, offline: PanelContext, size: tuple[int, int], tmp_path: Path
) -> None:
    panel = shown(qtbot, offline, *size)
    feed_at(panel, [(T0 + i, str(3100 + (i % 13) * D("0.75"))) for i in range(900)])
    drawn(qtbot, panel, 900)
    qtbot.waitUntil(lambda: panel.price_plot.vb.viewRange()[1][0] > 3000)
    settled(qtbot, panel)
    panel.grab().save(str(tmp_path / "chart.png"))  # for a person to look at
    axes = axis_texts(panel)
    for name, (labels, title) in axes.items():
        for (a, text_a), (b, text_b) in itertools.combinations(labels, 2):
            assert not a.intersects(b), f"{name}: {text_a!r} over {text_b!r} at {size}"
        if title is not None:
            for rect, text in labels:
                assert not rect.intersects(title), f"{name}: {text!r} over the title at {size}"
    # Something to read on every shown axis (the price plot's time labels are the spread's).
    for name in ("price-left", "spread-left", "spread-bottom"):
        assert axes[name][0], f"{name} has no labels at {size}"
    assert axes["price-bottom"][0] == []
    # The two plots' value axes are as wide as each other: their time axes line up.
    left = [p.getAxis("left").width() for p in (panel.price_plot, panel.spread_plot)]
    assert left[0] == left[1]


def test_the_spread_axis_reads_in_price_units_without_a_scale(
    qtbot: QtBot, offline: PanelContext
) -> None:
    panel = shown(qtbot, offline, 900, 500)
    feed_at(panel, [(T0 + i, "3100") for i in range(60)], spread="0.48")
    drawn(qtbot, panel, 60)
    settled(qtbot, panel)
    labels, title = axis_texts(panel)["spread-left"]
    values = [D(text.replace(",", "")) for _, text in labels]
    assert values and all(D(0) <= value <= D("0.6") for value in values), values
    assert any(value >= D("0.2") for value in values)  # 0.48-scale, not 480 with a ×0.001
    axis = panel.spread_plot.getAxis("left")
    assert axis.autoSIPrefixScale == 1.0 and axis.labelUnitPrefix == "" and title is None
    low, high = panel.spread_plot.vb.viewRange()[1]
    assert low == 0.0 and 0.48 < high <= 0.6


def test_the_time_axis_reads_clock_time_from_the_first_point(
    qtbot: QtBot, offline: PanelContext
) -> None:
    panel = shown(qtbot, offline, 900, 500)
    feed_at(panel, [(T0 + i, "3100") for i in range(40)])
    drawn(qtbot, panel, 40)
    axis = panel.spread_plot.getAxis("bottom")
    qtbot.waitUntil(lambda: panel.spread_plot.vb.viewRange()[0][0] > T0 - 5)
    settled(qtbot, panel)
    texts = [text for _, text in axis_texts(panel)["spread-bottom"][0]]
    assert texts and all(re.fullmatch(r"\d\d:\d\d:\d\d", text) for text in texts), texts
    first = datetime.fromtimestamp(T0).strftime("%H:%M:")
    assert all(text.startswith(first) for text in texts)
    # From the first point: the view starts within a few seconds of it.
    start, end = panel.spread_plot.vb.viewRange()[0]
    assert T0 - 5 < start <= T0 and T0 + 39 <= end < T0 + 45
    # Long spans read hours and minutes.
    assert axis.tickStrings([T0, T0 + 300], 1.0, 300.0) == [
        datetime.fromtimestamp(t).strftime("%H:%M") for t in (T0, T0 + 300)
    ]


def test_waiting_for_prices_instead_of_placeholder_ticks(
    qtbot: QtBot, offline: PanelContext
) -> None:
    panel = shown(qtbot, offline, 700, 400)
    assert panel.stack.currentWidget() is panel.waiting and panel.waiting.text() == WAITING
    assert panel.waiting.isVisible() and not panel.plots.isVisible()
    feed_at(panel, [(T0, "3100")])
    qtbot.waitUntil(lambda: panel.stack.currentWidget() is panel.plots)
    assert panel.plots.isVisible() and not panel.waiting.isVisible()
    # A pair with no data yet waits again.
    offline.bridge.select_pair("SOL/USD")
    qtbot.waitUntil(lambda: panel.stack.currentWidget() is panel.waiting)


def test_the_legend_names_bid_ask_mid_beside_the_plots(qtbot: QtBot, offline: PanelContext) -> None:
    panel = shown(qtbot, offline, 700, 400)
    feed_at(panel, [(T0 + i, "3100") for i in range(5)])
    drawn(qtbot, panel, 5)
    names = [name for name, _ in panel.legend_entries()]
    assert names == ["bid", "ask", "mid", "spread"]
    colours = dict(panel.legend_entries())
    assert colours["bid"] == DEFAULT_PALETTE.bid and colours["ask"] == DEFAULT_PALETTE.ask
    text = panel.legend.text()
    for name in names:
        assert f"&nbsp;{name}</span>" in text
    # Outside the plots: the legend's row ends above the plot area.
    legend_bottom = panel.legend.mapTo(panel, QPoint(0, panel.legend.height())).y()
    plots_top = panel.plots.mapTo(panel, QPoint(0, 0)).y()
    assert panel.legend.isVisible() and legend_bottom <= plots_top


def choose(qtbot: QtBot, panel: ChartPanel, view: str) -> None:
    """Pick ``view`` in the chart's box with the keyboard, as a trader would."""
    box = panel.view_choice
    box.setFocus()
    while box.currentText() != view:
        step = Qt.Key.Key_Down if box.findText(view) > box.currentIndex() else Qt.Key.Key_Up
        QTest.keyClick(box, step)


def test_candles_from_known_mids_per_timeframe(qtbot: QtBot, offline: PanelContext) -> None:
    panel = shown(qtbot, offline, 900, 500)
    # Minute 0: 10, 14, 9, 12; minute 1: 12, 11, 15; minute 2: 13 (still open).
    mids = [(0, "10"), (15, "14"), (30, "9"), (59, "12"), (60, "12"), (61, "11"), (90, "15")]
    mids += [(125, "13")]
    feed_at(panel, [(T0 + at, mid) for at, mid in mids])
    drawn(qtbot, panel, len(mids))
    assert panel.timeframe == 0 and panel.curves["mid"].isVisible()

    choose(qtbot, panel, "1 min")
    assert panel.timeframe == 60
    qtbot.waitUntil(lambda: panel._candles is not None)
    made = panel._candles
    assert made is not None and made.seconds == 60
    assert made.start.tolist() == [T0, T0 + 60, T0 + 120]
    assert made.open.tolist() == [10, 12, 13]
    assert made.high.tolist() == [14, 15, 13]
    assert made.low.tolist() == [9, 11, 13]
    assert made.close.tolist() == [12, 15, 13]
    assert panel.candle_item.isVisible() and not panel.curves["mid"].isVisible()
    assert [name for name, _ in panel.legend_entries()] == [
        "mid, 1 min candles:",
        "up",
        "down",
        "spread",
    ]
    assert offline.settings.value("chart/view") == "1 min"
    again = ChartPanel(offline)
    qtbot.addWidget(again)
    assert again.timeframe == 60  # remembered

    # A tick in the open bucket repaints it without re-recording the finished ones.
    pictures = panel.candle_item.pictures
    feed_at(panel, [(T0 + 130, "16")])
    qtbot.waitUntil(lambda: panel._candles is not None and panel._candles.high[-1] == 16)
    assert panel.candle_item.pictures == pictures
    # The next bucket finishes one: recorded once more.
    feed_at(panel, [(T0 + 180, "16")])
    qtbot.waitUntil(lambda: panel._candles is not None and len(panel._candles) == 4)
    assert panel.candle_item.pictures == pictures + 1

    # The candle under the cursor is in the readout, on a line of its own.
    text = panel.readout_text(T0 + 65, 13.0, "price")
    assert text.endswith("price 13.00\nO 12.00  H 15.00  L 11.00  C 15.00")

    # 5 min: one candle of everything; 1 s (not offered at the default poll rate, but
    # computed the same): a candle per tick second.
    choose(qtbot, panel, "5 min")
    qtbot.waitUntil(lambda: panel._candles is not None and panel._candles.seconds == 300)
    five = panel._candles
    assert five is not None and len(five) == 1
    assert (five.open[0], five.high[0], five.low[0], five.close[0]) == (10, 16, 9, 16)
    one = candles(np.array([T0, T0 + 0.5, T0 + 1]), np.array([1.0, 3.0, 2.0]), 1)
    assert one.open.tolist() == [1, 2] and one.high.tolist() == [3, 2]
    assert one.close.tolist() == [3, 2]


def test_crosshair_reads_price_and_time_under_the_mouse(
    qtbot: QtBot, offline: PanelContext
) -> None:
    panel = shown(qtbot, offline, 800, 600)
    assert QApplication.mouseButtons() == Qt.MouseButton.NoButton  # a hover, not a drag
    feed_at(panel, [(T0 + i, str(3100 + i)) for i in range(20)])
    drawn(qtbot, panel, 20)
    view_box = panel.price_plot.vb
    qtbot.waitUntil(lambda: view_box.viewRange()[1][0] > 3000)
    assert panel.readout.text() == ""

    target = panel.plots.mapFromScene(view_box.sceneBoundingRect().center())
    moved = hover(qtbot, panel, target, "price")
    expected = view_box.mapSceneToView(panel.plots.mapToScene(moved))
    text = panel.readout.text()
    assert text == panel.readout_text(expected.x(), expected.y(), "price")
    when = datetime.fromtimestamp(expected.x()).strftime("%Y-%m-%d %H:%M:%S")
    assert text.startswith(when)
    price = D(text.split("price ")[1].replace(",", ""))
    assert D(3100) <= price <= D(3120) and price == price.quantize(D("0.01"))
    assert panel._vlines[panel.price_plot].isVisible()
    assert panel._vlines[panel.price_plot].value() == pytest.approx(expected.x())

    spread_point = panel.plots.mapFromScene(panel.spread_plot.vb.sceneBoundingRect().center())
    hover(qtbot, panel, spread_point, "spread")
    assert not panel._hlines[panel.price_plot].isVisible()


def test_history_survives_a_panel_rebuild_in_private_files(
    qtbot: QtBot, offline: PanelContext, settings: QSettings, tmp_path: Path
) -> None:
    folder = history_folder(settings, offline.bridge.environment)
    assert folder.is_relative_to(tmp_path) and folder.name == "sandbox"
    first = ChartPanel(offline)
    qtbot.addWidget(first)
    # Three ticks a second for a minute: one sample a second is kept, the last of each.
    for i in range(180):
        mid = 3100 + i
        feed_at(first, [(T0 + i / 3, str(mid))])
    first.add_ticks({"BTC/USD": top("BTC/USD", "90000", "90010")}, at=T0 + 60)
    run(qtbot, first.stop_feed())

    path = folder / file_name("ETH/USD")
    assert path.read_bytes()[: len(MAGIC)] == MAGIC
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(folder.parent.stat().st_mode) == 0o700
    assert (folder / file_name("BTC/USD")).exists()

    second = ChartPanel(offline)
    qtbot.addWidget(second)
    drawn(qtbot, second, 60)
    x, mid = second.curves["mid"].xData, second.curves["mid"].yData
    assert x.tolist() == [T0 + i + 2 / 3 for i in range(60)]
    assert mid.tolist() == pytest.approx([3100 + 3 * i + 2 for i in range(60)])
    assert second.curves["spread"].yData == pytest.approx([0.48] * 60)
    # New ticks follow the stored ones, the line broken over the time nothing was recorded.
    feed_at(second, [(T0 + 100, "3300")])
    drawn(qtbot, second, 61)
    mid = second.curves["mid"].yData
    assert len(mid) == 62 and np.isnan(mid[60]) and mid[61] == 3300
    assert second.curves["mid"].opts["connect"] == "finite"
    # The other pair's history is read when it is first shown.
    offline.bridge.select_pair("BTC/USD")
    qtbot.waitUntil(
        lambda: second.curves["bid"].yData is not None and second.curves["bid"].yData[0] == 90000
    )


def test_history_is_bounded_and_reads_what_is_still_queued(tmp_path: Path) -> None:
    store = MidHistory(tmp_path / "h", max_points=100)
    for i in range(400):
        store.record("ETH/USD", T0 + i, 1.0 + i, 2.0 + i)
        if i % 50 == 49:
            future = store.flush()
            assert future is not None
            future.result()
    # The file was cut back to the latest 100 when it passed 150, and reading bounds it too.
    data = store.read("ETH/USD")
    assert data.shape == (3, 100) and data[0, -1] == T0 + 399 and data[0, 0] == T0 + 300
    size = (tmp_path / "h" / file_name("ETH/USD")).stat().st_size
    assert size <= len(MAGIC) + 150 * 24
    # A torn last record (a crash mid-write) is left out.
    path = tmp_path / "h" / file_name("ETH/USD")
    with path.open("ab") as torn:
        torn.write(b"\x01\x02\x03")
    store.close()
    again = MidHistory(tmp_path / "h", max_points=100)
    assert again.read("ETH/USD")[0, -1] == T0 + 399
    again.close()


def test_ring_buffer_extend_matches_appends_one_by_one() -> None:
    for capacity, first, block in [(5, 0, 3), (5, 3, 4), (5, 2, 12), (4, 9, 4)]:
        one, many = RingBuffer(capacity, 2), RingBuffer(capacity, 2)
        for n in range(first):
            one.append((n, -n))
            many.append((n, -n))
        samples = np.array([[first + n for n in range(block)], [-first - n for n in range(block)]])
        for column in samples.T:
            one.append(column.tolist())
        many.extend(samples.astype(np.float64))
        assert many.window().tolist() == one.window().tolist()
        assert many.appended == one.appended
        many.append((99, -99))
        one.append((99, -99))
        assert many.window().tolist() == one.window().tolist()
    with pytest.raises(ValueError, match="block of 2 rows"):
        RingBuffer(3, 2).extend(np.zeros((3, 1)))


def plot_width(qtbot: QtBot, panel: ChartPanel) -> int:
    """The price plot's width in pixels, once a first sample showed the plots and laid them out
    (the sample at ``T0``, mid 3100)."""
    feed_at(panel, [(T0, "3100")])
    qtbot.waitUntil(lambda: panel.plots.isVisible() and panel.price_plot.vb.width() > 300)
    return int(panel.price_plot.vb.width())


def test_the_lines_keep_two_points_a_pixel_column_however_long_the_history(
    qtbot: QtBot, offline: PanelContext
) -> None:
    """Memory: the curves (and what pyqtgraph builds from them each frame) are bounded by the
    plot's width, in storage made once; the highest and lowest mids are still drawn."""
    panel = shown(qtbot, offline, 700, 400)
    width = plot_width(qtbot, panel)
    count = 4 * width
    feed_at(panel, [(T0 + i, str(3100 + i % 7)) for i in range(1, count)])
    drawn(qtbot, panel, count)
    first = panel.curves["mid"].yData
    assert len(first) <= count / 2 + 1  # two points a pixel column at most, and the last
    feed_at(panel, [(T0 + count + i, str(3100 + i % 7)) for i in range(count)])
    feed_at(panel, [(T0 + 2 * count, "3200")])
    drawn(qtbot, panel, 2 * count + 1)
    width = int(panel.price_plot.vb.width())  # the axes may have widened: drawn anew then
    # two points a pixel column, and the last sample
    qtbot.waitUntil(lambda: len(panel.curves["mid"].yData) <= 2 * width + 1 <= 2 * MAX_BUCKETS + 1)
    mid = panel.curves["mid"].yData
    assert np.shares_memory(mid, first)  # the same arrays: nothing new the size of the history
    assert np.nanmax(mid) == 3200 and np.nanmin(mid) == 3100


def test_a_zoomed_range_is_drawn_in_full_and_following_the_data_comes_back(
    qtbot: QtBot, offline: PanelContext
) -> None:
    panel = shown(qtbot, offline, 700, 400)
    count = 4 * plot_width(qtbot, panel)
    feed_at(panel, [(T0 + i, str(3100 + i % 7)) for i in range(1, count)])
    drawn(qtbot, panel, count)
    view = panel.price_plot.vb
    view.setXRange(T0 + 100, T0 + 150, padding=0)  # what a wheel zoom ends in
    drawn(qtbot, panel, 52)  # the range and one sample beyond each edge, every one drawn
    assert panel.curves["mid"].xData.tolist() == [T0 + i for i in range(99, 151)]
    panel.price_plot.autoBtnClicked()  # the plot's "A" button: follow the data again
    drawn(qtbot, panel, count)


def test_only_the_pairs_shown_lately_keep_every_tick_in_memory(
    qtbot: QtBot, offline: PanelContext, tmp_path: Path
) -> None:
    """Five hundred watched pairs: each is recorded a second at a time on disk, but only the
    shown pair and the few shown before it hold a ring buffer (one each was 1.5 MB: 775 MB at
    508 pairs)."""
    panel = ChartPanel(offline, capacity=1000, history=MidHistory(tmp_path / "mids"))
    qtbot.addWidget(panel)
    pairs = [f"C{n:03d}/USD" for n in range(500)]
    for second in range(3):
        panel.add_ticks({pair: top(pair, "100.00", "100.10") for pair in pairs}, at=1000.0 + second)
    kept = [pair for pair in pairs if panel.buffer(pair) is not None]
    assert kept == []  # ETH/USD is shown; none of these was
    for pair in pairs[:6]:  # the trader looks at six of them in turn
        panel.set_pair(pair)
    kept = [pair for pair in pairs if panel.buffer(pair) is not None]
    assert kept == pairs[2:6] and len(kept) == KEPT_PAIRS
    shown = panel.buffer(pairs[5])
    assert shown is not None and len(shown) == 3  # its three seconds, read back from the history
    panel.set_pair(pairs[0])  # let go a moment ago: read back again, whole
    again = panel.buffer(pairs[0])
    assert again is not None and len(again) == 3
