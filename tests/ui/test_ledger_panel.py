"""Ledger dock: fills from the sandbox, every filter of the seed on the wire and on screen,
paging back, trade legs together (also when sorted), running balance, new entries after a fill,
CSV = view, copy, details, and errors in words."""

from __future__ import annotations

import csv
import json
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from app.domain import format_timestamp
from app.domain.records import LedgerEntry
from app.services.ledger_browser import LedgerQuery
from app.services.ticket import TicketInput
from app.ui.csv_export import EXPORT_FOLDER_KEY, EXPORT_ROLE, documents_folder
from app.ui.models.columns import column_numbers
from app.ui.models.ledger_model import COLUMNS
from app.ui.panels.ledger import LedgerPanel
from app.ui.panels.record_parts import SEARCH_MIN_WIDTH, within
from tests.harness import Faults
from tests.helpers.live import Live
from tests.helpers.qt import run
from tests.ui.records_helpers import (
    Trader,
    choose,
    compare_csv,
    fits_at_every_width,
    record_requests,
    sent_queries,
)

#: Column numbers by key (the model's column spec list).
COL = column_numbers(COLUMNS)

D = Decimal
WAIT_MS = 10_000
LEDGER_PATH = "/accounting/ledger/"
NUMBERS = (COL["amount"], COL["balance"], COL["price"], COL["ordering"])
TIMES = (COL["time"],)


@pytest.fixture
def trader(qtbot: QtBot, live: Live) -> Trader:
    return Trader(qtbot, live)


def open_panel(qtbot: QtBot, live: Live) -> LedgerPanel:
    panel = LedgerPanel(live.context)
    qtbot.addWidget(panel)
    panel.resize(1500, 400)
    panel.show()
    wait_idle(qtbot, panel)
    return panel


def wait_idle(qtbot: QtBot, panel: LedgerPanel) -> None:
    qtbot.waitUntil(lambda: not panel.busy and panel.snapshot is not None, timeout=WAIT_MS)


def search(qtbot: QtBot, panel: LedgerPanel) -> None:
    before = panel.snapshot
    QTest.mouseClick(panel.search_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not panel.busy and panel.snapshot is not before, timeout=WAIT_MS)


def shown(panel: LedgerPanel) -> list[LedgerEntry]:
    proxy, model = panel.proxy, panel.model
    return [
        model.ledger_row(proxy.mapToSource(proxy.index(row, 0)).row()).entry
        for row in range(proxy.rowCount())
    ]


def texts(panel: LedgerPanel, column: int) -> list[str]:
    proxy = panel.proxy
    return [str(proxy.data(proxy.index(row, column))) for row in range(proxy.rowCount())]


# -- from the sandbox ---------------------------------------------------------------------------


def test_the_ledger_fills_from_the_sandbox(qtbot: QtBot, trader: Trader) -> None:
    trade = trader.market("USD", "BTC", "1000")
    panel = open_panel(qtbot, trader.live)
    everything = trader.ledger()
    assert shown(panel) == everything
    assert len(everything) == 5  # two trade legs and three initial balances
    first = panel.model.index(0, COL["time"])
    assert panel.model.data(first, EXPORT_ROLE) == trader.raw_ledger()[0]["eventTime"]
    assert texts(panel, COL["type"])[:2] == ["trade", "trade"]
    assert texts(panel, COL["transaction_id"])[:2] == [trade.order_id] * 2
    amounts = [e.amount for e in everything if e.transaction_id == trade.order_id]
    assert D(-1000) in amounts
    usd_leg = texts(panel, COL["amount"])[[e.amount for e in everything].index(D(-1000))]
    assert usd_leg == "-1,000.00"
    assert panel.status_label.text() == "5 entries in 4 transactions"
    assert panel.balance_note.text() == "Running balance: choose one asset"


