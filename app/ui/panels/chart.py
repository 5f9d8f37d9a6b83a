"""Live chart of the selected pair: bid, ask and mid over time, the spread below on a linked
time axis, and a crosshair with a time/price readout.

Data: every ``topOfBook`` tick carries all watched pairs; each pair gets its own ring buffer
(``RingBuffer``, ``capacity`` samples, timestamped with the wall-clock time the tick arrived),
so switching the selected pair shows that pair's history at once instead of starting empty.
Memory is bounded: ``capacity`` × 2 × 5 float64 per watched pair (1.6 MB at 20,000).

Drawing: ticks only mark the chart dirty; a single-shot ``QTimer`` of ``frame_ms`` (33 ms,
~30 frames a second) started by the first new sample calls ``setData`` once for the whole
burst, and nothing runs while no ticks arrive. 1 px cosmetic pens, no antialiasing, and
``clipToView`` + auto (peak) downsampling set after the curves are added (notes: pyqtgraph).

Colours: bid and ask in the palette's bid (blue) and ask (orange), the mid and the crosshair in
its neutral grey, the spread in its own hue, on the theme's plot background with its text
colour on the axes and legend — all from the palette in force, re-applied on a theme switch.

While the top-of-book feed is stale (offline, failing, too old: ``bridge.freshness``) the
title is greyed and says "stale since HH:MM:SS", and the curves are drawn in the stale grey
(issue 12); both come back with fresh data.

Prices are Decimal everywhere else in the terminal; here, and only in ``plot_sample``, they
become floats, because pixels are not money.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal, InvalidOperation

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, QTimer
from PySide6.QtGui import QColor, QFontDatabase, QPen
from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from app.domain.display import DASH
from app.domain.records import TopOfBook
from app.ui.bridge import Freshness
from app.ui.palette import TradePalette, current_palette, follow_palette
from app.ui.panels.base import PanelContext
from app.ui.ring_buffer import RingBuffer

CAPACITY = 20_000
FRAME_MS = 33

#: Ring buffer columns.
TIME, BID, ASK, MID, SPREAD = range(5)
SERIES = {"bid": BID, "ask": ASK, "mid": MID}
#: Opacity (0–1) of the grid lines, drawn in the axis colour.
GRID_ALPHA = 0.15


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


def _pen(colour: QColor) -> QPen:
    """1 px, cosmetic (same width at any zoom): wider pens draw 7–9× slower."""
    pen = QPen(colour)
    pen.setWidth(1)
    pen.setCosmetic(True)
    return pen


class GroupedAxis(pg.AxisItem):  # type: ignore[misc]  # pyqtgraph is untyped
    """Ticks written as the terminal writes numbers: ``90,995`` (pyqtgraph's own: ``90995``,
    and ``9.1e+04`` from 10,000 up)."""

    def tickStrings(self, values: Sequence[float], scale: float, spacing: float) -> list[str]:
        if self.logMode or spacing * scale <= 0:
            return list(super().tickStrings(values, scale, spacing))
        places = max(0, math.ceil(-math.log10(spacing * scale)))
        return [f"{value * scale:,.{places}f}" for value in values]


class ChartPanel(QWidget):
    def __init__(
        self,
        context: PanelContext,
        parent: QWidget | None = None,
        *,
        capacity: int = CAPACITY,
        frame_ms: int = FRAME_MS,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("chartPanel")
        self._context = context
        self._capacity = capacity
        self._buffers: dict[str, RingBuffer] = {}
        self._last: dict[str, TopOfBook] = {}
        self._pair: str | None = context.bridge.selected_pair
        self._dirty = False
        self.redraws = 0

        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.title = QLabel(self)
        self.title.setObjectName("chartTitle")
        self.title.setFont(mono)
        self.readout = QLabel(self)
        self.readout.setObjectName("chartReadout")
        self.readout.setFont(mono)
        self.readout.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

        self.plots = pg.GraphicsLayoutWidget(self)
        self.plots.setObjectName("chartPlots")
        self.plots.setAntialiasing(False)
        self.price_plot = self.plots.addPlot(
            row=0,
            col=0,
            axisItems={
                "bottom": pg.DateAxisItem(orientation="bottom"),
                "left": GroupedAxis(orientation="left"),
            },
        )
        self.spread_plot = self.plots.addPlot(
            row=1,
            col=0,
            axisItems={
                "bottom": pg.DateAxisItem(orientation="bottom"),
                "left": GroupedAxis(orientation="left"),
            },
        )
        self.plots.ci.layout.setRowStretchFactor(0, 3)
        self.plots.ci.layout.setRowStretchFactor(1, 1)
        self.spread_plot.setXLink(self.price_plot)
        self.price_plot.getAxis("bottom").setStyle(showValues=False)
        self.price_plot.setLabel("left", "price")
        self.spread_plot.setLabel("left", "spread")
        self.price_plot.showGrid(x=True, y=True, alpha=GRID_ALPHA)
        self.spread_plot.showGrid(x=True, y=True, alpha=GRID_ALPHA)
        self.legend = self.price_plot.addLegend(offset=(8, 8))

        self.curves: dict[str, pg.PlotDataItem] = {}
        for name in SERIES:
            self.curves[name] = self.price_plot.plot(antialias=False, name=name)
        self.curves["spread"] = self.spread_plot.plot(antialias=False, name="spread")
        # Only now that the curves belong to a plot (before, pyqtgraph ignores these).
        for curve in self.curves.values():
            curve.setClipToView(True)
            curve.setDownsampling(auto=True, method="peak")

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
        self.freshness = context.bridge.freshness(context.bridge.top_of_book_feed, self)
        self.freshness.changed.connect(self._freshness_changed)
        self._palette = current_palette()
        self._paint_colours(self._palette)
        follow_palette(self.set_palette)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(frame_ms)
        self._timer.timeout.connect(self._redraw)

        top_row = QHBoxLayout()
        top_row.setContentsMargins(4, 0, 4, 0)
        top_row.addWidget(self.title, 1)
        top_row.addWidget(self.readout)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(top_row)
        layout.addWidget(self.plots, 1)

        context.bridge.topOfBook.connect(self.add_ticks)
        context.bridge.selectionChanged.connect(self.set_pair)
        self._update_title()

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
        self.title.setStyleSheet(f"QLabel {{ color:{palette.stale.name()}; }}" if stale else "")
        for plot in (self.price_plot, self.spread_plot):
            for side in ("left", "bottom"):
                axis = plot.getAxis(side)
                axis.setPen(_pen(palette.mid))  # the axis line, ticks and grid
                axis.setTextPen(_pen(palette.text))
        cross = _pen(palette.mid)
        cross.setStyle(Qt.PenStyle.DashLine)
        for line in (*self._vlines.values(), *self._hlines.values()):
            line.setPen(cross)
        self.legend.setLabelTextColor(palette.text)
        for _, label in self.legend.items:
            label.setText(label.text)  # a label renders its colour only when its text is set
        self.legend.update()

    def _freshness_changed(self, freshness: Freshness) -> None:
        self.title.setToolTip(freshness.reason if freshness.stale else "")
        self._paint_colours(self._palette)
        self._update_title()

    # -- data -----------------------------------------------------------------------------------

    @property
    def pair(self) -> str | None:
        return self._pair

    def buffer(self, pair: str) -> RingBuffer | None:
        return self._buffers.get(pair)

    def add_ticks(self, tops: dict[str, TopOfBook], at: float | None = None) -> None:
        """One poll of every watched pair, received at ``at`` (default: now, epoch seconds)."""
        now = time.time() if at is None else at
        for pair, top in tops.items():
            buffer = self._buffers.get(pair)
            if buffer is None:
                buffer = self._buffers[pair] = RingBuffer(self._capacity, 5)
            buffer.append(plot_sample(now, top))
            self._last[pair] = top
        if self._pair is not None and self._pair in tops:
            self._schedule()

    def set_pair(self, pair: str) -> None:
        """Show ``pair``'s history (kept while it was not selected) and follow its ticks."""
        if pair == self._pair:
            return
        self._pair = pair
        self._schedule()

    def _schedule(self) -> None:
        self._dirty = True
        if not self._timer.isActive():
            self._timer.start()

    def redraw_pending(self) -> bool:
        """A frame is scheduled (new samples of the shown pair wait to be drawn)."""
        return self._timer.isActive()

    def _redraw(self) -> None:
        if not self._dirty:
            return
        self._dirty = False
        self.redraws += 1
        buffer = self._buffers.get(self._pair) if self._pair else None
        if buffer is None or len(buffer) == 0:
            for curve in self.curves.values():
                curve.setData([], [])
        else:
            # A copy: pyqtgraph keeps the arrays it is given and re-reads them when the view
            # moves (clipToView), while the ring keeps writing into its own storage.
            data = np.array(buffer.window())
            x = data[TIME]
            for name, column in SERIES.items():
                self.curves[name].setData(x, data[column])
            self.curves["spread"].setData(x, data[SPREAD])
        self._update_title()

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
        try:
            when = datetime.fromtimestamp(x).strftime("%Y-%m-%d %H:%M:%S")
        except (OverflowError, OSError, ValueError):
            when = DASH
        value = cursor_value(y)
        shown = (
            DASH
            if value is None or self._pair is None
            else (self._context.precision.price_text(value, self._pair))
        )
        return f"{when}   {what} {shown}"
