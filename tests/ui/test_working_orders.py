"""The Working orders dock and the chart's fill markers against the real sandbox: a TWAP's
progress to filled, Pause / Resume / Stop by real clicks and keys, Stop's confirmation saying
what is still out, one marker per child fill."""

from __future__ import annotations

from decimal import Decimal

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox, QPushButton
from pytestqt.exceptions import TimeoutError as QtTimeout
from pytestqt.qtbot import QtBot

from app.services.algos.engine import ExecutionEngine
from app.services.algos.parents import ARMED_HERE, Parent
from app.services.algos.specs import AlgoSpec
from app.ui.models.working_model import PROGRESS_ROLE
from app.ui.panels.chart import ChartPanel
from app.ui.panels.orders import OrdersPanel
from app.ui.panels.working_orders import NO_CANCEL, WorkingOrdersPanel
from tests.helpers.live import Live

PAIR = "BTC/USD"


def engine_of(live: Live) -> ExecutionEngine:
    engine = live.bridge.algos
    assert engine is not None
    engine.resting_poll = 0.1
    return engine


def ready(qtbot: QtBot, live: Live) -> None:
    live.bridge.select_pair(PAIR)
    qtbot.waitUntil(lambda: PAIR in (live.bridge.topOfBook.latest or {}), timeout=10_000)


def dock(qtbot: QtBot, live: Live) -> WorkingOrdersPanel:
    panel = WorkingOrdersPanel(live.context)
    qtbot.addWidget(panel)
    panel.resize(1100, 420)
    panel.show()
    return panel


def cell(panel: WorkingOrdersPanel, parent: Parent, key: str) -> str:
    row = panel.model.position(parent.id)
    assert row is not None
    return panel.model.cell(row, panel.model.column(key)).display


def state(parent: Parent) -> str:
    """The parent's state now (a plain str: mypy would narrow the attribute between clicks)."""
    return str(parent.state)


def twap(amount: str, slices: int, seconds: str) -> AlgoSpec:
    return AlgoSpec(
        "twap",
        PAIR,
        "buy",
        Decimal(amount),
        slices=slices,
        duration_seconds=Decimal(seconds),
        collar_bps=Decimal(50),
    )


@pytest.mark.slow
def test_a_twap_shows_its_progress_to_filled(qtbot: QtBot, live: Live) -> None:
    ready(qtbot, live)
    panel = dock(qtbot, live)
    resets: list[bool] = []
    panel.model.modelReset.connect(lambda: resets.append(True))
    parent = engine_of(live).submit(twap("3000", 3, "0.6"))
    qtbot.waitUntil(lambda: panel.model.position(parent.id) is not None, timeout=15_000)
    assert cell(panel, parent, "algo") == "TWAP" and cell(panel, parent, "side") == "Buy"
    qtbot.waitUntil(lambda: cell(panel, parent, "state") == "Done", timeout=20_000)
    assert cell(panel, parent, "progress") == "3,000.00 / 3,000.00 USD"
    assert cell(panel, parent, "note") == "filled"
    row = panel.model.position(parent.id)
    index = panel.model.index(row or 0, panel.model.column("progress"))
    assert index.data(PROGRESS_ROLE) == (Decimal(3000), Decimal(3000))
    assert cell(panel, parent, "average") != "—"  # QUOTE per BASE, at the pair's increment
    assert cell(panel, parent, "bps") != "—"
    # the children of the selected parent: three slices, each with its order id
    panel.select(parent.id)
    qtbot.waitUntil(lambda: panel.children_model.rowCount() == 3, timeout=15_000)
    statuses = [
        panel.children_model.cell(r, panel.children_model.column("status")).display
        for r in range(3)
    ]
    assert statuses == ["Filled"] * 3
    assert all(panel.children_model.record(r).child.order_id for r in range(3))
    # updates arrived as row changes, never as a reset of the table
    assert resets == []
    # a double-click on a child shows it in the Orders dock, searched by its clientOrderId;
    # its context menu shows it in the audit trail too
    orders = OrdersPanel(live.context)
    qtbot.addWidget(orders)
    shown: list[tuple[str, str]] = []
    live.context.records.show.connect(lambda where, words: shown.append((where, words)))
    first = panel.children_table.visualRect(panel.children_model.index(0, 1)).center()
    viewport = panel.children_table.viewport()
    no_keys = Qt.KeyboardModifier.NoModifier
    QTest.mouseClick(viewport, Qt.MouseButton.LeftButton, no_keys, first)
    QTest.mouseDClick(viewport, Qt.MouseButton.LeftButton, no_keys, first)
    child_id = panel.children_model.record(0).child.client_order_id
    assert shown == [("orders", child_id)]
    assert orders.search.text() == child_id
    audit = panel.children_table.findChild(QAction, "showChildInAudit")
    assert audit is not None
    audit.trigger()
    assert shown[-1] == ("audit", child_id)