def test_a_trades_legs_read_as_buy_or_sell_of_the_pair_at_its_price(
    qtbot: QtBot, trader: Trader
) -> None:
    """The legs of a trade say what they did together, in pair terms, at QUOTE per
    BASE with the pair's increment; amounts exact at the asset's precision."""
    bought = trader.market("USD", "BTC", "2500")
    sold = trader.market("BTC", "USD", "0.0123")
    panel = open_panel(qtbot, trader.live)
    model = panel.model
    rows = [model.ledger_row(r) for r in range(model.rowCount())]
    for order, words in ((bought, "Buy BTC/USD"), (sold, "Sell BTC/USD")):
        legs = [r for r in range(len(rows)) if rows[r].entry.transaction_id == order.order_id]
        assert len(legs) == 2
        assert order.result.total is not None
        btc = order.result.total.value if words.startswith("Buy") else D("0.0123")
        usd = D(2500) if words.startswith("Buy") else order.result.total.value
        price = (usd / btc).quantize(D("0.01"))
        for r in legs:
            assert model.cell(r, COL["trade"]).display == words
            assert model.cell(r, COL["price"]).display == f"{price:,}"
            assert model.cell(r, COL["price"]).sort == price
            assert D(50000) < price < D(200000)
        tip = model.data(model.index(legs[0], COL["trade"]), Qt.ItemDataRole.ToolTipRole)
        verb = "Bought" if words.startswith("Buy") else "Sold"
        assert tip.startswith(f"{verb} {btc:,.8f} BTC at an average fill price of {price:,} USD")
        btc_leg = next(r for r in legs if rows[r].entry.asset == "BTC")
        sign = "+" if words.startswith("Buy") else "-"
        assert model.cell(btc_leg, COL["amount"]).display == f"{sign}{btc:,.8f}"
    initial = next(r for r in range(len(rows)) if rows[r].entry.event_type == "initialBalances")
    assert model.cell(initial, COL["trade"]).display == ""
    assert model.cell(initial, COL["price"]).display == "—"
    # One transaction: the noun agrees.
    panel.transaction_filter.setText(bought.order_id)
    search(qtbot, panel)
    assert panel.status_label.text() == "2 entries in 1 transaction"


def test_every_filter_changes_the_query_and_the_rows(qtbot: QtBot, trader: Trader) -> None:
    trade = trader.market("USD", "BTC", "1000")
    panel = open_panel(qtbot, trader.live)
    everything = trader.ledger()
    legs = [e for e in everything if e.transaction_id == trade.order_id]
    at = legs[0].event_time
    requests = record_requests(trader.live)

    def check(asked: dict[str, str], rows: list[LedgerEntry]) -> None:
        requests.clear()
        search(qtbot, panel)
        assert sent_queries(requests, LEDGER_PATH)[0] == asked
        assert shown(panel) == rows

    choose(panel.asset_filter, "BTC")
    check({"max": "100", "asset": "BTC"}, [e for e in everything if e.asset == "BTC"])
    choose(panel.asset_filter, "")
    choose(panel.type_filter, "trade")
    check({"max": "100", "type": "trade"}, legs)
    choose(panel.type_filter, "initialBalances")
    check({"max": "100", "type": "initialBalances"}, everything[2:])
    choose(panel.type_filter, "")
    panel.transaction_filter.setText(trade.order_id)
    check({"max": "100", "transactionId": trade.order_id}, legs)
    panel.transaction_filter.clear()
    panel.start_filter.set_value(at)
    start = panel.start_filter.value()
    assert start is not None and start <= at
    check({"max": "100", "startTimeUtc": format_timestamp(start)}, legs)
    panel.start_filter.set_value(None)
    panel.end_filter.set_value(at)
    end = panel.end_filter.value()
    assert end is not None and at - end < timedelta(milliseconds=1)
    check(
        {"max": "100", "endTimeUtc": format_timestamp(end)},
        [e for e in everything if e.event_time < end],
    )
    panel.end_filter.set_value(None)
    panel.ordering_filter.setText(str(legs[0].ordering - 1))
    check({"max": "100", "startAtOrdering": str(legs[0].ordering - 1)}, everything[2:])
    panel.ordering_filter.clear()
    panel.max_filter.setValue(2)
    check({"max": "2"}, everything[:3])  # two transactions: the trade's legs count once
    # Bad input is refused in words; what was typed stays, the rows stay.
    panel.start_filter.set_value(at + timedelta(hours=1))
    panel.end_filter.set_value(at)
    requests.clear()
    assert not panel.run_query()
    assert panel.status_label.text() == (
        "Not searched: the start of the time range must be before its end"
    )
    assert panel.start_filter.check.isChecked() and panel.end_filter.check.isChecked()
    assert sent_queries(requests, LEDGER_PATH) == []
    assert shown(panel) == everything[:3]


