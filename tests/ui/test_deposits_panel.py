"""Deposits panel on a real sandbox: records, the oldest-first toggle, sorting, copy, export."""

from __future__ import annotations

import csv
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import shiboken6
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QFileDialog
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from app.domain.records import DepositRecord
from app.ui.csv_export import EXPORT_FOLDER_KEY, EXPORT_ROLE, documents_folder
from app.ui.models.columns import column_numbers
from app.ui.models.deposits_model import COLUMNS, SORT_ROLE, DepositsModel
from app.ui.panels.deposits import DepositsPanel
from tests.harness import Faults, Session, body
from tests.helpers.live import Live
from tests.helpers.qt import shown
from tests.ui.records_helpers import fits_at_every_width

#: Column numbers by key (the model's column spec list).
COL = column_numbers(COLUMNS)

WAIT_MS = 10_000
TOP_UP = "/api/v1/sandbox/account/{account}/deposit"
DEPOSITS = "/api/v1/accounting/account/{account}/request/deposit"


def top_up(session: Session, amount: str, network: str | None = None, **extra: Any) -> None:
    payload: dict[str, Any] = {"amount": amount, **extra}
    if network:
        payload["network"] = network
    response = session.post(TOP_UP, payload)
    assert response.status_code == 200, response.text


def server_records(session: Session) -> list[dict[str, Any]]:
    """The deposits as the server lists them, newest first."""
    response = session.get(DEPOSITS, max=100)
    assert response.status_code == 200, response.text
    records: list[dict[str, Any]] = body(response)
    return records


def make_panel(qtbot: QtBot, live: Live, rows: int, **kw: Any) -> DepositsPanel:
    panel = shown(qtbot, DepositsPanel(live.context, **kw), 1400, 400)
    qtbot.waitUntil(lambda: panel.model.rowCount() == rows, timeout=WAIT_MS)
    return panel


def cell(panel: DepositsPanel, row: int, column: int, role: int = 0) -> Any:
    return panel.proxy.index(row, column, QModelIndex()).data(role)


@pytest.fixture
def four(live: Live) -> Live:
    """Four deposits, oldest first: 0.1 BTC, 2.12345678 ETH, 500 USDT on tron, 10 SOL."""
    for amount, network in (("0.1 BTC", None), ("2.12345678 ETH", None), ("500 USDT", "tron")):
        top_up(live.account, amount, network)
    top_up(live.account, "10 SOL")
    return live


# -- filling ----------------------------------------------------------------------------------


def test_records_fill_newest_first_with_every_field(qtbot: QtBot, four: Live) -> None:
    panel = make_panel(qtbot, four, 4)
    wire = server_records(four.account)
    assert [cell(panel, r, COL["asset"]) for r in range(4)] == ["SOL", "USDT", "ETH", "BTC"]
    assert panel.shown_orderings() == [w["ordering"] for w in wire]
    usdt = wire[1]
    assert cell(panel, 1, COL["amount"]) == "500.000000"  # USDT: the service says 6 decimals
    assert cell(panel, 1, COL["network"]) == "tron"
    assert cell(panel, 1, COL["status"]) == "completed"
    assert cell(panel, 1, COL["hash"]) == usdt["hash"]  # whole, never shortened in the model
    assert cell(panel, 1, COL["created_by"]) == usdt["created"]["user"]["name"]
    assert cell(panel, 1, COL["completed_by"]) == "Sandbox Operations"
    assert cell(panel, 1, COL["created"], EXPORT_ROLE) == usdt["created"]["at"]
    assert cell(panel, 1, COL["completed"], EXPORT_ROLE) == usdt["completed"]["at"]
    # exported with the decimals shown: every BTC amount of a CSV has BTC's 8
    assert cell(panel, 3, COL["amount"], EXPORT_ROLE) == "0.10000000"
    assert cell(panel, 3, COL["amount"]) == "0.10000000"
    assert cell(panel, 2, COL["amount"]) == "2.12345678"  # never rounded to ETH's 6 places
    assert panel.table.isColumnHidden(COL["address"])
    assert panel.status.text().startswith("4 deposits, newest first")


