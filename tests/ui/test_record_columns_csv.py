"""Money in the CSV exports is written as the screen shows it: the same digits without the
thousands grouping and without the + of a credit — at the asset's precision, one number of
decimals down a column of one asset (the ledger's running balance was written with 7 decimals
and mixed padding where the screen showed 8), and still exact (no digit rounded away)."""

from __future__ import annotations

import csv
from decimal import Decimal
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from app.domain.display import DASH, digits_of
from app.ui.models.columns import Column
from app.ui.models.orders_model import SETTLING
from app.ui.models.record_view import RecordView
from app.ui.models.sorting import SORT_ROLE
from app.ui.panels.deposits import DepositsPanel
from app.ui.panels.ledger import LedgerPanel
from app.ui.panels.orders import OrdersPanel
from tests.helpers.live import Live
from tests.helpers.qt import run, shown
from tests.ui.columns_helpers import WAIT_MS
from tests.ui.records_helpers import choose

D = Decimal
TOP_UP = "/api/v1/sandbox/account/{account}/deposit"
#: Exported with more decimals than shown, on purpose: basis points show 1, export 4.
MORE_IN_EXPORT = {"vs_mid"}
#: Cells with no number: none known, or a fill's mid still settling.
NO_NUMBER = {DASH, SETTLING}


def read_csv(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def plain(display: str) -> str:
    """What the screen shows, as a CSV number: no grouping, no + on a credit."""
    return display.replace(",", "").removeprefix("+")


def money_as_shown(proxy: RecordView, rows: list[list[str]]) -> list[str]:
    """Every number column's exported cell that is not the screen's text (no grouping, no +),
    as ``column: exported != shown``; exact too: the number it reads is the cell's sort key."""
    specs: tuple[Column[Any], ...] = proxy.sourceModel().columns
    assert rows[0] == [spec.header for spec in specs]
    assert len(rows) - 1 == proxy.rowCount()
    wrong = []
    for number, spec in enumerate(specs):
        if not spec.numeric or spec.key in MORE_IN_EXPORT:
            continue
        for row, line in enumerate(rows[1:]):
            display = str(proxy.index(row, number).data())
            written = line[number]
            wanted = "" if display in NO_NUMBER else plain(display)
            if written != wanted:
                wrong.append(f"{spec.key}: {written!r} != {wanted!r}")
            elif written:
                key = proxy.index(row, number).data(SORT_ROLE)
                assert key is None or D(written) == key, (spec.key, written, key)
    return wrong


def decimals(text: str) -> int:
    return len(text.partition(".")[2])


def test_the_ledgers_balance_column_is_written_at_the_assets_precision(
    qtbot: QtBot, live: Live, tmp_path: Path
) -> None:
    """Sales whose running balance has fewer digits than BTC's 8 (1.8877 BTC): the CSV writes
    1.88770000 as the screen shows it, every balance and amount with 8 decimals."""
    client = live.session.client
    for size in ("0.1", "0.0123", "0.5"):  # from 2 BTC: 1.9, 1.8877, 1.3877
        run(qtbot, client.market_order("BTC", "USD", D(size)))
    panel = shown(qtbot, LedgerPanel(live.context), 1500, 420)
    qtbot.waitUntil(lambda: not panel.busy and panel.snapshot is not None, timeout=WAIT_MS)
    before = panel.snapshot
    choose(panel.asset_filter, "BTC")
    QTest.mouseClick(panel.search_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not panel.busy and panel.snapshot is not before, timeout=WAIT_MS)
    snapshot = panel.snapshot
    assert snapshot is not None
    balances = [row.balance for row in snapshot.rows if row.balance is not None]
    assert len(balances) == len(snapshot.rows) >= 4
    places = live.context.precision.asset("BTC")
    assert places == 8
    assert any(digits_of(b) < places for b in balances)  # 1.9 BTC, 1.8877 BTC

    path = tmp_path / "ledger.csv"
    assert panel.export_to(path) == panel.proxy.rowCount()
    rows = read_csv(path)
    balance, amount = rows[0].index("Balance"), rows[0].index("Amount")
    written = [line[balance] for line in rows[1:]]
    assert {decimals(text) for text in written} == {places}, written
    assert {decimals(line[amount]) for line in rows[1:]} == {places}
    assert [D(text) for text in written] == [
        panel.model.ledger_row(panel.proxy.mapToSource(panel.proxy.index(r, 0)).row()).balance
        for r in range(panel.proxy.rowCount())
    ]  # exact: the balances themselves
    assert money_as_shown(panel.proxy, rows) == []


def test_every_money_column_is_written_as_shown(qtbot: QtBot, live: Live, tmp_path: Path) -> None:
    """The orders' amounts, notionals, prices, limits and mids, the ledger's amounts and prices
    of every asset, the deposits' amounts: each written with the decimals the screen shows."""
    client = live.session.client
    run(qtbot, client.market_order("USD", "BTC", D("1234.5")))
    run(qtbot, client.market_order("BTC", "USD", D("0.01")))
    run(qtbot, client.limit_order("USD", "BTC", D("2500"), limit=D("0.0000125")))
    for amount in ("0.1 BTC", "500 USDT", "10 SOL"):
        response = live.account.post(TOP_UP, {"amount": amount})
        assert response.status_code == 200, response.text

    orders = shown(qtbot, OrdersPanel(live.context, live.desks.journal, interval=0.3), 1500, 420)
    qtbot.waitUntil(lambda: orders.proxy.rowCount() == 3, timeout=WAIT_MS)
    ledger = shown(qtbot, LedgerPanel(live.context), 1500, 420)
    qtbot.waitUntil(lambda: not ledger.busy and ledger.proxy.rowCount() > 8, timeout=WAIT_MS)
    deposits = shown(qtbot, DepositsPanel(live.context), 1500, 420)
    qtbot.waitUntil(lambda: deposits.model.rowCount() == 3, timeout=WAIT_MS)

    for name, panel in (("orders", orders), ("ledger", ledger)):
        path = tmp_path / f"{name}.csv"
        assert panel.export_to(path) == panel.proxy.rowCount()
        assert money_as_shown(panel.proxy, read_csv(path)) == [], name
    path = tmp_path / "deposits.csv"
    assert deposits.export_to(path) == 3
    rows = read_csv(path)
    assert money_as_shown(deposits.proxy, rows) == []
    column = rows[0].index("Amount")
    assert [line[column] for line in rows[1:]] == ["10.000000", "500.000000", "0.10000000"]