def test_a_server_error_is_told_in_words_and_keeps_the_rows(
    qtbot: QtBot, trader: Trader, faults: Faults
) -> None:
    panel = open_panel(qtbot, trader.live)
    rows = shown(panel)
    account = trader.live.session.environment.account
    faults({"kind": "status", "path": f"/ledger/{account}$", "status": 400, "count": 1})
    choose(panel.asset_filter, "USD")
    QTest.mouseClick(panel.search_button, Qt.MouseButton.LeftButton)
    assert panel.busy
    qtbot.waitUntil(lambda: not panel.busy, timeout=WAIT_MS)
    assert panel.status_label.text().startswith("Cannot read the ledger: ")
    assert shown(panel) == rows
    assert panel.asset_filter.currentData() == "USD"
    assert any(level == "error" and "Ledger" in text for level, text in trader.live.notices)


# -- legs, balance, paging ----------------------------------------------------------------------


def test_trade_legs_stay_together_and_linked_when_sorted(qtbot: QtBot, trader: Trader) -> None:
    trades = [trader.market("USD", "BTC", "500"), trader.market("ETH", "USD", "2")]
    panel = open_panel(qtbot, trader.live)
    ids = {t.order_id for t in trades}

    def check_legs() -> None:
        entries = shown(panel)
        legs = texts(panel, COL["leg"])
        for number, entry in enumerate(entries):
            if entry.transaction_id not in ids:
                assert legs[number] == ""
                continue
            if legs[number].startswith("┌"):
                partner = entries[number + 1]
                assert partner.transaction_id == entry.transaction_id
                assert legs[number + 1].startswith("└")
            else:
                assert legs[number].startswith("└")
                assert entries[number - 1].transaction_id == entry.transaction_id

    check_legs()
    assert texts(panel, COL["leg"])[:2] == ["┌ source", "└ destination"]
    tint = panel.proxy.data(panel.proxy.index(0, COL["asset"]), Qt.ItemDataRole.BackgroundRole)
    assert tint is not None
    assert (
        panel.proxy.data(panel.proxy.index(4, COL["asset"]), Qt.ItemDataRole.BackgroundRole) is None
    )
    for order in (Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder):
        for column in (COL["amount"], COL["asset"], COL["time"]):
            panel.sort_by(column, order)
            check_legs()
    panel.sort_by(COL["amount"], Qt.SortOrder.AscendingOrder)
    # Groups by their first leg's amount: the USD→BTC trade's first leg is -500 USD.
    assert shown(panel)[0].amount == D(-500)


def test_running_balance_when_filtered_to_one_asset(qtbot: QtBot, trader: Trader) -> None:
    trader.market("USD", "BTC", "1000")
    trader.market("BTC", "USD", "0.01")
    panel = open_panel(qtbot, trader.live)
    choose(panel.asset_filter, "USD")
    search(qtbot, panel)
    assert panel.balance_note.text() == ""
    balances = [panel.model.ledger_row(r).balance for r in range(panel.model.rowCount())]
    entries = shown(panel)
    account = run(qtbot, trader.live.session.client.account())
    usd = account.balances["USD"]
    assert balances[0] == usd.free + usd.locked
    assert balances[-1] == D(100000) == entries[-1].amount
    for number in range(1, len(entries)):
        newer = balances[number - 1]
        assert newer is not None
        assert balances[number] == newer - entries[number - 1].amount
    assert texts(panel, COL["balance"])[-1] == "100,000.00"
    # Not with a type filter: the note says why.
    choose(panel.type_filter, "trade")
    search(qtbot, panel)
    assert set(texts(panel, COL["balance"])) == {"—"}
    assert "type" in panel.balance_note.text()


def test_load_more_pages_back_with_start_at_ordering(qtbot: QtBot, trader: Trader) -> None:
    trader.market("USD", "BTC", "100")
    trader.market("USD", "ETH", "100")
    everything = trader.ledger()
    panel = open_panel(qtbot, trader.live)
    panel.max_filter.setValue(1)
    search(qtbot, panel)
    assert shown(panel) == everything[:2]  # one transaction: both legs
    requests = record_requests(trader.live)
    while panel.load_more_button.isEnabled():
        lowest = min(entry.ordering for entry in shown(panel))
        count = len(shown(panel))
        requests.clear()
        QTest.mouseClick(panel.load_more_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: not panel.busy, timeout=WAIT_MS)
        assert sent_queries(requests, LEDGER_PATH) == [
            {"max": "1", "startAtOrdering": str(lowest - 1)}
        ]
        assert len(shown(panel)) > count or not panel.load_more_button.isEnabled()
    assert shown(panel) == everything