def test_oldest_first_asks_the_server_for_the_oldest_records(qtbot: QtBot, four: Live) -> None:
    panel = make_panel(qtbot, four, 4)
    panel.max_box.setValue(2)
    qtbot.waitUntil(lambda: panel.model.rowCount() == 2, timeout=WAIT_MS)
    assert [cell(panel, r, COL["asset"]) for r in range(2)] == ["SOL", "USDT"]

    QTest.mouseClick(panel.oldest_first, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: [cell(panel, r, COL["asset"]) for r in range(2)] == ["BTC", "ETH"],
        timeout=WAIT_MS,
    )
    assert panel.feed.query.ascending and panel.page is not None and panel.page.query.ascending
    first, second = panel.shown_orderings()
    assert first < second
    assert "oldest first" in panel.status.text()


def test_columns_sort_as_numbers_and_times_and_return_to_server_order(
    qtbot: QtBot, four: Live
) -> None:
    panel = make_panel(qtbot, four, 4)
    server_order = panel.shown_orderings()
    panel.table.sortByColumn(COL["amount"], Qt.SortOrder.AscendingOrder)
    # As text "10.0000" would sort before "2.000000"; as numbers 2 < 10.
    assert [cell(panel, r, COL["asset"]) for r in range(4)] == ["BTC", "ETH", "SOL", "USDT"]
    panel.table.sortByColumn(COL["created"], Qt.SortOrder.AscendingOrder)
    assert panel.shown_orderings() == sorted(server_order)
    keys = [cell(panel, r, COL["created"], SORT_ROLE) for r in range(4)]
    assert all(isinstance(k, Decimal) for k in keys) and keys == sorted(keys)
    panel.show_server_order()
    assert panel.shown_orderings() == server_order


