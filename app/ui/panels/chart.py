"""Live chart of the selected pair: bid, ask and mid over time (or candles of the mid), the
spread below on a linked clock-time axis, and a crosshair with a time/price readout.

Data: every ``topOfBook`` tick carries all watched pairs; each pair gets its own ring buffer
(``RingBuffer``, ``capacity`` samples, timestamped with the wall-clock time the tick arrived),
so switching the selected pair shows that pair's history at once instead of starting empty.
Memory is bounded: ``capacity`` × 2 × 5 float64 per watched pair (1.6 MB at 20,000).

History across restarts: every tick is also given to a ``MidHistory`` (app/services/
mid_history.py: one append-only binary file per pair, one sample a second, the latest 24 h,
0600 files in a 0700 folder), flushed to its writer thread every ``FLUSH_MS`` and at quit. A
pair's stored history is read into its ring the first time the pair is shown; the lines
break over pauses in the ticks (``PeakDisplay``). The folder is ``chart-history/
<environment>`` in the user data directory (beside the settings file when the settings live
elsewhere, e.g. ``TRADETERM_CONFIG_DIR`` or a test's folder).

Views: "Line" draws every tick; "1 s" … "1 h" draw candles of the mid per bucket
(``candles()``: open, high, low, close of the ticks in it), hollow when the close is at or above
the open, filled when below — in the neutral text colour, since blue and orange mean bid and ask.

Axes readable at any dock size: the price and spread axes place at most one label per two text
heights and never scale or SI-prefix a value (a 0.48 spread reads 0.48); the time axis reads
clock time (HH:MM:SS, HH:MM from one-minute spacing) with at most one label per label width.
Until the shown pair has data the plots are replaced by "Waiting for prices…" (no placeholder
ticks). The legend is a row of its own above the plots, never over a line.

Drawing: ticks only mark the chart dirty; the first new sample of the shown pair asks the
application's frame clock (``app.ui.frame_clock``) for a frame ``frame_ms`` (33 ms, ~30 frames
a second) later, which calls ``setData`` once for the whole burst; nothing runs while no ticks
of the shown pair arrive, and nothing is drawn while the chart sits hidden in a window (a tab
behind the depth, a closed dock): it draws once when shown again (issue 16).
1 px cosmetic pens, no antialiasing (notes: pyqtgraph). The curves get the samples of the shown
range (all of them, or the zoomed range) reduced to at most two per pixel column
(``app.ui.peak_display``, storage made once for ``MAX_BUCKETS`` columns): what pyqtgraph builds
per frame is bounded by the plot's width, not the history, so memory stays flat (issue 16).
Candles are recorded into a ``QPicture`` only when a finished bucket changes; the open bucket is
painted on its own.

Colours: bid and ask in the palette's bid (blue) and ask (orange), the mid and the crosshair in
its neutral grey, the spread in its own hue, on the theme's plot background with its text
colour on the axes and legend — all from the palette in force, re-applied on a theme switch.

While the top-of-book feed is stale (offline, failing, too old: ``bridge.freshness``) the
title is greyed and says "stale since HH:MM:SS", and the curves are drawn in the stale grey
(issue 12); both come back with fresh data.

Fills of parent orders (the execution engine's children, ``bridge.algos``) of the shown pair are
markers on the price plot: a triangle up for a buy, down for a sell (in the ask and bid colours,
so shape and colour both tell), at the child's average price and the time it was sent. A change
the engine announces for a parent of the shown pair marks them dirty; they are redrawn on the
chart's next frame, with the lines.

Prices are Decimal everywhere else in the terminal; here, and only in ``plot_sample``, they
become floats, because pixels are not money.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import platformdirs
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, QSettings, Qt, QTimer
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QPainter,
    QPen,
    QPicture,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.domain.display import DASH
from app.domain.records import TopOfBook
from app.services.mid_history import MidHistory
from app.services.session import Environment
from app.ui.fonts import number_font
from app.ui.frame_clock import shared_frame_clock
from app.ui.freshness import Freshness
from app.ui.palette import TradePalette, current_palette, follow_palette, stale_css
from app.ui.panels.base import PanelContext
from app.ui.peak_display import PeakDisplay
from app.ui.ring_buffer import FloatArray, RingBuffer
from app.ui.widgets.live_text import TextHost

CAPACITY = 20_000
#: The most pixel columns the lines are reduced to (two points each): a plot 2,048 px wide.
MAX_BUCKETS = 2048
FRAME_MS = 33
#: The text the title's size hint is measured on (its text changes on every tick).
TITLE_SAMPLE = "BTC/USD   bid 00,000.00   ask 00,000.00   spread 0.00"
#: How often the ticks recorded for the history go to its writer thread.
FLUSH_MS = 5_000
#: The shortest pause in ticks that breaks the lines, in seconds.
GAP_MIN = 5.0

#: Ring buffer columns.
TIME, BID, ASK, MID, SPREAD = range(5)
SERIES = {"bid": BID, "ask": ASK, "mid": MID}
#: Opacity (0–1) of the grid lines, drawn in the axis colour.
GRID_ALPHA = 0.15
#: Size of a fill marker, pixels.
MARKER_SIZE = 11
#: The view choices: label and candle length in seconds (0: a line of every tick).
TIMEFRAMES: dict[str, int] = {
    "Line": 0,
    "1 s": 1,
    "1 min": 60,
    "5 min": 300,
    "15 min": 900,
    "1 h": 3600,
}
VIEW_KEY = "chart/view"
WAITING = "Waiting for prices…"
#: Nice tick spacings of the time axis, in seconds.
CLOCK_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600)


def series_colours(palette: TradePalette) -> dict[str, QColor]:
    """The colour of each plotted series in ``palette``."""
    return {"bid": palette.bid, "ask": palette.ask, "mid": palette.mid, "spread": palette.spread}


def plot_sample(at: float, top: TopOfBook) -> tuple[float, float, float, float, float]:
    """The one place a Decimal price becomes a float: plot coordinates for one tick
    (time, bid, ask, mid, spread). Never use the result as a price."""
    return (at, float(top.bid), float(top.ask), float(top.mid), float(top.spread))


def cursor_value(y: float) -> Decimal | None:
    """The mouse's y position as a Decimal for the readout (a cursor position, not a price
    anyone trades at); None off any sensible scale."""
    try:
        value = Decimal(repr(y))
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def history_folder(settings: QSettings, environment: Environment) -> Path:
    """Where the chart history of ``environment`` lives: the user data directory, or beside
    the settings file when the settings are not the user's own (an override, a test)."""
    settings_dir = Path(settings.fileName()).parent
    own = Path(platformdirs.user_config_dir("tradeterm", appauthor=False))
    root = Path(platformdirs.user_data_dir("tradeterm", appauthor=False))
    base = root if settings_dir == own else settings_dir
    if environment.sandbox:
        name = "sandbox"  # its port changes every start; its prices are its own
    else:
        where = urlsplit(environment.base_url)
        name = "".join(c if c.isalnum() or c in ".-" else "_" for c in where.netloc) or "service"
    return base / "chart-history" / name