def test_pause_resume_and_stop_with_clicks_and_keys(qtbot: QtBot, live: Live) -> None:
    ready(qtbot, live)
    panel = dock(qtbot, live)
    parent = engine_of(live).submit(twap("4000", 4, "600"))  # one slice now, the next in 200 s
    qtbot.waitUntil(lambda: panel.model.position(parent.id) is not None, timeout=15_000)
    panel.select(parent.id)
    qtbot.waitUntil(lambda: len(parent.children) == 1 and not parent.busy, timeout=10_000)
    try:
        qtbot.waitUntil(lambda: cell(panel, parent, "next") != "—", timeout=15_000)
    except QtTimeout as exc:
        row = panel.rows.get(parent.id)
        raise AssertionError(
            f"no next child shown: state {parent.state} ({parent.note}), slices "
            f"{parent.slices_sent}, last {parent.last_slice_at}, row {row}"
        ) from exc

    QTest.mouseClick(panel.pause_button, Qt.MouseButton.LeftButton)
    assert parent.state == "paused"
    qtbot.waitUntil(lambda: cell(panel, parent, "state") == "Paused", timeout=15_000)
    assert panel.resume_button.isEnabled() and not panel.pause_button.isEnabled()

    QTest.mouseClick(panel.resume_button, Qt.MouseButton.LeftButton)
    assert state(parent) == "working"
    qtbot.waitUntil(lambda: cell(panel, parent, "state") == "Working", timeout=15_000)

    panel.table.setFocus()
    QTest.keyClick(panel.table, Qt.Key.Key_P)
    assert state(parent) == "paused"
    QTest.keyClick(panel.table, Qt.Key.Key_R)
    assert state(parent) == "working"

    QTest.keyClick(panel.table, Qt.Key.Key_S)
    box = panel.confirmation
    assert isinstance(box, QMessageBox) and box.isVisible()
    assert NO_CANCEL in box.informativeText()
    assert parent.in_flight_words() in box.informativeText()
    keep = next(b for b in box.buttons() if b.text() == "Keep working")
    QTest.mouseClick(keep, Qt.MouseButton.LeftButton)
    assert state(parent) == "working"  # kept: nothing stopped

    QTest.mouseClick(panel.stop_button, Qt.MouseButton.LeftButton)
    box = panel.confirmation
    assert box is not None
    stop = box.findChild(QPushButton, "stopParent")
    assert stop is not None
    QTest.mouseClick(stop, Qt.MouseButton.LeftButton)
    assert state(parent) == "stopped"
    qtbot.waitUntil(lambda: cell(panel, parent, "state") == "Stopped", timeout=15_000)
    assert not panel.stop_button.isEnabled() and not panel.resume_button.isEnabled()
    assert len(parent.children) == 1  # nothing more was sent


