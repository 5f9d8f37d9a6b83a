"""The P&L chart's value axes read as money: grouped digits ("3,858,000", never "3.858e+06" or a
hidden ×1e6), the valuation currency with each line's name in the legend, and nothing drawn
where the series has no value (before the first stored price)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from PySide6.QtGui import QImage, QPainter
from pytestqt.qtbot import QtBot

from app.services.pnl_history import PnlSeries
from app.ui.widgets.pnl_chart import PnlChart

GROUPED = re.compile(r"^-?\d{1,3}(,\d{3})*(\.\d+)?$")
END = 1_795_000_200.0


def labels(axis: object) -> list[str]:
    """The tick labels as pyqtgraph lays them out for painting."""
    image = QImage(4, 4, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        specs = axis.generateDrawSpecs(painter)  # type: ignore[attr-defined]
    finally:
        painter.end()
    return [text for _, _, text in specs[2]] if specs else []


def shown(qtbot: QtBot) -> PnlChart:
    chart = PnlChart()
    qtbot.addWidget(chart)
    chart.resize(420, 320)
    chart.show()
    qtbot.waitExposed(chart)
    return chart


@pytest.mark.parametrize(
    ("low", "high"),
    [(3_857_047.05, 3_858_218.80), (3_000_000.0, 4_000_000.0), (-1_250.5, 2_400.25)],
    ids=["millions-narrow", "millions-wide", "around-zero"],
)
def test_value_axes_are_grouped_numbers_with_the_currency(
    qtbot: QtBot, low: float, high: float
) -> None:
    chart = shown(qtbot)
    times = np.linspace(END - 3600, END, 13)
    value = np.linspace(low, high, 13)
    realised = np.linspace(0.0, high - low, 13)
    assert chart.set_series(PnlSeries(times, value, realised), "USD")
    for plot in (chart.value_plot, chart.realised_plot):
        plot.getViewBox().autoRange()
    axes = [plot.getAxis("left") for plot in (chart.value_plot, chart.realised_plot)]

    def settled() -> bool:
        """Painted, and the axes as wide as their labels asked (a layout pass later)."""
        chart.grab()
        return all(axis.width() == axis.minimumWidth() > 0 for axis in axes)

    qtbot.waitUntil(settled)
    assert axes[0].width() == axes[1].width()  # one width: the time axes line up
    assert [name for name, _ in chart.legend_entries()] == ["value (USD)", "realised (USD)"]
    assert "value (USD)" in chart.legend.text() and "realised (USD)" in chart.legend.text()
    for name, plot in (("value", chart.value_plot), ("realised", chart.realised_plot)):
        axis = plot.getAxis("left")
        assert not axis.label.isVisible()  # named in the legend, not up the short axis
        texts = labels(axis)
        assert texts, name
        assert all(GROUPED.match(text) for text in texts), texts
        assert axis.autoSIPrefixScale == 1.0  # no hidden ×1e6 beside the numbers
    assert "3,858,000" in chart.value_plot.getAxis("left").tickStrings([3_858_000.0], 1, 500)


def test_no_line_where_the_series_has_no_value(qtbot: QtBot) -> None:
    chart = shown(qtbot)
    times = np.linspace(END - 86_400, END, 289)
    value = np.full(times.shape, np.nan)
    value[-20:] = 3_858_000.0 + np.arange(20)  # the last 20 points: after the first sample
    chart.set_series(PnlSeries(times, value, np.zeros(times.shape)), "USD")
    chart.value_plot.getViewBox().autoRange()
    x, y = chart.value_curve.getData()
    finite = x[np.isfinite(y)]
    assert finite.size == 20 and finite[0] == times[-20]
    low, high = chart.value_plot.getViewBox().childrenBounds()[1]
    assert low > 3_857_999 and high < 3_858_020  # nothing drawn at another value