def _pen(colour: QColor) -> QPen:
    """1 px, cosmetic (same width at any zoom): wider pens draw 7–9× slower."""
    pen = QPen(colour)
    pen.setWidth(1)
    pen.setCosmetic(True)
    return pen


def _nice_step(raw: float) -> float:
    """The smallest of 1, 2, 5 × 10^k at least ``raw``."""
    power = 10.0 ** math.floor(math.log10(raw))
    for factor in (1.0, 2.0, 5.0, 10.0):
        if factor * power >= raw * (1 - 1e-9):
            return factor * power
    return 10.0 * power


def _nice_floor(raw: float) -> float:
    """The largest of 1, 2, 5 × 10^k at most ``raw``."""
    power = 10.0 ** math.floor(math.log10(raw))
    for factor in (5.0, 2.0, 1.0):
        if factor * power <= raw * (1 + 1e-9):
            return factor * power
    return power


class GroupedAxis(pg.AxisItem):  # type: ignore[misc]  # pyqtgraph is untyped
    """A value axis written as the terminal writes numbers (``90,995``; pyqtgraph's own:
    ``90995``, ``9.1e+04``, or ``480`` with a hidden ×0.001), with one tick level spaced two
    text heights apart at least, so labels never stack however short the plot."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        #: Axes stacked with this one: all take the widest one's width, so the plots' time
        #: axes line up.
        self.partners: list[GroupedAxis] = []
        super().__init__(*args, **kwargs)
        self.enableAutoSIPrefix(False)

    def _updateWidth(self) -> None:
        """pyqtgraph's width, from the widest labels of this axis and its partners."""
        if not self.isVisible() or not self.style["showValues"]:
            super()._updateWidth()
            return
        widest = max([self.textWidth, *(p.textWidth for p in self.partners)])
        width = widest + self.style["tickTextOffset"][0] + max(0, self.style["tickLength"])
        if width != self.minimumWidth():
            self.setMaximumWidth(width)
            self.setMinimumWidth(width)
            self.picture = None
            for partner in self.partners:
                partner._updateWidth()

    def tickSpacing(self, minVal: float, maxVal: float, size: float) -> list[tuple[float, float]]:
        span = maxVal - minVal
        if self.logMode or not math.isfinite(span) or span <= 0 or size <= 0:
            return list(super().tickSpacing(minVal, maxVal, size))
        slots = max(1, int(size // (2 * _text_height(self))))
        step = _nice_step(span / slots)
        if step > span:  # one slot: the largest nice step that still puts a tick in view
            step = _nice_floor(span)
        return [(step, 0.0)]

    def tickValues(
        self, minVal: float, maxVal: float, size: float
    ) -> list[tuple[float, list[float]]]:
        """pyqtgraph's values, thinned to labels at least 1.5 text heights apart."""
        levels = list(super().tickValues(minVal, maxVal, size))
        span = abs(maxVal - minVal)
        if not levels or span <= 0 or size <= 0:
            return levels
        step, values = levels[0]
        height = _text_height(self) * span / size  # value units per text height
        low, high = min(minVal, maxVal) + 0.6 * height, max(minVal, maxVal) - 0.6 * height
        kept: list[float] = []
        for value in sorted(values):
            if low <= value <= high and (not kept or value - kept[-1] >= 1.5 * height):
                kept.append(value)
        if not kept and low < high:
            # A very short plot: one label, the roundest value that fits whole.
            step = _nice_floor(span)
            for _ in range(40):
                value = round((low + high) / 2 / step) * step
                if low <= value <= high:
                    return [(step, [value])]
                step = _nice_floor(step * 0.99)
        return [(step, kept)]

    def updateAutoSIPrefix(self) -> None:
        """Never scale the values (pyqtgraph would show 480 and a ×0.001 for 0.48)."""
        self.autoSIPrefixScale = 1.0
        self.labelUnitPrefix = ""
        self._updateLabel()

    def tickStrings(self, values: Sequence[float], scale: float, spacing: float) -> list[str]:
        if self.logMode or spacing * scale <= 0:
            return list(super().tickStrings(values, scale, spacing))
        places = max(0, math.ceil(-math.log10(spacing * scale) - 1e-9))
        return [f"{value * scale:,.{places}f}" for value in values]


def _text_height(axis: pg.AxisItem) -> float:
    """The height of one tick label of ``axis`` in pixels."""
    return float(QFontMetricsF(axis.style.get("tickFont") or QFont()).height())


def _text_width(axis: pg.AxisItem, text: str) -> float:
    """The width of ``text`` as a tick label of ``axis`` in pixels."""
    return float(QFontMetricsF(axis.style.get("tickFont") or QFont()).horizontalAdvance(text))


class ClockAxis(pg.AxisItem):  # type: ignore[misc]  # pyqtgraph is untyped
    """Epoch seconds as clock time: ``HH:MM:SS``, or ``HH:MM`` from one-minute spacing, one
    tick level at least a label and a gap apart."""

    def tickSpacing(self, minVal: float, maxVal: float, size: float) -> list[tuple[float, float]]:
        span = maxVal - minVal
        if not math.isfinite(span) or span <= 0 or size <= 0:
            return []
        label = _text_width(self, "00:00:00") * 1.6
        slots = max(1.0, size / label)
        raw = span / slots
        step = next((s for s in CLOCK_STEPS if s >= raw), None)
        if step is None:
            step = CLOCK_STEPS[-1] * math.ceil(raw / CLOCK_STEPS[-1])
        # Ticks on local clock boundaries (whole minutes, hours): local = epoch + the zone's
        # offset, so a tick sits where (value + offset) is a multiple of the step.
        try:
            zone = datetime.fromtimestamp(minVal).astimezone().utcoffset()
        except (OverflowError, OSError, ValueError):
            zone = None
        shift = zone.total_seconds() if zone is not None else 0.0
        return [(float(step), float(-shift % step))]

    def tickValues(
        self, minVal: float, maxVal: float, size: float
    ) -> list[tuple[float, list[float]]]:
        levels = []
        for step, offset in self.tickSpacing(minVal, maxVal, size):
            first = math.ceil((minVal - offset) / step) * step + offset
            count = int((maxVal - first) // step) + 1
            levels.append((step, [first + i * step for i in range(max(0, count))]))
        return levels

    def tickStrings(self, values: Sequence[float], scale: float, spacing: float) -> list[str]:
        shape = "%H:%M" if spacing >= 60 else "%H:%M:%S"
        texts = []
        for value in values:
            try:
                texts.append(datetime.fromtimestamp(value).strftime(shape))
            except (OverflowError, OSError, ValueError):
                texts.append("")
        return texts


@dataclass(frozen=True)
class Candles:
    """Open, high, low, close of the mid per bucket; ``start`` is each bucket's first second."""

    seconds: int
    start: FloatArray
    open: FloatArray
    high: FloatArray
    low: FloatArray
    close: FloatArray

    def __len__(self) -> int:
        return len(self.start)


def candles(times: FloatArray, mids: FloatArray, seconds: int) -> Candles:
    """The ticks (``times`` ascending, epoch seconds) grouped into ``seconds``-long buckets."""
    empty = np.zeros(0)
    if len(times) == 0:
        return Candles(seconds, empty, empty, empty, empty, empty)
    buckets = np.floor(times / seconds)
    firsts = np.flatnonzero(np.diff(buckets)) + 1
    starts = np.concatenate([[0], firsts]).astype(np.intp)
    ends = np.concatenate([firsts, [len(times)]]).astype(np.intp) - 1
    return Candles(
        seconds,
        buckets[starts] * seconds,
        mids[starts],
        np.maximum.reduceat(mids, starts),
        np.minimum.reduceat(mids, starts),
        mids[ends],
    )


class CandleItem(pg.GraphicsObject):  # type: ignore[misc]  # pyqtgraph is untyped
    """Candles drawn from a ``QPicture`` of the finished buckets, re-recorded only when one of
    them changes; the open (last) bucket is painted on its own each frame."""

    def __init__(self) -> None:
        super().__init__()
        self._candles: Candles | None = None
        self._picture = QPicture()
        self._pen = _pen(QColor("#d7dce2"))
        self.pictures = 0  # how many times the finished candles were recorded

    def set_colour(self, colour: QColor) -> None:
        self._pen = _pen(colour)
        self._record()
        self.update()

    def set_candles(self, new: Candles) -> None:
        old = self._candles
        self._candles = new
        same_finished = (
            old is not None
            and old.seconds == new.seconds
            and len(old) >= 1
            and len(new) >= 1
            and len(old) - 1 == len(new) - 1
            and all(
                np.array_equal(getattr(old, name)[:-1], getattr(new, name)[:-1])
                for name in ("start", "open", "high", "low", "close")
            )
        )
        if not same_finished:
            self.prepareGeometryChange()
            self._record()
        self.update()

    def _record(self) -> None:
        self._picture = QPicture()
        candles = self._candles
        if candles is None or len(candles) < 2:
            return
        painter = QPainter(self._picture)
        try:
            for i in range(len(candles) - 1):
                self._draw(painter, candles, i)
        finally:
            painter.end()
        self.pictures += 1

    def _draw(self, painter: QPainter, c: Candles, i: int) -> None:
        width = c.seconds * 0.7
        centre = float(c.start[i]) + c.seconds / 2
        low, high = float(c.low[i]), float(c.high[i])
        opened, closed = float(c.open[i]), float(c.close[i])
        painter.setPen(self._pen)
        painter.drawLine(QPointF(centre, low), QPointF(centre, high))
        body = QRectF(centre - width / 2, min(opened, closed), width, abs(closed - opened))
        painter.setBrush(QBrush(self._pen.color()) if closed < opened else Qt.BrushStyle.NoBrush)
        painter.drawRect(body)

    def paint(self, painter: QPainter, *_: Any) -> None:
        painter.drawPicture(0, 0, self._picture)
        if self._candles is not None and len(self._candles) > 0:
            self._draw(painter, self._candles, len(self._candles) - 1)

    def boundingRect(self) -> QRectF:
        c = self._candles
        if c is None or len(c) == 0:
            return QRectF()
        low, high = float(np.min(c.low)), float(np.max(c.high))
        return QRectF(
            float(c.start[0]), low, float(c.start[-1] + c.seconds - c.start[0]), high - low
        )


class ChartPanel(QWidget):
    def __init__(
        self,
        context: PanelContext,
        parent: QWidget | None = None,
        *,
        capacity: int = CAPACITY,
        frame_ms: int = FRAME_MS,
        history: MidHistory | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("chartPanel")
        self._context = context
        self._capacity = capacity
        self._buffers: dict[str, RingBuffer] = {}
        self._loaded: set[str] = set()
        self._last: dict[str, TopOfBook] = {}
        self._pair: str | None = context.bridge.selected_pair
        self._dirty = False
        self.redraws = 0
        #: How many samples the lines drawn last stand for (two points a pixel column at most).
        self.drawn_samples = 0
        self._candles: Candles | None = None
        self._spread_top = 0.0
        if history is None:
            history = MidHistory(history_folder(context.settings, context.bridge.environment))
        self.history = history
        # Close the store with the panel (the lambda holds the store, not the panel).
        self.destroyed.connect(lambda *_: history.close())

        mono = number_font()
        self.title = QLabel(self)
        self.title.setObjectName("chartTitle")
        self.title.setFont(mono)
        # A narrow dock (1366×768) shows the spread on a second line rather than cut to
        # "sprea"; its host relays the window out only when the number of lines changes.
        self.title.setWordWrap(True)
        self.readout = QLabel(self)
        self.readout.setObjectName("chartReadout")
        self.readout.setFont(mono)
        self.readout.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.view_choice = QComboBox(self)
        self.view_choice.setObjectName("chartView")
        self.view_choice.setToolTip("Line of every tick, or candles of the mid per timeframe")
        for label, seconds in TIMEFRAMES.items():
            self.view_choice.addItem(label, seconds)
        saved = context.settings.value(VIEW_KEY, "Line")
        self.view_choice.setCurrentIndex(max(0, self.view_choice.findText(str(saved))))

        self.plots = pg.GraphicsLayoutWidget(self)
        self.plots.setObjectName("chartPlots")
        self.plots.setAntialiasing(False)
        self.price_plot = self._time_plot(row=0)
        self.spread_plot = self._time_plot(row=1)
        self.plots.ci.layout.setRowStretchFactor(0, 3)
        self.plots.ci.layout.setRowStretchFactor(1, 1)
        self.spread_plot.setXLink(self.price_plot)
        price_axis, spread_axis = (p.getAxis("left") for p in (self.price_plot, self.spread_plot))
        price_axis.partners.append(spread_axis)
        spread_axis.partners.append(price_axis)
        self.price_plot.getAxis("bottom").setStyle(showValues=False)
        self.price_plot.showGrid(x=True, y=True, alpha=GRID_ALPHA)
        self.spread_plot.showGrid(x=True, y=True, alpha=GRID_ALPHA)

        self.curves: dict[str, pg.PlotDataItem] = {}
        for name in SERIES:
            self.curves[name] = self.price_plot.plot(antialias=False, name=name, connect="finite")
        self.curves["spread"] = self.spread_plot.plot(
            antialias=False, name="spread", connect="finite"
        )
        # The curves get at most two points per pixel column (``PeakDisplay``), so pyqtgraph's
        # own clipping and downsampling have nothing left to do.
        self._display = PeakDisplay(5, MAX_BUCKETS)
        self._clipped = False  # the last drawing was of a zoomed range, not all the data
        self._drawn_width = MAX_BUCKETS  # the pixel columns the lines were last reduced to
        price_view = self.price_plot.getViewBox()
        price_view.sigXRangeChanged.connect(self._range_changed)
        price_view.sigResized.connect(self._resized)
        self.candle_item = CandleItem()
        self.candle_item.hide()
        self.price_plot.addItem(self.candle_item)

        self._vlines = {
            plot: pg.InfiniteLine(angle=90, movable=False)
            for plot in (self.price_plot, self.spread_plot)
        }
        self._hlines = {
            plot: pg.InfiniteLine(angle=0, movable=False)
            for plot in (self.price_plot, self.spread_plot)
        }
        for plot in (self.price_plot, self.spread_plot):
            for line in (self._vlines[plot], self._hlines[plot]):
                line.hide()
                plot.addItem(line, ignoreBounds=True)
        self.plots.scene().sigMouseMoved.connect(self._mouse_moved)
        self.fill_markers = pg.ScatterPlotItem(pxMode=True, size=MARKER_SIZE)
        self.fill_markers.setObjectName("chartFillMarkers")
        self.price_plot.addItem(self.fill_markers)
        #: What the markers show: (time, price, side) of each child fill of the shown pair.
        self.marker_points: list[tuple[float, float, str]] = []
        self._markers_dirty = True

        self.legend = QLabel(self)
        self.legend.setObjectName("chartLegend")
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.waiting = QLabel(WAITING, self)
        self.waiting.setObjectName("chartWaiting")
        self.waiting.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.waiting)
        self.stack.addWidget(self.plots)

        self.freshness = context.bridge.freshness(context.bridge.top_of_book_feed, self)
        self.freshness.changed.connect(self._freshness_changed)
        self._palette = current_palette()
        self._paint_colours(self._palette)
        follow_palette(self.set_palette)

        self._frames = shared_frame_clock()
        self._frame_seconds = frame_ms / 1000
        self._redraw_asked = False
        self._asked_at = 0.0
        self._frames.listen(self._on_frame)
        self._flush_timer = QTimer(self)
        self._flush_timer.setInterval(FLUSH_MS)
        self._flush_timer.timeout.connect(self._flush)
        self._flush_timer.start()

        top_row = QHBoxLayout()
        top_row.setContentsMargins(4, 0, 4, 0)
        # hosted: a new price in the title repaints it and never relayouts the window
        top_row.addWidget(TextHost(self.title, TITLE_SAMPLE, self), 1)
        top_row.addWidget(self.view_choice)
        legend_row = QHBoxLayout()
        legend_row.setContentsMargins(4, 0, 4, 0)
        legend_row.addWidget(self.legend)
        legend_row.addWidget(self.readout, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(top_row)
        layout.addLayout(legend_row)
        layout.addWidget(self.stack, 1)

        context.bridge.topOfBook.connect(self.add_ticks)
        context.bridge.algoChanged.connect(self._algo_changed)
        context.bridge.selectionChanged.connect(self.set_pair)
        self.view_choice.currentIndexChanged.connect(self._view_changed)
        self.view_choice.activated.connect(self._remember_view)
        if self._pair is not None:
            self._load(self._pair)
        self._update_title()
        self._view_changed()

    def _time_plot(self, row: int) -> Any:
        """One plot of the stack: clock times along the bottom, grouped prices on the left."""
        return self.plots.addPlot(
            row=row,
            col=0,
            axisItems={
                "bottom": ClockAxis(orientation="bottom"),
                "left": GroupedAxis(orientation="left"),
            },
        )

    # -- colours --------------------------------------------------------------------------------

    @property
    def trade_palette(self) -> TradePalette:
        """The trading palette the chart is drawn in (``palette()`` is QWidget's)."""
        return self._palette

    def set_palette(self, palette: TradePalette) -> None:
        """A theme switch: the same data in the new colours."""
        if palette != self._palette:
            self._palette = palette
            self._paint_colours(palette)

    def _paint_colours(self, palette: TradePalette) -> None:
        """Pens (1 px, cosmetic), background, axes, grid and legend from ``palette``."""
        self.plots.setBackground(palette.background)
        stale = self.freshness.stale
        for name, colour in series_colours(palette).items():
            self.curves[name].setPen(_pen(palette.stale if stale else colour))
        self.candle_item.set_colour(palette.stale if stale else palette.text)
        self._markers_dirty = True
        self.title.setStyleSheet(stale_css(stale, palette))
        for plot in (self.price_plot, self.spread_plot):
            for side in ("left", "bottom"):
                axis = plot.getAxis(side)
                axis.setPen(_pen(palette.mid))  # the axis line, ticks and grid
                axis.setTextPen(_pen(palette.text))
        cross = _pen(palette.mid)
        cross.setStyle(Qt.PenStyle.DashLine)
        for line in (*self._vlines.values(), *self._hlines.values()):
            line.setPen(cross)
        self._update_legend()

    def legend_entries(self) -> list[tuple[str, QColor]]:
        """What the legend names, in the colour it draws each: the lines, or the candles."""
        palette = self._palette
        colours = series_colours(palette)
        if self.timeframe:
            label = f"mid, {self.view_choice.currentText()} candles"
            return [(label, palette.text), ("spread", colours["spread"])]
        return [(name, colours[name]) for name in ("bid", "ask", "mid", "spread")]

    def _update_legend(self) -> None:
        """A row of its own above the plots (pyqtgraph's legend sat on the lines)."""
        text = "&nbsp;&nbsp;".join(
            f'<span style="color:{colour.name()}">&#8212;&nbsp;{name}</span>'
            for name, colour in self.legend_entries()
        )
        if self.legend.text() != text:
            self.legend.setText(text)

    def _freshness_changed(self, freshness: Freshness) -> None:
        self.title.setToolTip(freshness.reason if freshness.stale else "")
        self._paint_colours(self._palette)
        self._update_title()

    # -- data -----------------------------------------------------------------------------------

    @property
    def pair(self) -> str | None:
        return self._pair

    @property
    def timeframe(self) -> int:
        """Seconds per candle, 0 for the line of every tick."""
        return int(self.view_choice.currentData())

    def buffer(self, pair: str) -> RingBuffer | None:
        return self._buffers.get(pair)

    def add_ticks(self, tops: dict[str, TopOfBook], at: float | None = None) -> None:
        """One poll of every watched pair, received at ``at`` (default: now, epoch seconds)."""
        now = time.time() if at is None else at
        for pair, top in tops.items():
            buffer = self._buffers.get(pair)
            if buffer is None:
                buffer = self._buffers[pair] = RingBuffer(self._capacity, 5)
            sample = plot_sample(now, top)
            buffer.append(sample)
            self.history.record(pair, now, sample[BID], sample[ASK])
            self._last[pair] = top
        if self._pair is not None and self._pair in tops:
            self._schedule()

    def set_pair(self, pair: str) -> None:
        """Show ``pair``'s history (kept while it was not selected) and follow its ticks."""
        if pair == self._pair:
            return
        self._pair = pair
        self._markers_dirty = True
        self._load(pair)
        self._schedule()

    def _load(self, pair: str) -> None:
        """Put ``pair``'s stored history before the ticks already received (once per pair)."""
        if pair in self._loaded:
            return
        self._loaded.add(pair)
        stored = self.history.read(pair)
        live = self._buffers.get(pair)
        recent = np.array(live.window()) if live is not None else np.zeros((5, 0))
        if recent.shape[1]:
            stored = stored[:, stored[0] < recent[TIME][0]]
        if stored.shape[1] == 0:
            return
        bid, ask = stored[1], stored[2]
        older = np.vstack([stored[0], bid, ask, (bid + ask) / 2, ask - bid])
        ring = RingBuffer(self._capacity, 5)
        ring.extend(np.concatenate([older, recent], axis=1))
        self._buffers[pair] = ring
        self._schedule()

    def _flush(self) -> None:
        self.history.flush()

    async def stop_feed(self) -> None:
        """At quit: the ticks recorded since the last flush go to disk (``OwnsFeed``)."""
        self._flush_timer.stop()
        self.history.close()

    def _view_changed(self, *_: object) -> None:
        seconds = self.timeframe
        for name in SERIES:
            self.curves[name].setVisible(seconds == 0)
        self.candle_item.setVisible(seconds > 0)
        self._candles = None
        self._update_legend()
        self._schedule()

    def _remember_view(self, *_: object) -> None:
        """The trader's choice, for the next start."""
        self._context.settings.setValue(VIEW_KEY, self.view_choice.currentText())

    def _schedule(self) -> None:
        self._dirty = True
        if self._redraw_asked or (self.parentWidget() is not None and not self.isVisible()):
            return  # hidden in a window: drawn when shown (showEvent)
        self._redraw_asked = True
        self._asked_at = self._frames.now()
        self._frames.request(self._frame_seconds)

    def _on_frame(self, _now: float) -> None:
        if self._redraw_asked and self._frames.now() >= self._asked_at + self._frame_seconds:
            self._redraw_asked = False
            self._redraw()

    def showEvent(self, event: QShowEvent) -> None:
        """Shown again: what came while hidden is drawn once."""
        super().showEvent(event)
        if self._dirty:
            self._schedule()

    def redraw_pending(self) -> bool:
        """A frame is scheduled (new samples of the shown pair wait to be drawn)."""
        return self._redraw_asked

    def _algo_changed(self, parent_id: str) -> None:
        """A parent changed: its fills are redrawn with the next frame if it trades this pair."""
        engine = self._context.bridge.algos
        parent = None if engine is None else engine.parents.get(parent_id)
        if parent is not None and parent.spec.pair == self._pair:
            self._markers_dirty = True
            self._schedule()

    def _draw_markers(self) -> None:
        self._markers_dirty = False
        engine = self._context.bridge.algos
        points: list[tuple[float, float, str]] = []
        if engine is not None and self._pair is not None:
            offset = self._context.bridge.clock_offset
            for parent in engine.parents.values():
                spec = parent.spec
                if spec.pair != self._pair:
                    continue
                for child in parent.children:
                    if child.status != "filled" or not child.filled or not child.received:
                        continue
                    if spec.side == "buy":  # QUOTE spent per BASE bought
                        price = child.filled / child.received
                    else:
                        price = child.received / child.filled
                    # when it executed (the service's word), else when it was sent
                    at = ((child.filled_at or child.sent_at) - offset).timestamp()
                    points.append((at, float(price), spec.side))  # pixels are not money
        self.marker_points = points
        palette = self._palette
        self.fill_markers.setData(
            [
                {
                    "pos": (at, price),
                    "symbol": "t1" if side == "buy" else "t",
                    "brush": pg.mkBrush(palette.ask if side == "buy" else palette.bid),
                    "pen": _pen(palette.text),
                }
                for at, price, side in points
            ]
        )

    def _redraw(self) -> None:
        if not self._dirty:
            return
        self._dirty = False
        self.redraws += 1
        if self._markers_dirty:
            self._draw_markers()
        buffer = self._buffers.get(self._pair) if self._pair else None
        if buffer is None or len(buffer) == 0:
            self.drawn_samples = 0
            for curve in self.curves.values():
                curve.setData([], [])
            self.candle_item.set_candles(candles(np.zeros(0), np.zeros(0), 1))
            self.stack.setCurrentWidget(self.waiting)
        else:
            data = buffer.window()  # a view: nothing the size of the history is copied
            # What is drawn: the shown range at two points per pixel column, in the display's
            # own storage; pyqtgraph keeps these arrays (and re-reads them when the view
            # moves), and they change only here, right before setData.
            shown, width = self._shown(data)
            self.drawn_samples = shown.shape[1]
            lines = self._display.reduce(shown, width, self._gap())
            x = lines[TIME]
            seconds = self.timeframe
            if seconds:
                self._candles = candles(data[TIME], data[MID], seconds)
                self.candle_item.set_candles(self._candles)
            for name, column in SERIES.items():
                if seconds:
                    self.curves[name].setData([], [])
                else:
                    self.curves[name].setData(x, lines[column])
            self.curves["spread"].setData(x, lines[SPREAD])
            self._fit_spread(float(np.max(data[SPREAD])))
            self.stack.setCurrentWidget(self.plots)
        self._update_title()

    def _shown(self, data: FloatArray) -> tuple[FloatArray, int]:
        """The samples in the time range on screen (all of them while the plot follows the
        data; the zoomed range, one sample beyond each edge, once the trader zoomed or panned),
        and how many pixel columns they are drawn in."""
        view = self.price_plot.getViewBox()
        self._clipped = not view.autoRangeEnabled()[0]
        if self._clipped and data.shape[1]:
            low, high = view.viewRange()[0]
            first, last = np.searchsorted(data[TIME], (low, high))
            data = data[:, max(0, int(first) - 1) : int(last) + 1]
        self._drawn_width = self._plot_width()
        return data, self._drawn_width

    def _plot_width(self) -> int:
        """Pixel columns of the plot; while the plots are not shown (the waiting text, a
        panel never shown) as many as the display holds."""
        width = int(self.price_plot.getViewBox().width()) if self.plots.isVisible() else 0
        return width if width > 0 else self._display.max_buckets

    def _resized(self, *_: object) -> None:
        """A wider or narrower plot: drawn anew when it changes what is drawn (the lines were
        reduced to the old width, or are too many for the new one)."""
        width = self._plot_width()
        if width != self._drawn_width and self.drawn_samples > 2 * min(width, self._drawn_width):
            self._schedule()

    def _range_changed(self, *_: object) -> None:
        """Zoomed or panned (or back to following the data): the shown range is drawn anew."""
        if self._clipped or not self.price_plot.getViewBox().autoRangeEnabled()[0]:
            self._schedule()

    def _gap(self) -> float:
        """Seconds without a tick after which the lines break (the terminal was closed or the
        feed was failing): ten polls, at least five seconds."""
        return max(GAP_MIN, 10 * self._context.bridge.top_of_book_interval)

    def _fit_spread(self, widest: float) -> None:
        """The spread's axis from zero to a quarter above its widest: a steady spread reads
        as its size (0 … 0.6 around 0.48), not as noise magnified around it."""
        top = widest * 1.25 if widest > 0 else 1.0
        if top != self._spread_top:
            self._spread_top = top
            self.spread_plot.setYRange(0.0, top, padding=0)

    def _update_title(self) -> None:
        if self._pair is None:
            text = "No pair selected"
        else:
            top = self._last.get(self._pair)
            price = self._context.precision.price_text
            if top is None:
                text = f"{self._pair}   bid {DASH}   ask {DASH}"
            else:
                text = (
                    f"{self._pair}   bid {price(top.bid, self._pair)}"
                    f"   ask {price(top.ask, self._pair)}"
                    f"   spread {price(top.spread, self._pair)}"
                )
        mark = self.freshness.current.mark()
        if mark:
            text = f"{text}   — {mark}"
        if self.title.text() != text:
            self.title.setText(text)

    # -- crosshair ------------------------------------------------------------------------------

    def _mouse_moved(self, pos: QPointF) -> None:
        under = None
        for plot in (self.price_plot, self.spread_plot):
            if plot.vb.sceneBoundingRect().contains(pos):
                under = plot
        if under is None:
            for line in (*self._vlines.values(), *self._hlines.values()):
                line.hide()
            self.readout.setText("")
            return
        point = under.vb.mapSceneToView(pos)
        x, y = point.x(), point.y()
        for line in self._vlines.values():
            line.setPos(x)
            line.show()
        for plot, line in self._hlines.items():
            line.setPos(y)
            line.setVisible(plot is under)
        what = "spread" if under is self.spread_plot else "price"
        self.readout.setText(self.readout_text(x, y, what))

    def readout_text(self, x: float, y: float, what: str) -> str:
        """``HH:MM:SS   price 91,020.50`` for the cursor, with the candle under it in a
        candle view: ``O … H … L … C …``."""
        try:
            when = datetime.fromtimestamp(x).strftime("%Y-%m-%d %H:%M:%S")
        except (OverflowError, OSError, ValueError):
            when = DASH
        value = cursor_value(y)
        pair = self._pair
        shown = DASH if value is None or pair is None else self._price(value)
        text = f"{when}   {what} {shown}"
        c = self._candles
        if c is not None and len(c) and pair is not None and self.timeframe:
            i = int(np.searchsorted(c.start, x, side="right")) - 1
            if 0 <= i < len(c) and x < c.start[i] + c.seconds:
                ohlc = (c.open[i], c.high[i], c.low[i], c.close[i])
                parts = [
                    f"{k} {self._price(cursor_value(float(v)))}"
                    for k, v in zip("OHLC", ohlc, strict=True)
                ]
                text = f"{text}   {'  '.join(parts)}"
        return text

    def _price(self, value: Decimal | None) -> str:
        if value is None or self._pair is None:
            return DASH
        return self._context.precision.price_text(value, self._pair)