def test_copy_hash_puts_the_whole_hash_on_the_clipboard(qtbot: QtBot, four: Live) -> None:
    panel = make_panel(qtbot, four, 4)
    wire = server_records(four.account)
    assert not panel.copy_hash_button.isEnabled()
    panel.table.selectRow(2)
    assert panel.copy_hash_button.isEnabled()
    QTest.mouseClick(panel.copy_hash_button, Qt.MouseButton.LeftButton)
    assert QApplication.clipboard().text() == wire[2]["hash"]

    panel.table.setCurrentIndex(panel.proxy.index(0, COL["amount"]))
    panel.table.setFocus()
    QTest.keyClick(panel.table, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    # the amount as shown, without grouping: SOL has 6 decimals in the sandbox
    assert QApplication.clipboard().text() == "10.000000"


def test_export_writes_the_table_as_shown_with_exact_values(
    qtbot: QtBot, four: Live, tmp_path: Path
) -> None:
    panel = make_panel(qtbot, four, 4)
    wire = server_records(four.account)
    dialog = panel.ask_export()
    assert isinstance(dialog, QFileDialog)
    target = tmp_path / "deposits.csv"
    with qtbot.waitSignal(dialog.fileSelected, timeout=WAIT_MS):
        dialog.selectFile(str(target))
        dialog.accept()
    # The dialog deletes itself on close: let it go while the panel that parents it lives.
    qtbot.waitUntil(lambda: not shiboken6.isValid(dialog), timeout=WAIT_MS)
    with target.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    header = rows[0]
    assert header[:6] == ["#", "Asset", "Amount", "Network", "Status", "Hash"]
    assert [int(r[0]) for r in rows[1:]] == [w["ordering"] for w in wire]
    btc = rows[4]
    assert btc[1:3] == ["BTC", "0.10000000"]
    assert btc[5] == wire[3]["hash"]
    assert btc[header.index("Created")] == wire[3]["created"]["at"]
    assert ("info", f"Exported 4 rows to {target}") in four.notices


def test_one_row_is_one_row(qtbot: QtBot, live: Live, tmp_path: Path) -> None:
    """Counts in words: "1 deposit", "Exported 1 row", "1 row copied" — never "row(s)"."""
    top_up(live.account, "0.5 BTC")
    panel = make_panel(qtbot, live, 1)
    assert panel.status.text().startswith("1 deposit, newest first")
    path = tmp_path / "one.csv"
    assert panel.export_to(path) == 1
    assert ("info", f"Exported 1 row to {path}") in live.notices
    panel.table.selectRow(0)
    panel._copy_rows()
    assert panel.status.text() == "1 row copied"


@pytest.mark.slow
def test_a_pending_deposit_completes_in_place(qtbot: QtBot, live: Live) -> None:
    top_up(live.account, "0.5 BTC")
    panel = make_panel(qtbot, live, 1, interval=0.3)
    top_up(live.account, "1.5 ETH", pendingSeconds=1)
    qtbot.waitUntil(lambda: panel.model.rowCount() == 2, timeout=WAIT_MS)
    assert cell(panel, 0, COL["status"]) == "pending"
    assert cell(panel, 0, COL["completed"]) == "—"
    resets: list[None] = []
    changed: list[int] = []
    panel.model.modelReset.connect(lambda: resets.append(None))
    panel.model.dataChanged.connect(lambda top, _bottom: changed.append(top.row()))
    qtbot.waitUntil(lambda: cell(panel, 0, COL["status"]) == "completed", timeout=WAIT_MS)
    assert cell(panel, 0, COL["completed_by"]) == "Sandbox Operations"
    assert resets == [] and set(changed) == {0}  # only the row that changed was signalled


def test_withdrawals_show_their_address(qtbot: QtBot, live: Live) -> None:
    response = live.account.get(
        "/api/v1/accounting/account/{account}/request/withdraw-instructions"
    )
    btc = next(i for i in body(response)["instructions"] if i["asset"] == "BTC")
    response = live.account.post(
        "/api/v1/accounting/account/{account}/request/withdraw/blockchain",
        {"amount": "0.25 BTC", "networkType": btc["networkType"], "address": btc["address"]},
    )
    assert response.status_code == 200, response.text
    panel = make_panel(qtbot, live, 0)
    panel.set_kind("withdrawal")
    qtbot.waitUntil(lambda: panel.model.rowCount() == 1, timeout=WAIT_MS)
    assert not panel.table.isColumnHidden(COL["address"])
    assert cell(panel, 0, COL["address"]) == btc["address"]
    assert cell(panel, 0, COL["network"]) == "bitcoin"
    assert panel.status.text().startswith("1 withdrawal, newest first")


def test_a_failing_server_is_explained_and_the_rows_stay(
    qtbot: QtBot, four: Live, faults: Faults
) -> None:
    panel = make_panel(qtbot, four, 4, interval=0.3)
    path = rf"^/api/v1/accounting/account/{four.account.account}/request/deposit$"
    faults({"kind": "status", "status": 503, "path": path})
    qtbot.waitUntil(lambda: panel.last_error != "", timeout=WAIT_MS)
    assert panel.status.text().startswith("Cannot read deposits: HTTP 503")
    assert "showing the list from" in panel.status.text()
    assert panel.model.rowCount() == 4


def test_closing_the_panel_stops_its_feed(qtbot: QtBot, four: Live) -> None:
    panel = make_panel(qtbot, four, 4, interval=0.2)
    feed = panel.feed
    assert feed.running
    panel.close()
    panel.deleteLater()
    qtbot.waitUntil(lambda: not feed.running, timeout=WAIT_MS)
    assert feed.pages._subscribers == [] and feed.failures._subscribers == []


def test_model_contract(qtmodeltester: ModelTester, four: Live) -> None:
    model = DepositsModel(four.context.precision)
    model.set_records([DepositRecord.parse(r, "r") for r in server_records(four.account)])
    qtmodeltester.check(model)  # type: ignore[no-untyped-call]


def test_the_deposits_dock_fits_at_every_width(qtbot: QtBot, four: Live) -> None:
    """At 900, 1400 and 1920 px every control lies inside the panel."""
    panel = make_panel(qtbot, four, 4)
    fits_at_every_width(qtbot, panel)


def test_export_opens_in_documents_not_the_working_directory(
    qtbot: QtBot, four: Live, tmp_path: Path
) -> None:
    panel = make_panel(qtbot, four, 4)
    four.context.settings.remove(EXPORT_FOLDER_KEY)
    dialog = panel.ask_export()
    assert Path(dialog.directory().absolutePath()) == documents_folder()
    target = tmp_path / "kept" / "deposits.csv"
    target.parent.mkdir()
    with qtbot.waitSignal(dialog.fileSelected, timeout=WAIT_MS):
        dialog.selectFile(str(target))
        dialog.accept()
    qtbot.waitUntil(lambda: not shiboken6.isValid(dialog), timeout=WAIT_MS)
    again = panel.ask_export()
    assert Path(again.directory().absolutePath()) == target.parent
    again.reject()
    qtbot.waitUntil(lambda: not shiboken6.isValid(again), timeout=WAIT_MS)
