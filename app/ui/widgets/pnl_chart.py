"""P&L over time: two small stacked plots in the positions dock — the portfolio's
value and the realised P&L of the last day or week (``app.services.pnl_history``), on a shared
time axis.

The lines are redrawn only when the series given differs from the one drawn (``set_series``
compares the arrays), so the dock may hand it the same series on every refresh for free. Pens are
1 px, cosmetic, without antialiasing (qt-asyncio-notes: wider pens draw 7–9× slower); the
colours come from the trading palette and follow a theme switch: the value in the theme's text
colour, the realised P&L in its rise colour with a zero line.

The value axes read as the terminal writes money: grouped digits, never scientific notation or
a hidden scale (``GroupedAxis``: 3,858,000, not 3.858e+06). The legend beside the Day / Week
choice names each line with the valuation currency ("— value (USD)  — realised (USD)", in the
lines' colours), so every number on the chart carries its asset. A legend rather than titles
up the axes: the plots are ~30 px high in a 720-line window, where a turned "Realised (USD)"
ran over its neighbour's; the legend is hosted (``TextHost``), so a narrow dock cuts it rather
than widening.
"""

from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from app.services.pnl_history import WINDOWS, PnlSeries
from app.ui.palette import TradePalette, current_palette, follow_palette
from app.ui.widgets.live_text import TextHost
from app.ui.widgets.plot_axes import GroupedAxis, cosmetic_pen

#: Settings key of the window shown (Day / Week).
WINDOW_KEY = "positions/chartWindow"
GRID_ALPHA = 0.15
#: The lines' names in the legend; the valuation currency follows in brackets once known.
NAMES = ("value", "realised")

_pen = cosmetic_pen


class PnlChart(QWidget):
    """The value and realised P&L plots with a Day / Week choice (``windowChanged``)."""

    windowChanged = Signal(int)  # seconds

    def __init__(self, window: str = "Day", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("pnlChart")
        self.series: PnlSeries | None = None
        #: The valuation currency the values are in ("" until the first series).
        self.currency = ""
        self.redraws = 0
        self.window_choice = QComboBox(self)
        self.window_choice.setObjectName("pnlWindow")
        self.window_choice.setToolTip("The portfolio's value and realised P&L over this window")
        for label, seconds in WINDOWS.items():
            self.window_choice.addItem(label, seconds)
        self.window_choice.setCurrentIndex(max(0, self.window_choice.findText(window)))
        self.window_choice.currentIndexChanged.connect(
            lambda _: self.windowChanged.emit(self.window_seconds)
        )
        self.plots = pg.GraphicsLayoutWidget(self)
        self.plots.setObjectName("pnlPlots")
        self.plots.setAntialiasing(False)
        self.value_plot = self._plot(0)
        self.realised_plot = self._plot(1)
        self.realised_plot.setXLink(self.value_plot)
        # one width for both value axes (the widest labels'), so the two time axes line up
        value_axis, realised_axis = (
            p.getAxis("left") for p in (self.value_plot, self.realised_plot)
        )
        value_axis.partners.append(realised_axis)
        realised_axis.partners.append(value_axis)
        self.value_plot.getAxis("bottom").setStyle(showValues=False)
        self.value_curve = self.value_plot.plot(antialias=False, name="value", connect="finite")
        self.realised_curve = self.realised_plot.plot(
            antialias=False, name="realised", connect="finite"
        )
        self.zero = pg.InfiniteLine(pos=0, angle=0, movable=False)
        self.realised_plot.addItem(self.zero, ignoreBounds=True)
        self.legend = QLabel(self)
        self.legend.setObjectName("pnlLegend")
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self._palette = current_palette()
        legend_host = TextHost(self.legend, self._legend_html("USDT"), self)
        self._paint(self._palette)
        follow_palette(self.set_palette)

        top = QHBoxLayout()
        top.setContentsMargins(4, 0, 4, 0)
        top.addWidget(QLabel("P&L over", self))
        top.addWidget(self.window_choice)
        top.addWidget(legend_host, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(top)
        layout.addWidget(self.plots, 1)

    def _plot(self, row: int) -> Any:
        plot = self.plots.addPlot(
            row=row,
            col=0,
            axisItems={
                "bottom": pg.DateAxisItem(orientation="bottom"),
                "left": GroupedAxis(orientation="left"),
            },
        )
        plot.showGrid(x=True, y=True, alpha=GRID_ALPHA)
        plot.setMenuEnabled(False)
        plot.hideButtons()
        return plot

    @property
    def window_seconds(self) -> int:
        return int(self.window_choice.currentData())

    @property
    def window_name(self) -> str:
        return self.window_choice.currentText()

    def set_series(self, series: PnlSeries, currency: str | None = None) -> bool:
        """Draw ``series`` (values in ``currency``, by default the one drawn last) unless it is
        the one drawn; whether it was drawn."""
        if currency is not None and currency != self.currency:
            self.currency = currency
            self._update_legend()
        if series.same(self.series):
            return False
        self.series = series
        self.value_curve.setData(series.times, series.value)
        self.realised_curve.setData(series.times, series.realised)
        self.redraws += 1
        return True

    def set_palette(self, palette: TradePalette) -> None:
        """A theme switch: the same lines in the new colours."""
        self._paint(palette)

    def legend_entries(self) -> list[tuple[str, QColor]]:
        """What the legend names, in each line's colour."""
        return self._entries(self.currency)

    def _entries(self, currency: str) -> list[tuple[str, QColor]]:
        unit = f" ({currency})" if currency else ""
        colours = (self._palette.text, self._palette.up)
        return [(f"{name}{unit}", colour) for name, colour in zip(NAMES, colours, strict=True)]

    def _legend_html(self, currency: str) -> str:
        return "&nbsp;&nbsp;".join(
            f'<span style="color:{colour.name()}">&#8212;&nbsp;{name}</span>'
            for name, colour in self._entries(currency)
        )

    def _update_legend(self) -> None:
        text = self._legend_html(self.currency)
        if self.legend.text() != text:
            self.legend.setText(text)

    def _paint(self, palette: TradePalette) -> None:
        self._palette = palette
        self._update_legend()
        self.plots.setBackground(palette.background)
        self.value_curve.setPen(_pen(palette.text))
        self.realised_curve.setPen(_pen(palette.up))
        zero = _pen(palette.mid)
        zero.setStyle(Qt.PenStyle.DashLine)
        self.zero.setPen(zero)
        for plot in (self.value_plot, self.realised_plot):
            for side in ("left", "bottom"):
                axis = plot.getAxis(side)
                axis.setPen(_pen(palette.mid))
                axis.setTextPen(_pen(palette.text))
