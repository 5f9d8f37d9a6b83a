"""Column widths of every record table against the real sandbox, at the widths the trader uses
(1280, 1366, 1920 px): no number or time is ever drawn cut, a cut text is cut at its end (never
in the middle) with its whole value in the tooltip the trader sees (a real help event), and at
1920 px the words are whole too — the ids and notes gave the width.

What the trader saw at 1920 px: deposit amounts cut in the middle ("25.0…0000") beside a 700 px
"Completed by"; the orders' "resting · 1 h 0…" and End cut beside 400 px of ids; the audit
trail's order text and outcome cut. Each table here is filled through its real model by a
real session, partly after it was first shown (rows that come later are measured too), and
what each cell draws is computed with the view's own font metrics (``columns_helpers``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QTableView
from pytestqt.qtbot import QtBot

from app.domain import utc_now
from app.services.algos.specs import AlgoSpec
from app.services.audit_trail import AuditTrail
from app.services.ticket import TicketInput
from app.ui.column_sizer import ColumnSizer
from app.ui.column_widths import Fit
from app.ui.panels.audit import AuditPanel
from app.ui.panels.deposits import DepositsPanel
from app.ui.panels.ledger import LedgerPanel
from app.ui.panels.orders import OrdersPanel
from app.ui.panels.working_orders import WorkingOrdersPanel
from tests.harness import Faults
from tests.helpers.live import Live
from tests.helpers.qt import run
from tests.ui.columns_helpers import (
    WAIT_MS,
    WIDTHS,
    cut_cells,
    cut_cells_at,
    cut_wrongly,
    show_at,
    tooltip_at,
)
from tests.ui.records_helpers import choose

#: The offscreen platform cannot raise the tooltip's window (the tooltip still shows its text).
pytestmark = pytest.mark.qt_log_ignore("^This plugin does not support raise\\(\\)$")

D = Decimal
WIDE = 1920
TOP_UP = "/api/v1/sandbox/account/{account}/deposit"


def whole_at_every_width(
    qtbot: QtBot, panel: Any, views: Sequence[tuple[QTableView, ColumnSizer]]
) -> None:
    """At each width: numbers and times whole, cuts only at the end (ids: whole in the
    tooltip); at 1920 px the words whole too."""
    for width in WIDTHS:
        for view, sizer in views:
            show_at(qtbot, panel, view, sizer, width)
        for view, _ in views:
            assert view.textElideMode() == Qt.TextElideMode.ElideRight
            assert cut_cells(view, {Fit.WHOLE}) == [], (view.objectName(), width)
            assert cut_wrongly(view) == [], (view.objectName(), width)
            tips = {column: (row, whole) for row, column, whole, _ in cut_cells_at(view)}
            for column, (row, whole) in tips.items():  # one cut cell per column
                assert tooltip_at(view, row, column).startswith(whole), (column, width)
            if width == WIDE:
                assert cut_cells(view, {Fit.TEXT}) == [], (view.objectName(), width)


def test_orders_amounts_prices_times_and_time_left_are_whole(qtbot: QtBot, live: Live) -> None:
    client = live.session.client
    run(qtbot, client.market_order("USD", "BTC", D("25000")))
    panel = OrdersPanel(live.context, live.desks.journal, interval=0.3)
    qtbot.addWidget(panel)
    table = panel.table
    show_at(qtbot, panel, table, table.sizer, WIDE)
    qtbot.waitUntil(lambda: panel.proxy.rowCount() == 1, timeout=WAIT_MS)
    # After the first rows are fitted: a sell, and resting orders whose status counts down.
    end = utc_now() + timedelta(hours=1, minutes=5)
    run(qtbot, client.market_order("BTC", "USD", D("0.12345678")))
    run(qtbot, client.limit_order("USD", "BTC", D("2500"), limit=D("0.0000125"), end_at=end))
    run(qtbot, client.limit_order("USD", "BTC", D("12500.5"), limit=D("0.00001258"), end_at=end))
    run(qtbot, client.limit_order("BTC", "USD", D("1.23456789"), limit=D("99000.5"), end_at=end))
    qtbot.waitUntil(lambda: panel.proxy.rowCount() == 5, timeout=WAIT_MS)
    status = panel.model.column("status")
    texts = [str(panel.proxy.index(row, status).data()) for row in range(5)]
    assert sum(text.startswith("resting · 1 h 0") for text in texts) == 3, texts
    whole_at_every_width(qtbot, panel, [(table, table.sizer)])


def test_deposit_amounts_are_whole_and_names_give_way(qtbot: QtBot, live: Live) -> None:
    """The page comes while the dock is behind another tab (never shown yet), as in the
    window; then it is shown."""
    for amount, network in (("2.5 BTC", None), ("100000 USDT", "tron"), ("25 ETH", None)):
        payload: dict[str, Any] = {"amount": amount}
        if network:
            payload["network"] = network
        response = live.account.post(TOP_UP, payload)
        assert response.status_code == 200, response.text
    panel = DepositsPanel(live.context)
    qtbot.addWidget(panel)
    qtbot.waitUntil(lambda: panel.model.rowCount() == 3, timeout=WAIT_MS)
    column = panel.model.column("amount")
    assert {str(panel.proxy.index(row, column).data()) for row in range(3)} >= {"25.00000000"}
    whole_at_every_width(qtbot, panel, [(panel.table, panel.sizer)])


def test_ledger_amounts_balances_and_prices_are_whole(qtbot: QtBot, live: Live) -> None:
    client = live.session.client
    for source, destination, size in (
        ("USD", "BTC", "25000"),
        ("BTC", "USD", "0.12345678"),
        ("USD", "BTC", "1234.56"),
    ):
        run(qtbot, client.market_order(source, destination, D(size)))
    panel = LedgerPanel(live.context)
    qtbot.addWidget(panel)
    table = panel.table
    show_at(qtbot, panel, table, table.sizer, WIDE)
    qtbot.waitUntil(lambda: not panel.busy and panel.model.rowCount() > 6, timeout=WAIT_MS)
    whole_at_every_width(qtbot, panel, [(table, table.sizer)])
    # One asset: the running balance column fills.
    before = panel.snapshot
    choose(panel.asset_filter, "BTC")
    QTest.mouseClick(panel.search_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not panel.busy and panel.snapshot is not before, timeout=WAIT_MS)
    balance = panel.model.column("balance")
    assert all(panel.proxy.index(r, balance).data() != "—" for r in range(panel.proxy.rowCount()))
    whole_at_every_width(qtbot, panel, [(table, table.sizer)])


def test_audit_order_text_outcome_and_times_are_whole(
    qtbot: QtBot, live: Live, faults: Faults
) -> None:
    account = live.account.account
    faults({"kind": "drop", "path": f"/account/{account}/order(/limit)?$", "count": 1})
    desk = live.desks.orders
    desk.settle_delays, desk.session_delay = (600.0,), 600.0  # the lost one stays unknown
    for source, destination, size in (
        ("USD", "BTC", "100"),
        ("USD", "BTC", "25000"),
        ("BTC", "USD", "0.12345678"),
    ):
        run(qtbot, desk.submit(TicketInput(source, destination, D(size))))
    panel = AuditPanel(live.context, AuditTrail.of(live.desks))
    qtbot.addWidget(panel)
    table = panel.table
    show_at(qtbot, panel, table, table.sizer, WIDE)
    qtbot.waitUntil(lambda: panel.model.rowCount() == 3, timeout=WAIT_MS)
    outcome = panel.model.column("outcome")
    assert "unknown — answer lost" in {
        str(panel.proxy.index(row, outcome).data()) for row in range(3)
    }
    whole_at_every_width(qtbot, panel, [(table, table.sizer)])


def test_working_orders_figures_are_whole(qtbot: QtBot, live: Live) -> None:
    live.bridge.select_pair("BTC/USD")
    qtbot.waitUntil(lambda: "BTC/USD" in (live.bridge.topOfBook.latest or {}), timeout=WAIT_MS)
    engine = live.bridge.algos
    assert engine is not None
    engine.resting_poll = 0.1
    panel = WorkingOrdersPanel(live.context)
    qtbot.addWidget(panel)
    show_at(qtbot, panel, panel.table, panel.table.sizer, WIDE)
    spec = AlgoSpec(
        "twap",
        "BTC/USD",
        "buy",
        D("3000"),
        slices=3,
        duration_seconds=D("0.6"),
        collar_bps=D(50),
    )
    parent = engine.submit(spec)
    qtbot.waitUntil(lambda: parent.ended, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: panel.children_model.rowCount() == 3, timeout=WAIT_MS)
    views = [(panel.table, panel.table.sizer), (panel.children_table, panel.children_table.sizer)]
    whole_at_every_width(qtbot, panel, views)
