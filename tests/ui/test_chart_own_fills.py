"""The chart marks every fill of the trader's on the shown pair, not only an algo's children:
hand orders at their fill price and the service's time, each once, bigger for a bigger fill; a
fill of another pair is not drawn on this one."""

from __future__ import annotations

from decimal import Decimal

from pytestqt.qtbot import QtBot

from app.domain.pair_terms import Trade
from app.services.ticket import TicketInput
from app.ui.panels.chart import ChartPanel
from tests.helpers.live import Live
from tests.helpers.qt import run

PAIR = "BTC/USD"
WAIT_MS = 15_000


def test_hand_orders_are_marked_once_each_on_their_pair_only(qtbot: QtBot, live: Live) -> None:
    live.bridge.select_pair(PAIR)
    qtbot.waitUntil(lambda: PAIR in (live.bridge.topOfBook.latest or {}), timeout=WAIT_MS)
    chart = ChartPanel(live.context)
    qtbot.addWidget(chart)
    chart.resize(800, 400)
    chart.show()
    desk = live.desks.orders
    small = run(qtbot, desk.submit(TicketInput("USD", "BTC", Decimal(100))))
    assert small.status == "filled" and small.order is not None, small.message
    qtbot.waitUntil(lambda: len(chart.marker_points) == 1, timeout=WAIT_MS)
    trade = Trade.of(small.order, [PAIR])
    assert trade is not None
    at, price, side = chart.marker_points[0]
    assert side == "buy" and price == float(trade.price)
    executed = small.order.result.executed_at or small.order.submitted_at
    assert executed is not None
    assert abs(at - (executed - live.bridge.clock_offset).timestamp()) < 0.001

    other = run(qtbot, desk.submit(TicketInput("BTC", "USD", Decimal("0.05"))))  # a sell
    assert other.status == "filled", other.message
    qtbot.waitUntil(lambda: len(chart.marker_points) == 2, timeout=WAIT_MS)
    assert sorted(s for _, _, s in chart.marker_points) == ["buy", "sell"]
    sizes = dict(zip((s for _, _, s in chart.marker_points), chart.marker_sizes, strict=True))
    assert sizes["sell"] > sizes["buy"]  # 0.05 BTC against about 0.001 BTC

    eth = run(qtbot, desk.submit(TicketInput("USD", "ETH", Decimal(100))))
    assert eth.status == "filled", eth.message
    assert len(live.bridge.own_fills) == 3
    drawn = chart.redraws
    qtbot.waitUntil(lambda: chart.redraws >= drawn + 2, timeout=WAIT_MS)  # the markers again
    assert len(chart.marker_points) == 2  # ETH/USD's fill is not on BTC/USD
