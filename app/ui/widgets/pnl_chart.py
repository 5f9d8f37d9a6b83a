"""P&L over time (issue 17): two small stacked plots in the positions dock — the portfolio's
value and the realised P&L of the last day or week (``app.services.pnl_history``), on a shared
time axis.

The lines are redrawn only when the series given differs from the one drawn (``set_series``
compares the arrays), so the dock may hand it the same series on every refresh for free. Pens are
1 px, cosmetic, without antialiasing (qt-asyncio-notes: wider pens draw 7–9× slower); the
colours come from the trading palette and follow a theme switch: the value in the theme's text
colour, the realised P&L in its rise colour with a zero line.
"""

from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from app.services.pnl_history import WINDOWS, PnlSeries
from app.ui.palette import TradePalette, current_palette, follow_palette

#: Settings key of the window shown (Day / Week).
WINDOW_KEY = "positions/chartWindow"
GRID_ALPHA = 0.15


def _pen(colour: QColor) -> QPen:
    pen = QPen(colour)
    pen.setWidth(1)
    pen.setCosmetic(True)
    return pen


class PnlChart(QWidget):
    """The value and realised P&L plots with a Day / Week choice (``windowChanged``)."""

    windowChanged = Signal(int)  # seconds

    def __init__(self, window: str = "Day", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("pnlChart")
        self.series: PnlSeries | None = None
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
        self.value_plot = self._plot(0, "Value")
        self.realised_plot = self._plot(1, "Realised")
        self.realised_plot.setXLink(self.value_plot)
        self.value_plot.getAxis("bottom").setStyle(showValues=False)
        self.value_curve = self.value_plot.plot(antialias=False, name="value", connect="finite")
        self.realised_curve = self.realised_plot.plot(
            antialias=False, name="realised", connect="finite"
        )
        self.zero = pg.InfiniteLine(pos=0, angle=0, movable=False)
        self.realised_plot.addItem(self.zero, ignoreBounds=True)
        self._paint(current_palette())
        follow_palette(self.set_palette)

        top = QHBoxLayout()
        top.setContentsMargins(4, 0, 4, 0)
        top.addWidget(QLabel("P&L over", self))
        top.addWidget(self.window_choice)
        top.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(top)
        layout.addWidget(self.plots, 1)

    def _plot(self, row: int, title: str) -> Any:
        plot = self.plots.addPlot(
            row=row, col=0, axisItems={"bottom": pg.DateAxisItem(orientation="bottom")}
        )
        plot.setLabel("left", title)
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

    def set_series(self, series: PnlSeries) -> bool:
        """Draw ``series`` unless it is the one drawn; whether it was drawn."""
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

    def _paint(self, palette: TradePalette) -> None:
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