def test_new_entries_after_a_fill_appear_on_top(qtbot: QtBot, trader: Trader) -> None:
    panel = open_panel(qtbot, trader.live)
    choose(panel.asset_filter, "USD")
    search(qtbot, panel)
    before = shown(panel)
    qtbot.waitUntil(lambda: trader.live.desks.orders.top_of_book != {}, timeout=WAIT_MS)
    result = run(qtbot, trader.live.desks.orders.submit(TicketInput("USD", "BTC", D(321))))
    assert result.status == "filled", result.message
    qtbot.waitUntil(lambda: len(shown(panel)) == len(before) + 1, timeout=WAIT_MS)
    assert result.order is not None
    top = shown(panel)[0]
    assert (top.transaction_id, top.amount) == (result.order.order_id, D(-321))
    assert shown(panel)[1:] == before
    first_balance = panel.model.ledger_row(0).balance
    second_balance = panel.model.ledger_row(1).balance
    assert second_balance is not None and first_balance == second_balance - D(321)


# -- export, copy, details ----------------------------------------------------------------------


def test_csv_export_is_the_view_exactly(qtbot: QtBot, trader: Trader, tmp_path: Path) -> None:
    trader.market("USD", "BTC", "1234.56")
    trader.market("BTC", "USD", "0.00012345")
    panel = open_panel(qtbot, trader.live)
    choose(panel.asset_filter, "BTC")
    search(qtbot, panel)
    panel.sort_by(COL["amount"], Qt.SortOrder.AscendingOrder)
    path = tmp_path / "ledger.csv"
    assert panel.export_to(path) == 3
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    compare_csv(panel.proxy, rows, NUMBERS, TIMES)
    assert D(rows[1][COL["amount"]]) == D("-0.00012345")
    assert rows[1][COL["amount"]] == "-0.00012345"
    snapshot = panel.snapshot
    assert snapshot is not None
    by_amount = sorted(snapshot.rows, key=lambda r: r.entry.amount)
    assert [D(row[COL["balance"]]) for row in rows[1:]] == [row.balance for row in by_amount]


def test_copy_row_and_details(qtbot: QtBot, trader: Trader) -> None:
    trade = trader.market("USD", "BTC", "99.99")
    panel = open_panel(qtbot, trader.live)
    panel.table.selectRow(0)  # the trade's first leg
    QTest.mouseClick(panel.copy_button, Qt.MouseButton.LeftButton)
    text = QApplication.clipboard().text()
    cells = text.split("\t")
    assert cells[COL["transaction_id"]] == trade.order_id
    assert cells[COL["amount"]] == "-99.99"
    assert cells[COL["leg"]] == "source"
    assert text == "\t".join(
        str(panel.proxy.data(panel.proxy.index(0, c), EXPORT_ROLE))
        for c in range(panel.proxy.columnCount())
    )
    panel.table.setFocus()
    QTest.keyClick(panel.table, Qt.Key.Key_Return)
    dialog = panel.details_dialog
    assert dialog is not None and dialog.isVisible()
    raw = trader.raw_ledger()[0]
    fields = {name: edit.text() for name, edit in dialog.edits.items()}
    assert fields == {
        "ordering": str(raw["ordering"]),
        "accountId": raw["accountId"],
        "transactionId": raw["transactionId"],
        "asset": raw["asset"],
        "amount": str(raw["amount"]),
        "eventType": raw["eventType"],
        "subEventType": raw["subEventType"],
        "eventTime": raw["eventTime"],
    }
    assert json.loads(dialog.json_view.toPlainText(), parse_float=D) == raw
    QTest.mouseClick(dialog.copy_buttons["transactionId"], Qt.MouseButton.LeftButton)
    assert QApplication.clipboard().text() == trade.order_id
    QTest.mouseClick(dialog.copy_json, Qt.MouseButton.LeftButton)
    assert json.loads(QApplication.clipboard().text(), parse_float=D) == raw
    dialog.close()


def test_the_models_pass_the_model_tester(
    qtbot: QtBot, trader: Trader, qtmodeltester: ModelTester
) -> None:
    trader.market("USD", "BTC", "10")
    panel = open_panel(qtbot, trader.live)
    assert panel.browser.query == LedgerQuery()
    qtmodeltester.check(panel.model)  # type: ignore[no-untyped-call]
    qtmodeltester.check(panel.proxy)  # type: ignore[no-untyped-call]


# -- records that fit and follow the filters -----------------------------------------------------


