"""The audit trail dock against the real sandbox: orders and a quote accept sent through the real
desks, one order's answer lost, then the dock lists exactly what was sent with its outcome (the
lost one unknown), filters by the keys a trader presses, opens the exact body sent, copies a row
and exports the view to CSV."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from app.domain import Amount
from app.services.audit_trail import AuditRow, AuditTrail, utc_ms
from app.services.order_desk import SubmitResult
from app.services.rfq_desk import AcceptResult
from app.services.ticket import TicketInput
from app.ui.csv_export import EXPORT_ROLE, header_texts
from app.ui.models.audit_model import COLUMNS, EXPORT_ONLY
from app.ui.models.columns import column_numbers
from app.ui.panels.audit import AuditPanel
from tests.harness import Faults
from tests.helpers.live import Live
from tests.helpers.qt import run, shown
from tests.ui.records_helpers import export_through_dialog

COL = column_numbers(COLUMNS)
WAIT_MS = 15_000
LOCAL_MS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d$")
UTC_MS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


@dataclass
class Sent:
    live: Live
    panel: AuditPanel
    lost: SubmitResult
    market: SubmitResult
    accepted: AcceptResult

    def rows(self) -> list[AuditRow]:
        """The rows as the view shows them (filter and sort)."""
        proxy, model = self.panel.proxy, self.panel.model
        return [
            model.audit_row(proxy.mapToSource(proxy.index(row, 0)).row())
            for row in range(proxy.rowCount())
        ]

    def shown_ids(self) -> list[str]:
        return [row.client_order_id for row in self.rows()]


def open_panel(qtbot: QtBot, live: Live, refresh_ms: int = 5000) -> AuditPanel:
    trail = AuditTrail.of(live.desks)
    panel = shown(qtbot, AuditPanel(live.context, trail, refresh_ms=refresh_ms), 1400, 500)
    qtbot.waitUntil(lambda: panel.reads >= 1, timeout=WAIT_MS)
    return panel


def sent_posts(faults: Faults, account: str) -> list[str]:
    """The paths of the orders and accepts the sandbox saw from ``account``."""
    with faults.sandbox.admin() as admin:
        requests = admin.get(Faults.PATH).json()["requests"]
    return [
        r["path"]
        for r in requests
        if r["method"] == "POST"
        and account in r["path"]
        and re.search(r"/order(/limit)?$|/accept$", r["path"])
    ]


@pytest.fixture
def sent(qtbot: QtBot, live: Live, faults: Faults) -> Sent:
    """An order whose connection is cut before it runs (its answer lost, it stays unknown), a
    market order, and an RFQ accept, all through the live desks, with the dock open."""
    account = live.account.account
    faults(
        {"kind": "latency", "path": ".*", "rate": 0},  # the sandbox logs every request
        {"kind": "drop", "path": f"/account/{account}/order(/limit)?$", "count": 1},
    )
    panel = open_panel(qtbot, live)
    assert panel.model.rowCount() == 0
    desk = live.desks.orders
    desk.settle_delays, desk.session_delay = (600.0,), 600.0  # it stays unknown here
    lost = run(qtbot, desk.submit(TicketInput("USD", "BTC", Decimal(100))))
    assert lost.status == "unknown", lost.message
    market = run(qtbot, desk.submit(TicketInput("USD", "BTC", Decimal(50))))
    assert market.status == "filled", market.message
    rfq = live.desks.rfq
    qtbot.waitUntil(
        lambda: "BTC/USD" in rfq.market.top_of_book and rfq.market.balances is not None,
        timeout=WAIT_MS,
    )
    run(qtbot, rfq.request("BTC/USD", Amount(Decimal("0.01"), "BTC")))
    accepted = run(qtbot, rfq.accept("buy"))
    assert accepted.status == "filled", accepted
    qtbot.waitUntil(lambda: panel.model.rowCount() == 3, timeout=WAIT_MS)  # no click needed
    return Sent(live, panel, lost, market, accepted)


def test_the_trail_lists_exactly_the_orders_sent_including_the_lost_one(
    qtbot: QtBot, sent: Sent, faults: Faults
) -> None:
    account = sent.live.account.account
    assert len(sent_posts(faults, account)) == 3  # two orders and one accept left the terminal
    assert sent.shown_ids() == [
        sent.accepted.client_order_id,
        sent.market.client_order_id,
        sent.lost.client_order_id,
    ]  # newest first
    accept, market, lost = sent.rows()
    on_server = run(qtbot, sent.live.session.client.orders())
    server_ids = {order.client_order_id: order.order_id for order in on_server}
    assert server_ids.get(sent.market.client_order_id) == market.order_id != ""
    assert sent.lost.client_order_id not in server_ids  # cut before the server ran it
    assert sent.accepted.order is not None and accept.order_id == sent.accepted.order.order_id
    assert [r.status for r in (accept, market, lost)] == ["filled", "filled", "unknown"]
    model = sent.panel.model
    cells = [[model.cell(row, column).display for column in range(3)] for row in range(3)]
    assert cells[1][COL["what"]] == "Buy BTC for 50 USD (market)"
    assert cells[0][COL["what"]].startswith("Accept the buy of quote ")
    outcome = model.index(2, COL["outcome"])
    assert model.data(outcome) == "unknown — answer lost"
    assert model.data(outcome, EXPORT_ROLE) == "unknown"
    assert model.data(outcome, Qt.ItemDataRole.ForegroundRole) == model.palette.warning
    for row in (accept, market, lost):
        assert row.sent_at is not None and row.intent_at <= row.sent_at <= row.updated_at
    assert "Newest" not in sent.panel.status_label.text()
    assert sent.panel.status_label.text().startswith("3 entries")


@pytest.mark.slow
def test_filters_follow_the_keys_the_trader_presses(qtbot: QtBot, sent: Sent) -> None:
    panel = sent.panel
    QTest.mouseClick(panel.search, Qt.MouseButton.LeftButton)
    QTest.keyClicks(panel.search, "answer lost")
    qtbot.waitUntil(lambda: sent.shown_ids() == [sent.lost.client_order_id], timeout=WAIT_MS)
    QTest.keyClick(panel.search, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    QTest.keyClick(panel.search, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: len(sent.shown_ids()) == 3, timeout=WAIT_MS)
    QTest.keyClicks(panel.search, sent.market.client_order_id.upper())  # ids, any case
    qtbot.waitUntil(lambda: sent.shown_ids() == [sent.market.client_order_id], timeout=WAIT_MS)
    panel.search.clear()
    panel.kind_filter.setFocus()
    QTest.keyClick(panel.kind_filter, Qt.Key.Key_End)  # the last type: RFQ accept
    assert panel.kind_filter.currentText() == "RFQ accept"
    qtbot.waitUntil(lambda: sent.shown_ids() == [sent.accepted.client_order_id], timeout=WAIT_MS)
    QTest.keyClick(panel.kind_filter, Qt.Key.Key_Home)
    panel.outcome_filter.setFocus()
    while panel.outcome_filter.currentData() != "unknown":
        QTest.keyClick(panel.outcome_filter, Qt.Key.Key_Down)
    qtbot.waitUntil(lambda: sent.shown_ids() == [sent.lost.client_order_id], timeout=WAIT_MS)
    QTest.keyClick(panel.outcome_filter, Qt.Key.Key_Home)
    qtbot.waitUntil(lambda: len(sent.shown_ids()) == 3, timeout=WAIT_MS)
    # an intent time range: from the market order's intent on (local time, whole seconds)
    panel.start_filter.set_value(sent.rows()[0].intent_at)
    qtbot.waitUntil(lambda: sent.lost.client_order_id not in sent.shown_ids(), timeout=WAIT_MS)


def test_load_more_shows_older_entries(qtbot: QtBot, sent: Sent) -> None:
    panel = sent.panel
    panel.limit = 1  # a page of one: the other two are older
    panel.read()
    qtbot.waitUntil(lambda: panel.model.rowCount() == 1, timeout=WAIT_MS)
    assert sent.shown_ids() == [sent.accepted.client_order_id]
    assert panel.status_label.text() == "Newest 1 entry · older ones: Load more"
    assert panel.load_more_button.isEnabled()
    QTest.mouseClick(panel.load_more_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.model.rowCount() == 3, timeout=WAIT_MS)
    assert not panel.load_more_button.isEnabled()
    assert panel.status_label.text() == "3 entries"


def test_details_show_the_exact_body_sent_and_every_field(qtbot: QtBot, sent: Sent) -> None:
    panel = sent.panel
    table = panel.table
    centre = table.visualRect(panel.proxy.index(2, COL["what"])).center()
    QTest.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=centre)
    QTest.keyClick(table, Qt.Key.Key_Return)
    dialog = panel.details_dialog
    assert dialog is not None and dialog.isVisible()
    lost = sent.rows()[2]
    assert dialog.json_view.toPlainText() == lost.body  # the bytes that left, verbatim
    assert '"clientOrderId"' in lost.body and sent.lost.client_order_id in lost.body
    fields = {name: edit.text() for name, edit in dialog.edits.items()}
    assert fields["status"] == "unknown" and fields["clientOrderId"] == lost.client_order_id
    assert fields["send time (UTC)"] == utc_ms(lost.sent_at)
    assert LOCAL_MS.match(fields["intent time (local)"])
    dialog.close()
    QApplication.clipboard().clear()
    QTest.mouseClick(panel.copy_button, Qt.MouseButton.LeftButton)
    expected = [
        str(panel.proxy.data(panel.proxy.index(2, column), EXPORT_ROLE))
        for column in range(panel.proxy.columnCount())
    ]
    assert QApplication.clipboard().text() == "\t".join(expected)


def test_csv_export_is_the_view_with_times_in_ms_utc_and_local(
    qtbot: QtBot, sent: Sent, tmp_path: Path
) -> None:
    panel = sent.panel
    header = panel.table.horizontalHeader()
    what = COL["what"]
    spot = QPoint(header.sectionViewportPosition(what) + 5, header.height() // 2)
    QTest.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=spot)  # sort by it
    assert header.sortIndicatorSection() == what
    shown = sent.shown_ids()
    assert shown == [  # "Accept the buy…", "Buy BTC for 100 USD…", "Buy BTC for 50 USD…"
        sent.accepted.client_order_id,
        sent.lost.client_order_id,
        sent.market.client_order_id,
    ]
    path = tmp_path / "audit.csv"
    assert panel.export_to(path) == 3
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == header_texts(panel.proxy)
    assert rows[1:] == [
        [str(panel.proxy.data(panel.proxy.index(r, c), EXPORT_ROLE)) for c in range(len(COLUMNS))]
        for r in range(3)
    ]
    assert [row[COL["client_order_id"]] for row in rows[1:]] == shown
    for row in rows[1:]:
        assert LOCAL_MS.match(row[COL["intent"]]) and LOCAL_MS.match(row[COL["sent"]])
        assert UTC_MS.match(row[COL["intent_utc"]]) and UTC_MS.match(row[COL["sent_utc"]])
    for key in EXPORT_ONLY:
        assert panel.table.isColumnHidden(COL[key]) and rows[0][COL[key]]
    # through the (non-blocking) file dialog, as the button does it
    chosen = tmp_path / "via-dialog.csv"
    export_through_dialog(qtbot, panel, chosen, WAIT_MS)
    assert chosen.read_text(encoding="utf-8") == path.read_text(encoding="utf-8")


def test_a_change_nobody_publishes_shows_on_the_slow_timer(qtbot: QtBot, live: Live) -> None:
    """What only the journal knows (a look-up written by a settler, another window) shows
    within the refresh interval, with no server read."""
    panel = open_panel(qtbot, live, refresh_ms=200)
    journal = live.desks.journal
    journal.record_intent("tt-quiet", "market", live.account.account, {"size": "1"})
    qtbot.waitUntil(lambda: panel.model.rowCount() == 1, timeout=WAIT_MS)
    journal.record_outcome("tt-quiet", "dismissed", detail="dismissed by the trader")
    qtbot.waitUntil(
        lambda: panel.model.cell(0, COL["outcome"]).display == "dismissed while unknown",
        timeout=WAIT_MS,
    )
    assert panel.model.cell(0, COL["sent"]).display == "—"  # journaled, never sent
    changes: list[str] = []  # a page read again unchanged is not applied: nothing repaints
    panel.model.dataChanged.connect(lambda *_: changes.append("data"))
    panel.model.rowsInserted.connect(lambda *_: changes.append("rows"))
    panel.model.modelReset.connect(lambda: changes.append("reset"))
    reads = panel.reads
    qtbot.waitUntil(lambda: panel.reads >= reads + 2, timeout=WAIT_MS)
    assert changes == []


def test_the_models_pass_the_model_tester(sent: Sent, qtmodeltester: ModelTester) -> None:
    qtmodeltester.check(sent.panel.model)  # type: ignore[no-untyped-call]
    qtmodeltester.check(sent.panel.proxy)  # type: ignore[no-untyped-call]
