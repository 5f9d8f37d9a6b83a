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

Views: "Line" draws every tick; the candle views draw the open, high, low and close of the mid
per bucket (``app.ui.panels.chart_candles``: rises hollow in the palette's up colour, falls
filled in its down colour). Only timeframes of at least four polls of the top of book are
offered (``offered_timeframes``): at the default 0.5 s poll the shortest candle is 5 s. The
choice is remembered; a remembered one the poll rate no longer allows becomes the next longer
one offered, and a new poll interval (Settings) re-offers the list at once.

Axes readable at any dock size (``app.ui.widgets.plot_axes``): the price and spread axes place
at most one label per two text heights and never scale or SI-prefix a value (a 0.48 spread
reads 0.48); the time axis reads clock time (HH:MM:SS, HH:MM from one-minute spacing) with at
most one label per label width. Until the shown pair has data the plots are replaced by
"Waiting for prices…" (no placeholder ticks). The legend is a row of its own above the plots,
never over a line.

Readout (``ChartReadout``): painted over the top-left corner of the price plot, sized by the
plot and never by its text, so hovering can never widen the dock or squeeze its neighbours. It
shows the time and price under the pointer (and the candle's O/H/L/C there, on a second line),
follows the data while the pointer rests (re-read after each frame and range change), and
clears when the pointer leaves the plots, on a pair change and on a view change.

Drawing: ticks only mark the chart dirty; the first new sample of the shown pair asks the
application's frame clock (``app.ui.frame_clock``) for a frame ``frame_ms`` (33 ms, ~30 frames
a second) later, which calls ``setData`` once for the whole burst; nothing runs while no ticks
of the shown pair arrive, and nothing is drawn while the chart sits hidden in a window (a tab
behind the depth, a closed dock): it draws once when shown again.
1 px cosmetic pens, no antialiasing (notes: pyqtgraph). The curves get the samples of the shown
range (all of them, or the zoomed range) reduced to at most two per pixel column
(``app.ui.peak_display``, storage made once for ``MAX_BUCKETS`` columns): what pyqtgraph builds
per frame is bounded by the plot's width, not the history, so memory stays flat.
Candles are recorded into a ``QPicture`` only when a finished bucket changes; the open bucket is
painted on its own.

Colours: bid and ask in the palette's bid (blue) and ask (orange), the mid and the crosshair in
its neutral grey, the spread in its own hue, candles in its up and down, on the theme's plot
background with its text colour on the axes, legend and readout — all from the palette in
force, re-applied on a theme switch.

While the top-of-book feed is stale (offline, failing, too old: ``bridge.freshness``) the
title is greyed and says "stale since HH:MM:SS", and the curves and candles are drawn in the
stale grey; both come back with fresh data.