def test_filters_apply_as_they_change_once_the_trader_pauses(qtbot: QtBot, trader: Trader) -> None:
    """Typed with real key events, no Search click: one query when the typing stops (the
    debounce), with the whole id; a filter chosen from the keyboard applies the same way."""
    trade = trader.market("USD", "BTC", "1000")
    panel = open_panel(qtbot, trader.live)
    legs = [e for e in trader.ledger() if e.transaction_id == trade.order_id]
    requests = record_requests(trader.live)
    before = panel.snapshot
    panel.transaction_filter.setFocus()
    QTest.keyClicks(panel.transaction_filter, trade.order_id)
    qtbot.waitUntil(lambda: panel.snapshot is not before and not panel.busy, timeout=WAIT_MS)
    assert sent_queries(requests, LEDGER_PATH) == [{"max": "100", "transactionId": trade.order_id}]
    assert shown(panel) == legs

    requests.clear()
    QTest.mouseClick(panel.transaction_filter, Qt.MouseButton.LeftButton)
    QTest.keyClick(panel.transaction_filter, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    QTest.keyClick(panel.transaction_filter, Qt.Key.Key_Delete)
    panel.type_filter.setFocus()
    wanted = panel.type_filter.findData("trade")
    while panel.type_filter.currentIndex() != wanted:
        QTest.keyClick(panel.type_filter, Qt.Key.Key_Down)
    qtbot.waitUntil(
        lambda: {"max": "100", "type": "trade"} in sent_queries(requests, LEDGER_PATH),
        timeout=WAIT_MS,
    )
    wait_idle(qtbot, panel)
    assert {e.event_type for e in shown(panel)} == {"trade"}


def test_refresh_reads_with_the_filters_as_they_are_now(qtbot: QtBot, trader: Trader) -> None:
    trader.market("USD", "BTC", "1000")
    panel = open_panel(qtbot, trader.live)
    requests = record_requests(trader.live)
    choose(panel.asset_filter, "BTC")
    before = panel.snapshot
    QTest.mouseClick(panel.refresh_button, Qt.MouseButton.LeftButton)  # before the debounce
    qtbot.waitUntil(lambda: panel.snapshot is not before and not panel.busy, timeout=WAIT_MS)
    assert sent_queries(requests, LEDGER_PATH)[0] == {"max": "100", "asset": "BTC"}
    assert {e.asset for e in shown(panel)} == {"BTC"}
    assert panel.browser.query.asset == "BTC"
    # no second read of the same query follows
    requests.clear()
    assert not panel.apply_timer.isActive()  # the pending debounce was settled by Refresh
    assert sent_queries(requests, LEDGER_PATH) == []


def test_the_ledger_fits_its_dock_at_every_width(qtbot: QtBot, trader: Trader) -> None:
    """At 900, 1400 and 1920 px every filter, the search box and every button lie inside the
    panel: the rows wrap instead of cutting off "To", the search box and Export CSV."""
    panel = open_panel(qtbot, trader.live)
    fits_at_every_width(qtbot, panel)
    panel.resize(900, 420)
    qtbot.waitUntil(lambda: panel.width() == 900)
    for widget in (
        panel.end_filter,
        panel.search_box,
        panel.search_button,
        panel.export_button,
        panel.refresh_button,
    ):
        assert widget.isVisible() and within(widget, panel), widget.objectName()
    assert panel.search_box.width() >= SEARCH_MIN_WIDTH


def test_export_opens_in_documents_then_in_the_last_folder(
    qtbot: QtBot, trader: Trader, tmp_path: Path
) -> None:
    """Not the working directory: the trader's Documents folder first, then wherever the last
    CSV went (kept in the settings)."""
    panel = open_panel(qtbot, trader.live)
    dialog = panel.ask_export()
    assert Path(dialog.directory().absolutePath()) == documents_folder()
    assert Path(dialog.directory().absolutePath()) != Path.cwd()
    folder = tmp_path / "exports"
    folder.mkdir()
    chosen = folder / "ledger.csv"
    with qtbot.waitSignal(dialog.fileSelected, timeout=WAIT_MS):
        dialog.selectFile(str(chosen))
        dialog.accept()
    qtbot.waitUntil(chosen.exists, timeout=WAIT_MS)
    assert trader.live.context.settings.value(EXPORT_FOLDER_KEY) == str(folder)
    again = panel.ask_export()
    assert Path(again.directory().absolutePath()) == folder
    assert again.selectedFiles() == [str(folder / "ledger.csv")]
    again.reject()