def test_stop_confirmation_says_a_resting_child_stays_out(qtbot: QtBot, live: Live) -> None:
    ready(qtbot, live)
    panel = dock(qtbot, live)
    engine = engine_of(live)
    parent = engine.submit(  # a limit far under the ask: the child rests until its end time
        AlgoSpec(
            "timed",
            PAIR,
            "buy",
            Decimal(500),
            limit_price=Decimal(1000),
            start_at=engine.server_now(),
        )
    )
    qtbot.waitUntil(lambda: any(c.status == "resting" for c in parent.children), timeout=10_000)
    qtbot.waitUntil(lambda: panel.model.position(parent.id) is not None, timeout=15_000)
    panel.select(parent.id)
    box = panel.ask_stop()
    assert box is not None
    words = box.informativeText()
    assert "500 USD still out: 1 resting until its end time" in words
    assert "cannot be cancelled" in words and "no cancel" in words
    stop = box.findChild(QPushButton, "stopParent")
    assert stop is not None
    QTest.mouseClick(stop, Qt.MouseButton.LeftButton)
    assert state(parent) == "stopped" and "resting until its end time" in parent.note
    assert parent.children[0].status == "resting"  # still out: stop cancels nothing


def test_an_armed_stop_says_it_is_armed_here(qtbot: QtBot, live: Live) -> None:
    ready(qtbot, live)
    panel = dock(qtbot, live)
    engine_of(live)
    parent = live.bridge.submit_algo(
        AlgoSpec("stop", PAIR, "sell", Decimal("0.01"), trigger=Decimal(1))
    )
    qtbot.waitUntil(lambda: panel.model.position(parent.id) is not None, timeout=15_000)
    assert cell(panel, parent, "state") == "Armed here"
    assert ARMED_HERE in cell(panel, parent, "note")
    row = panel.model.position(parent.id) or 0
    tip = panel.model.index(row, 0).data(Qt.ItemDataRole.ToolTipRole)
    assert tip == ARMED_HERE
    panel.select(parent.id)
    QTest.mouseClick(panel.pause_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: cell(panel, parent, "state") == "Disarmed", timeout=15_000)
    assert ARMED_HERE in cell(panel, parent, "note")
    assert panel.resume_button.text() == "&Re-arm"
    QTest.mouseClick(panel.resume_button, Qt.MouseButton.LeftButton)
    assert parent.state == "armed"


@pytest.mark.slow
def test_the_chart_marks_each_child_fill(qtbot: QtBot, live: Live) -> None:
    ready(qtbot, live)
    chart = ChartPanel(live.context)
    qtbot.addWidget(chart)
    chart.resize(800, 400)
    chart.show()
    engine = engine_of(live)
    buy = engine.submit(twap("2000", 2, "0.2"))
    qtbot.waitUntil(lambda: buy.ended, timeout=20_000)
    sell = engine.submit(AlgoSpec("clip", PAIR, "sell", Decimal("0.02"), display=Decimal("0.01")))
    qtbot.waitUntil(lambda: sell.ended, timeout=20_000)
    qtbot.waitUntil(lambda: len(chart.marker_points) == 4, timeout=15_000)
    sides = sorted(side for _, _, side in chart.marker_points)
    assert sides == ["buy", "buy", "sell", "sell"]
    symbols = sorted(str(s) for s in chart.fill_markers.data["symbol"])
    assert symbols == ["t", "t", "t1", "t1"]  # down for a sell, up for a buy
    top = live.bridge.topOfBook.latest or {}
    mid = float(top[PAIR].mid)
    assert all(abs(price - mid) / mid < 0.02 for _, price, _ in chart.marker_points)
    # each at the time the service says it executed (the chart's axis is local time)
    offset = live.bridge.clock_offset
    executed = sorted(
        ((child.filled_at or child.sent_at) - offset).timestamp()
        for parent in (buy, sell)
        for child in parent.children
    )
    assert all(child.filled_at is not None for child in (*buy.children, *sell.children))
    # (the clock offset is read at each draw: it may move by microseconds in between)
    marked = sorted(at for at, _, _ in chart.marker_points)
    assert all(abs(a - b) < 0.001 for a, b in zip(marked, executed, strict=True))
    QApplication.processEvents()