Fills of parent orders (the execution engine's children, ``bridge.algos``) of the shown pair are
markers on the price plot (``app.ui.panels.chart_fills``): a triangle up for a buy, down for a
sell (in the ask and bid colours, so shape and colour both tell), at the child's average price
and the time it executed, larger for a larger fill (bounded). A change the engine announces for
a parent of the shown pair marks them dirty; they are redrawn on the chart's next frame, with
the lines.

Prices are Decimal everywhere else in the terminal; here, and only in ``plot_sample``, they
become floats, because pixels are not money.
"""

from __future__ import annotations

import time
from datetime import datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import platformdirs
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, QPointF, QSettings, Qt, QTimer
from PySide6.QtGui import QColor, QHideEvent, QShowEvent
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
from app.ui.panels.chart_candles import (
    TIMEFRAMES,
    CandleItem,
    Candles,
    candles,
    nearest_offered,
    offered_timeframes,
)
from app.ui.panels.chart_fills import fill_marks, marker_sizes
from app.ui.panels.chart_readout import ChartReadout
from app.ui.peak_display import PeakDisplay
from app.ui.preferences import Preferences
from app.ui.ring_buffer import FloatArray, RingBuffer
from app.ui.widgets.live_text import TextHost
from app.ui.widgets.plot_axes import ClockAxis, GroupedAxis, cosmetic_pen

__all__ = ["TIMEFRAMES", "Candles", "ChartPanel", "candles", "history_folder", "plot_sample"]

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
VIEW_KEY = "chart/view"
WAITING = "Waiting for prices…"
#: Between the title's "ask" and "spread" and their numbers: a narrow dock wraps the title
#: between fields, never between a word and its price (the first line, pair and bid, fits).
NBSP = "\u00a0"

_pen = cosmetic_pen


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


def legend_html(entries: list[tuple[str, QColor]]) -> str:
    """The legend's rich text: each name after a dash in its colour."""
    return "&nbsp;&nbsp;".join(
        f'<span style="color:{colour.name()}">&#8212;&nbsp;{name}</span>'
        for name, colour in entries
    )


#: Pairs whose every tick the chart keeps in memory (the shown one and the last few shown).
KEPT_PAIRS = 4


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
        self.view_choice = QComboBox(self)
        self.view_choice.setObjectName("chartView")
        self.view_choice.setToolTip(
            "Line of every tick, or candles of the mid per timeframe (candles of at least"
            " four polls of the prices)"
        )
        saved = str(context.settings.value(VIEW_KEY, "Line"))
        self._offer_views(TIMEFRAMES.get(saved, 0))

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
        price_view.sigRangeChanged.connect(self._reread)
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
        #: Where the pointer is over the plots (scene coordinates), None when it is not.
        self._hover: QPointF | None = None
        self.readout = ChartReadout(self.plots)
        self.readout.setFont(mono)
        self.plots.scene().sigMouseMoved.connect(self._mouse_moved)
        self.plots.viewport().installEventFilter(self)
        self.fill_markers = pg.ScatterPlotItem(pxMode=True)
        self.fill_markers.setObjectName("chartFillMarkers")
        self.price_plot.addItem(self.fill_markers)
        #: What the markers show: (time, price, side) of each fill of the shown pair.
        self.marker_points: list[tuple[float, float, str]] = []
        #: Each marker's size across in pixels (larger for a larger fill), in the same order.
        self.marker_sizes: list[float] = []
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
        # hosted too: a longer legend (a candle view) never widens the dock; a narrow dock
        # cuts it at its right end
        longest = max(TIMEFRAMES, key=lambda label: len(self._legend_entries(label)[0][0]))
        legend_host = TextHost(self.legend, legend_html(self._legend_entries(longest)), self)
        legend_row = QHBoxLayout()
        legend_row.setContentsMargins(4, 0, 4, 0)
        legend_row.addWidget(legend_host, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(top_row)
        layout.addLayout(legend_row)
        layout.addWidget(self.stack, 1)

        self._paint_colours(self._palette)
        follow_palette(self.set_palette)
        context.bridge.topOfBook.connect(self.add_ticks)
        context.bridge.algoChanged.connect(self._algo_changed)
        context.bridge.fills.connect(self._filled)
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

    # -- views ----------------------------------------------------------------------------------

    def _offer_views(self, wanted: int) -> None:
        """Fill the view box with the views the poll interval allows (``offered_timeframes``)
        and choose the one nearest ``wanted`` seconds."""
        offered = offered_timeframes(self._context.bridge.top_of_book_interval)
        box = self.view_choice
        chosen = nearest_offered(wanted, offered)
        blocked = box.blockSignals(True)  # the caller redraws if the view changed
        if self.offered_views() != list(offered):
            box.clear()
            for label, seconds in offered.items():
                box.addItem(label, seconds)
        box.setCurrentIndex(box.findText(chosen))
        box.blockSignals(blocked)

    def offered_views(self) -> list[str]:
        """The views the box offers, in order."""
        return [self.view_choice.itemText(i) for i in range(self.view_choice.count())]

    def apply_preferences(self, prefs: Preferences) -> None:
        """Settings applied: a new top-of-book interval may offer other timeframes (the window
        re-times the feed first, so the bridge's interval is the new one)."""
        before = self.timeframe
        self._offer_views(before)
        if self.timeframe != before:
            self._view_changed()

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
        """Pens (1 px, cosmetic), background, axes, grid, legend and readout from ``palette``."""
        self.plots.setBackground(palette.background)
        stale = self.freshness.stale
        for name, colour in series_colours(palette).items():
            self.curves[name].setPen(_pen(palette.stale if stale else colour))
        if stale:
            self.candle_item.set_colours(palette.stale, palette.stale)
        else:
            self.candle_item.set_colours(palette.up, palette.down)
        self.readout.set_colours(palette.text, palette.background)
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

    def _legend_entries(self, view: str) -> list[tuple[str, QColor]]:
        palette = self._palette
        colours = series_colours(palette)
        if TIMEFRAMES.get(view, 0):
            return [
                (f"mid, {view} candles:", palette.text),
                ("up", palette.up),
                ("down", palette.down),
                ("spread", colours["spread"]),
            ]
        return [(name, colours[name]) for name in ("bid", "ask", "mid", "spread")]

    def legend_entries(self) -> list[tuple[str, QColor]]:
        """What the legend names, in the colour it draws each: the lines, or the candles."""
        return self._legend_entries(self.view_choice.currentText())

    def _update_legend(self) -> None:
        """A row of its own above the plots (pyqtgraph's legend sat on the lines)."""
        text = legend_html(self.legend_entries())
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
        return int(self.view_choice.currentData() or 0)

    def buffer(self, pair: str) -> RingBuffer | None:
        return self._buffers.get(pair)

    def add_ticks(self, tops: dict[str, TopOfBook], at: float | None = None) -> None:
        """One poll of every watched pair, received at ``at`` (default: now, epoch seconds).
        Every tick goes to the second-by-second history; only the pairs shown lately keep
        every tick in memory (``KEPT_PAIRS`` ring buffers, not one per watched pair: at 500
        pairs those held three quarters of a gigabyte)."""
        now = time.time() if at is None else at
        shown = self._pair
        for pair, top in tops.items():
            sample = plot_sample(now, top)
            buffer = self._buffers.get(pair)
            if buffer is None and pair == shown:
                buffer = self._keep(pair)
            if buffer is not None:
                buffer.append(sample)
            self.history.record(pair, now, sample[BID], sample[ASK])
            self._last[pair] = top
        if shown is not None and shown in tops:
            self._schedule()

    def set_pair(self, pair: str) -> None:
        """Show ``pair``'s history (every tick if it was shown lately, else its seconds from
        the history) and follow its ticks."""
        if pair == self._pair:
            return
        self._pair = pair
        self._markers_dirty = True
        self._clear_readout()
        self._load(pair)
        self._schedule()

    def _keep(self, pair: str) -> RingBuffer:
        """A ring buffer for ``pair`` (the most recently shown last), the oldest kept one let
        go beyond ``KEPT_PAIRS``: its seconds stay in the history, read when shown again."""
        buffer = self._buffers.pop(pair, None) or RingBuffer(self._capacity, 5)
        self._buffers[pair] = buffer
        while len(self._buffers) > KEPT_PAIRS:
            oldest = next(iter(self._buffers))
            del self._buffers[oldest]
            self._loaded.discard(oldest)
        return buffer

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
        self._keep(pair)
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
        self._clear_readout()
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

    def hideEvent(self, event: QHideEvent) -> None:
        """Hidden (a tab behind the depth, a closed dock): no readout waits to be shown again
        for a pointer that has long moved on."""
        super().hideEvent(event)
        self._clear_readout()

    def redraw_pending(self) -> bool:
        """A frame is scheduled (new samples of the shown pair wait to be drawn)."""
        return self._redraw_asked

    def _filled(self, _: None) -> None:
        """An order may have filled: the markers are drawn again with the next frame."""
        self._markers_dirty = True
        self._schedule()

    def _algo_changed(self, parent_id: str) -> None:
        """A parent changed: its fills are redrawn with the next frame if it trades this pair."""
        engine = self._context.bridge.algos
        parent = None if engine is None else engine.parents.get(parent_id)
        if parent is not None and parent.spec.pair == self._pair:
            self._markers_dirty = True
            self._schedule()

    def _draw_markers(self) -> None:
        self._markers_dirty = False
        bridge = self._context.bridge
        marks = fill_marks(bridge.own_fills, bridge.algos, self._pair, bridge.clock_offset)
        self.marker_points = [(m.at, m.price, m.side) for m in marks]
        self.marker_sizes = marker_sizes([m.base for m in marks])
        palette = self._palette
        self.fill_markers.setData(
            [
                {
                    "pos": (mark.at, mark.price),
                    "size": size,
                    "symbol": "t1" if mark.side == "buy" else "t",
                    "brush": pg.mkBrush(palette.ask if mark.side == "buy" else palette.bid),
                    "pen": _pen(palette.text),
                }
                for mark, size in zip(marks, self.marker_sizes, strict=True)
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
        self._reread()

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
        reduced to the old width, or are too many for the new one); the readout follows the
        plot's corner."""
        self._place_readout()
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
                    f"   ask{NBSP}{price(top.ask, self._pair)}"
                    f"   spread{NBSP}{price(top.spread, self._pair)}"
                )
        mark = self.freshness.current.mark()
        if mark:
            text = f"{text}   — {mark}"
        if self.title.text() != text:
            self.title.setText(text)

    # -- crosshair ------------------------------------------------------------------------------

    def _place_readout(self) -> None:
        """The readout over the top of the price plot (in the plot view's coordinates)."""
        scene_rect = self.price_plot.vb.sceneBoundingRect()
        in_viewport = self.plots.mapFromScene(scene_rect).boundingRect()
        self.readout.place(in_viewport.translated(self.plots.viewport().pos()))
        self.readout.raise_()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """The pointer left the plots: the crosshair and the readout go."""
        if watched is self.plots.viewport() and event.type() == QEvent.Type.Leave:
            self._clear_readout()
        return super().eventFilter(watched, event)

    def _reread(self, *_: object) -> None:
        """New data or a new range under a resting pointer (the plot follows the ticks): the
        readout names what is under it now."""
        if self._hover is not None:
            self._mouse_moved(self._hover)

    def _clear_readout(self) -> None:
        self._hover = None
        for line in (*self._vlines.values(), *self._hlines.values()):
            line.hide()
        self.readout.clear()

    def _mouse_moved(self, pos: QPointF) -> None:
        under = None
        for plot in (self.price_plot, self.spread_plot):
            if plot.vb.sceneBoundingRect().contains(pos):
                under = plot
        if under is None or self.stack.currentWidget() is not self.plots:
            self._clear_readout()
            return
        self._hover = QPointF(pos)
        point = under.vb.mapSceneToView(pos)
        x, y = point.x(), point.y()
        for line in self._vlines.values():
            line.setPos(x)
            line.show()
        for plot, line in self._hlines.items():
            line.setPos(y)
            line.setVisible(plot is under)
        what = "spread" if under is self.spread_plot else "price"
        self._place_readout()
        self.readout.setText(self.readout_text(x, y, what))

    def readout_text(self, x: float, y: float, what: str) -> str:
        """``YYYY-MM-DD HH:MM:SS   price 91,020.50`` for the cursor, and in a candle view the
        candle under it on a second line: ``O …  H …  L …  C …``."""
        try:
            when = datetime.fromtimestamp(x).strftime("%Y-%m-%d %H:%M:%S")
        except (OverflowError, OSError, ValueError):
            when = DASH
        value = cursor_value(y)
        pair = self._pair
        shown = DASH if value is None or pair is None else self._price(value)
        text = f"{when}   {what} {shown}"
        c = self._candles
        i = None if c is None or pair is None or not self.timeframe else c.at(x)
        if c is not None and i is not None:
            ohlc = (c.open[i], c.high[i], c.low[i], c.close[i])
            parts = [
                f"{k} {self._price(cursor_value(float(v)))}"
                for k, v in zip("OHLC", ohlc, strict=True)
            ]
            text = f"{text}\n{'  '.join(parts)}"
        return text

    def _price(self, value: Decimal | None) -> str:
        if value is None or self._pair is None:
            return DASH
        return self._context.precision.price_text(value, self._pair)
