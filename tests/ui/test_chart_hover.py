"""Hovering the chart never moves a dock: the chart between two other docks in a main window,
hovered with real mouse moves in every view (the line and each candle timeframe offered), left,
and switched to another pair — every dock keeps its geometry, and the readout (painted over the
plot, never in the layout) is empty once the pointer left and after a pair or view change.

Before, the readout was a label in the chart's layout: a candle's O/H/L/C made it ~90
characters, the chart dock grew to fit, the docks beside it shrank, and nothing gave the room
back (the readout was never cleared)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QLabel,
    QMainWindow,
    QTableWidget,
    QWidget,
)
from pytestqt.qtbot import QtBot

from app.ui.panels.base import PanelContext
from app.ui.panels.chart import ChartPanel
from tests.helpers.live import OfflineContext
from tests.helpers.top_of_book import top
from tests.ui.chart_helpers import hover

D = Decimal
#: A whole hour, so buckets of every timeframe start on it.
T0 = 1_700_000_000.0 - 1_700_000_000.0 % 3600
#: Ticks fed: ten minutes at the default two a second.
TICKS = 1200


@pytest.fixture
def offline(offline_context: OfflineContext) -> PanelContext:
    return offline_context("ETH/USD")


def feed(panel: ChartPanel) -> None:
    """Ten minutes of ETH/USD and BTC/USD, rising and falling, two ticks a second."""
    for i in range(TICKS):
        wave = D((i * 7) % 23) - 11
        eth, btc = D(3100) + wave, D(91000) + 10 * wave
        panel.add_ticks(
            {
                "ETH/USD": top("ETH/USD", str(eth - D("0.24")), str(eth + D("0.24"))),
                "BTC/USD": top("BTC/USD", str(btc - 5), str(btc + 5)),
            },
            at=T0 + i / 2,
        )


class Docks:
    """A main window: a table dock left (the watchlist's place), a label dock below (the
    balances'), and the chart dock right, kept narrow so its text would have to fit."""

    def __init__(self, qtbot: QtBot, context: PanelContext) -> None:
        self.window = QMainWindow()
        qtbot.addWidget(self.window)
        centre = QWidget()
        centre.setMaximumWidth(1)  # the docks share the width
        self.window.setCentralWidget(centre)
        table = QTableWidget(8, 6)
        table.setHorizontalHeaderLabels(["Pair", "Bid", "Ask", "Spread", "Age", "Size"])
        balances = QLabel("BTC  15.00000000   1,365,991.80 USD")
        self.chart = ChartPanel(context)
        self.docks: dict[str, QDockWidget] = {}
        for name, widget, area in (
            ("watchlist", table, Qt.DockWidgetArea.LeftDockWidgetArea),
            ("balances", balances, Qt.DockWidgetArea.LeftDockWidgetArea),
            ("chart", self.chart, Qt.DockWidgetArea.RightDockWidgetArea),
        ):
            dock = QDockWidget(name.title(), self.window)
            dock.setObjectName(name)
            dock.setWidget(widget)
            self.window.addDockWidget(area, dock)
            self.docks[name] = dock
        self.window.resize(1000, 600)
        self.window.resizeDocks(
            [self.docks["watchlist"], self.docks["chart"]], [640, 340], Qt.Orientation.Horizontal
        )
        self.window.show()
        qtbot.waitExposed(self.window)

    def geometries(self) -> dict[str, QRect]:
        QApplication.processEvents()  # a pending relayout would show here
        found = {name: QRect(dock.geometry()) for name, dock in self.docks.items()}
        found["window"] = QRect(self.window.geometry())
        return found

    def plot_centre(self) -> QPoint:
        view = self.chart.price_plot.vb
        point: QPoint = self.chart.plots.mapFromScene(view.sceneBoundingRect().center())
        return point

    def away(self) -> None:
        """The pointer onto the table dock: out of the chart, into its neighbour."""
        table = self.docks["watchlist"].widget()
        assert isinstance(table, QTableWidget)
        QTest.mouseMove(table.viewport(), table.viewport().rect().center())


def choose(qtbot: QtBot, chart: ChartPanel, view: str) -> None:
    box = chart.view_choice
    box.setFocus()
    while box.currentText() != view:
        step = Qt.Key.Key_Down if box.findText(view) > box.currentIndex() else Qt.Key.Key_Up
        QTest.keyClick(box, step)
    qtbot.waitUntil(lambda: not chart.redraw_pending())


@pytest.mark.slow
def test_hovering_every_view_moves_no_dock_and_the_readout_clears(
    qtbot: QtBot, offline: PanelContext
) -> None:
    window = Docks(qtbot, offline)
    chart = window.chart
    feed(chart)
    qtbot.waitUntil(lambda: chart.drawn_samples > 0 and not chart.redraw_pending())
    qtbot.waitUntil(lambda: chart.price_plot.vb.viewRange()[1][0] > 3000)
    assert QApplication.mouseButtons() == Qt.MouseButton.NoButton  # hovers, not drags
    before = window.geometries()
    assert before["chart"].width() < 400  # narrow: a long readout line could not fit

    views = chart.offered_views()
    assert views[0] == "Line" and len(views) >= 4
    for view in views:
        choose(qtbot, chart, view)
        assert chart.readout.text() == ""  # a view change clears it
        hover(qtbot, chart, window.plot_centre(), "price")
        if chart.timeframe:  # the candle under the pointer, on a line of its own
            assert "\nO " in chart.readout.text() and " C " in chart.readout.text()
            # painted: broken between fields to fit the narrow plot, every field whole
            shown = chart.readout.shown_lines()
            metrics = QFontMetrics(chart.readout.font())
            assert all(metrics.horizontalAdvance(line) <= chart.readout.width() for line in shown)
            assert not any(line.endswith("…") for line in shown)
            fields = " ".join(shown).split()
            assert [fields[i] for i in range(len(fields)) if fields[i] in "OHLC"] == list("OHLC")
        assert window.geometries() == before, view
        assert chart.readout.geometry().width() <= chart.plots.width()
        window.away()
        qtbot.waitUntil(lambda: chart.readout.text() == "")
        assert not chart._vlines[chart.price_plot].isVisible()
        assert window.geometries() == before, view

    # hovering again, then a view change with the pointer still over the plot: cleared
    hover(qtbot, chart, window.plot_centre(), "price")
    choose(qtbot, chart, views[1])
    assert chart.readout.text() == ""

    # a pair change while hovering: cleared, and not re-read from the old pointer position
    hover(qtbot, chart, window.plot_centre(), "price")
    redraws = chart.redraws
    offline.bridge.select_pair("BTC/USD")
    qtbot.waitUntil(lambda: chart.pair == "BTC/USD" and chart.redraws > redraws)
    assert chart.readout.text() == ""
    assert window.geometries() == before

    # and the new pair's readout reads the new pair's prices
    hover(qtbot, chart, window.plot_centre(), "price")
    price = D(chart.readout.text().split("price ")[1].split("\n")[0].replace(",", ""))
    assert D(90_000) < price < D(92_000)
    window.away()
    qtbot.waitUntil(lambda: chart.readout.text() == "")
    assert window.geometries() == before


def test_the_readout_follows_the_data_under_a_resting_pointer(
    qtbot: QtBot, offline: PanelContext
) -> None:
    """The plot follows new ticks: the readout is read again after each frame, so it names
    the time now under the pointer, not the one of the last mouse move."""
    window = Docks(qtbot, offline)
    chart = window.chart
    feed(chart)
    qtbot.waitUntil(lambda: chart.drawn_samples > 0 and not chart.redraw_pending())
    qtbot.waitUntil(lambda: chart.price_plot.vb.viewRange()[1][0] > 3000)
    hover(qtbot, chart, window.plot_centre(), "price")
    first = chart.readout.text()
    # a minute more of ticks: the view's time range moves on under the resting pointer
    for i in range(120):
        chart.add_ticks({"ETH/USD": top("ETH/USD", "3000.00", "3000.48")}, at=T0 + TICKS / 2 + i)
    qtbot.waitUntil(lambda: chart.readout.text() not in ("", first))
    assert chart.readout.text().split("   ")[0] > first.split("   ")[0]  # a later time


def test_a_hidden_chart_shows_no_old_readout_when_shown_again(
    qtbot: QtBot, offline: PanelContext
) -> None:
    window = Docks(qtbot, offline)
    chart = window.chart
    feed(chart)
    qtbot.waitUntil(lambda: chart.drawn_samples > 0 and not chart.redraw_pending())
    qtbot.waitUntil(lambda: chart.price_plot.vb.viewRange()[1][0] > 3000)
    hover(qtbot, chart, window.plot_centre(), "price")
    toggle = window.docks["chart"].toggleViewAction()  # View > Chart, as the menu does it
    toggle.trigger()
    qtbot.waitUntil(lambda: not chart.isVisible())
    toggle.trigger()
    qtbot.waitUntil(chart.isVisible)
    assert chart.readout.text() == ""
    assert not chart._vlines[chart.price_plot].isVisible()
