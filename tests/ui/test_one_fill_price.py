"""One price for one fill, against the real sandbox: a sale of 0.1 BTC shows the same price text
in the ticket's outcome line, the orders table, the ledger, the notice, the audit trail and the
command line — the average fill price (what was received over what was sold), never the
service's rate beside it. The service rounds the total down to the cent, so the rate (the bid
the order met) and the average differ in the second decimal whenever the bid's tenth of a cent
is not zero."""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import ROUND_HALF_EVEN, Decimal, localcontext

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from app.domain.money import MONEY_CONTEXT
from app.services.audit_trail import AuditQuery, AuditTrail
from app.services.log_events import EventKind, LogEvent
from app.services.ticket import TicketInput
from app.ui.models.columns import column_numbers
from app.ui.models.ledger_model import COLUMNS as LEDGER_COLUMNS
from app.ui.models.orders_model import COLUMNS as ORDER_COLUMNS
from app.ui.notices import NoticeArea
from app.ui.panels.ledger import LedgerPanel
from app.ui.panels.orders import OrdersPanel
from tests.harness import SandboxProcess
from tests.helpers.cli import Cli, column_values
from tests.helpers.live import LiveFactory
from tests.helpers.qt import run

D = Decimal
WAIT_MS = 15_000
ORDERS = column_numbers(ORDER_COLUMNS)
LEDGER = column_numbers(LEDGER_COLUMNS)


@pytest.mark.slow
def test_a_fill_shows_one_price_in_every_view(
    qtbot: QtBot, live_factory: LiveFactory, sandbox_factory: Callable[..., SandboxProcess]
) -> None:
    """The market at rest: the bid is 90,995.45, so 0.1 BTC brings 9,099.545 USD, paid as
    9,099.54: an average fill price of 90,995.40."""
    live = live_factory(sandbox_factory("--tick", "100000"))
    events: list[LogEvent] = []
    live.session.events.subscribe(events.append)
    result = run(qtbot, live.desks.orders.submit(TicketInput("BTC", "USD", D("0.1"))))
    assert result.status == "filled" and result.order is not None
    order = result.order
    assert order.result.total is not None and order.result.price is not None
    with localcontext(MONEY_CONTEXT):
        average = order.result.total.value / D("0.1")
    price = f"{average.quantize(D('0.01'), rounding=ROUND_HALF_EVEN):,}"
    rate = f"{order.result.price.value.quantize(D('0.01')):,}"  # the bid the order met
    assert (price, rate) == ("90,995.40", "90,995.45")
    said = f"at an average fill price of {price} USD"

    # The ticket's outcome line (the desk's answer, which the ticket shows) and the notice.
    assert said in result.message, result.message
    [fill] = [event for event in events if event.kind == EventKind.FILL]
    host = QWidget()
    qtbot.addWidget(host)
    host.resize(900, 600)
    notices = NoticeArea(host)
    notices.show_notice(fill.level, fill.message)  # as the main window shows a log event
    [notice] = notices.visible_messages()
    assert said in notice, notice

    # The orders table.
    orders = OrdersPanel(live.context, live.desks.journal, interval=0.3)
    qtbot.addWidget(orders)
    qtbot.waitUntil(lambda: orders.model.position(order.order_id) is not None, timeout=WAIT_MS)
    row = orders.model.row_of(order.order_id)
    assert orders.model.cell(row, ORDERS["price"]).display == price
    header = orders.model.headerData(ORDERS["price"], Qt.Orientation.Horizontal)
    assert header == "Avg fill price"

    # The ledger: both legs of the trade.
    ledger = LedgerPanel(live.context)
    qtbot.addWidget(ledger)
    qtbot.waitUntil(lambda: not ledger.busy and ledger.snapshot is not None, timeout=WAIT_MS)
    model = ledger.model
    legs = [
        r
        for r in range(model.rowCount())
        if model.ledger_row(r).entry.transaction_id == order.order_id
    ]
    assert len(legs) == 2
    assert {model.cell(r, LEDGER["price"]).display for r in legs} == {price}
    assert model.headerData(LEDGER["price"], Qt.Orientation.Horizontal) == "Avg fill price"

    # The audit trail: the journaled fill, in the same words.
    trail = AuditTrail(live.desks.journal)
    page = run(qtbot, trail.read(AuditQuery(), live.session.pair_info, live.context.precision))
    [audited] = [row for row in page.rows if row.order_id == order.order_id]
    assert audited.detail == result.message.removesuffix(f" · order {order.order_id}")
    assert said in audited.detail

    # The command line: the order's block names one price, twice (the line and the sentence).
    cli = Cli(live.session.environment.base_url, live.account)
    shown, listed = cli("order", order.order_id), cli("orders", "--max", "1")
    assert shown.code == 0 and listed.code == 0, (shown, listed)
    assert column_values(listed.out, "AVG FILL PRICE") == {order.raw["submittedAt"]: price}
    assert re.search(rf"^Average fill price\s+{re.escape(price)} USD per BTC$", shown.out, re.M)
    assert said in shown.out
    assert set(re.findall(r"\d{2,3},\d{3}\.\d{2}", shown.out)) == {price}
    # The service's rate is in no view (the details and --json keep it).
    for text in (result.message, notice, audited.detail, shown.out):
        assert rate not in text
    cells = [orders.model.cell(row, ORDERS["price"])]
    cells += [model.cell(r, LEDGER["price"]) for r in legs]
    assert all(cell.export == "90995.40" for cell in cells)
