"""Order list dock: fills from the sandbox, new fills within one poll (and at once after a fill),
every filter on the wire and on screen, load more, numeric sort, CSV = view, copy, details."""

from __future__ import annotations

import csv
import json
import time
from datetime import timedelta
from decimal import ROUND_HALF_EVEN, Decimal, localcontext
from pathlib import Path

import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from app.domain import format_timestamp, parse_timestamp, utc_now
from app.domain.display import Precision
from app.domain.money import MONEY_CONTEXT
from app.domain.records import Order
from app.services.order_feed import OrderFilter, OrderRow, OrdersSnapshot
from app.services.ticket import TicketInput
from app.ui.column_widths import Fit
from app.ui.csv_export import EXPORT_ROLE
from app.ui.models.columns import column_numbers
from app.ui.models.orders_model import COLUMNS, OrdersModel, highlight_colour, time_left_text
from app.ui.palette import current_palette
from app.ui.panels.orders import OrdersPanel
from app.ui.panels.record_parts import counted, within
from app.ui.preferences import Preferences
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
ORDERS_PATH = "/order/account/"
NUMBERS = (COL["amount"], COL["price"], COL["notional"], COL["limit"])
TIMES = (COL["submitted"], COL["end"], COL["executed"])
#: The wire's fields as the export names them (hidden in the view).
WIRE_HEADERS = {
    "size": "size",
    "source": "source",
    "destination": "destination",
    "limit_wire": "limit",
    "price_wire": "result.price",
    "inverted_price_wire": "result.invertedPrice",
    "total_wire": "result.total",
    "status_wire": "result.status",
}


# -- helpers ------------------------------------------------------------------------------------


@pytest.fixture
def trader(qtbot: QtBot, live: Live) -> Trader:
    return Trader(qtbot, live)


def open_panel(qtbot: QtBot, live: Live, **options: float | int) -> OrdersPanel:
    panel = OrdersPanel(live.context, live.desks.journal, **options)  # type: ignore[arg-type]
    qtbot.addWidget(panel)
    panel.resize(1500, 400)
    panel.show()
    wait_loaded(qtbot, panel)
    return panel


def wait_loaded(qtbot: QtBot, panel: OrdersPanel, wanted: OrderFilter | None = None) -> None:
    def loaded() -> bool:
        snapshot = panel.snapshot
        return (
            snapshot is not None
            and not snapshot.loading
            and (wanted is None or snapshot.filter == wanted)
        )

    qtbot.waitUntil(loaded, timeout=WAIT_MS)


def shown_ids(panel: OrdersPanel) -> list[str]:
    """Order ids in the order the table shows them."""
    proxy = panel.proxy
    return [
        str(proxy.data(proxy.index(row, COL["order_id"]), EXPORT_ROLE))
        for row in range(proxy.rowCount())
    ]


# -- from the sandbox ---------------------------------------------------------------------------


def test_the_list_fills_from_the_sandbox_newest_first(qtbot: QtBot, trader: Trader) -> None:
    first = trader.market("USD", "BTC", "1000")
    second = trader.resting()
    third = trader.market("BTC", "USD", "0.01")
    panel = open_panel(qtbot, trader.live)
    assert shown_ids(panel) == [third.order_id, second.order_id, first.order_id]
    model = panel.model
    row = model.row_of(first.order_id)
    cell = model.cell
    result = first.result
    assert result.price is not None and result.inverted_price is not None
    assert result.total is not None and first.submitted_at is not None
    assert cell(row, COL["type"]).display == "market"
    # In the trader's terms: buying BTC on BTC/USD with 1,000 USD.
    assert (cell(row, COL["pair"]).display, cell(row, COL["side"]).display) == ("BTC/USD", "Buy")
    assert cell(row, COL["amount"]).display == f"{result.total.value:,.8f}"
    assert cell(row, COL["amount"]).sort == result.total.value
    assert cell(row, COL["notional"]).display == "1,000.00"
    assert cell(row, COL["notional"]).sort == D(1000)
    assert cell(row, COL["status"]).display == "filled"
    # The price is the average fill price (1,000 USD over the BTC received: the service's
    # invertedPrice is the ask it met, the total rounded down makes the average a little more),
    # at the pair's increment (0.01), rounded half-even.
    assert result.inverted_price.pair == result.price.pair.inverted()
    with localcontext(MONEY_CONTEXT):
        average = D(1000) / result.total.value
    assert average >= result.inverted_price.value
    usd_per_btc = average.quantize(D("0.01"), rounding=ROUND_HALF_EVEN)
    assert cell(row, COL["price"]).display == f"{usd_per_btc:,}"
    assert cell(row, COL["price"]).sort == usd_per_btc
    assert cell(row, COL["price"]).export == format(usd_per_btc, "f")
    assert cell(row, COL["submitted"]).export == first.raw["submittedAt"]
    assert cell(row, COL["executed"]).sort is not None
    assert cell(row, COL["order_id"]).display == first.order_id
    assert cell(row, COL["client_order_id"]).display == first.client_order_id != ""
    # The wire's own fields, exactly as sent.
    assert cell(row, COL["size"]).export == "1000 USD"
    assert (cell(row, COL["source"]).export, cell(row, COL["destination"]).export) == (
        "USD",
        "BTC",
    )
    assert cell(row, COL["price_wire"]).export == first.raw["result"]["price"]
    assert cell(row, COL["inverted_price_wire"]).export == first.raw["result"]["invertedPrice"]
    assert cell(row, COL["total_wire"]).export == first.raw["result"]["total"]
    sold = model.row_of(third.order_id)
    assert (cell(sold, COL["side"]).display, cell(sold, COL["amount"]).display) == (
        "Sell",
        "0.01000000",
    )
    resting_row = model.row_of(second.order_id)
    assert cell(resting_row, COL["status"]).display == "resting"
    assert cell(resting_row, COL["status_wire"]).display == "submitted"
    assert cell(resting_row, COL["limit"]).display == "1.00"  # 1 BTC per USD: 1 USD per BTC
    assert cell(resting_row, COL["price"]).display == "—"
    assert cell(resting_row, COL["amount"]).display == "—"  # a buy's amount: once it fills
    assert cell(resting_row, COL["end"]).display == "—"
    status = model.index(resting_row, COL["status"])
    assert "Resting" in model.data(status, Qt.ItemDataRole.ToolTipRole)
    assert panel.status_label.text() == "3 orders"
    # The wire's columns are exported and copied, not shown.
    hidden = [panel.table.isColumnHidden(c) for c in range(model.columnCount())]
    assert hidden == [key in WIRE_HEADERS for key in COL]


def test_prices_read_quote_per_base_whichever_side(qtbot: QtBot, trader: Trader) -> None:
    """The Price column once mixed 90,845.13 and 0.0000109… by side, and a 90,000 limit
    read 0.0000111…: every price and limit is now USD per BTC with separators."""
    client = trader.live.session.client
    bought = trader.market("USD", "BTC", "5000")
    sold = trader.market("BTC", "USD", "0.05")
    wire_limit = D(1) / D(90000)  # buy BTC at most 90,000 USD: least BTC per USD
    resting = run(qtbot, client.limit_order("USD", "BTC", D(900), limit=wire_limit))
    assert resting.result.status == "submitted"
    panel = open_panel(qtbot, trader.live)
    model = panel.model
    prices = {}
    for order in (bought, sold):
        row = model.row_of(order.order_id)
        prices[order.order_id] = model.cell(row, COL["price"])
        assert model.cell(row, COL["pair"]).display == "BTC/USD"
    for price in prices.values():
        assert isinstance(price.sort, Decimal) and D(50000) < price.sort < D(200000), price
        assert "," in price.display and len(price.display.split(".")[1]) == 2, price
    assert model.cell(model.row_of(bought.order_id), COL["side"]).display == "Buy"
    assert model.cell(model.row_of(sold.order_id), COL["side"]).display == "Sell"
    row = model.row_of(resting.order_id)
    assert model.cell(row, COL["limit"]).display == "90,000.00"
    assert model.cell(row, COL["notional"]).display == "900.00"
    tip = model.data(model.index(row, COL["limit"]), Qt.ItemDataRole.ToolTipRole)
    assert tip == "90,000.00 USD per BTC"


@pytest.mark.slow
def test_a_resting_orders_time_left_counts_down_without_polling(
    qtbot: QtBot, trader: Trader
) -> None:
    """The service offers no cancel: a resting order shows its end and the time left, which a
    timer in the panel (once a second, only while such rows are shown) keeps current."""
    client = trader.live.session.client
    filled = trader.market("USD", "BTC", "100")
    panel = open_panel(qtbot, trader.live, interval=60.0)
    assert shown_ids(panel) == [filled.order_id]
    assert panel.status_label.text() == "1 order"
    assert not panel.time_left_timer.isActive()  # nothing resting: nothing ticks
    end_at = client.clock.server_now() + timedelta(seconds=40)
    resting = run(qtbot, client.limit_order("USD", "BTC", D(20), limit=D(1), end_at=end_at))
    panel.feed.refresh()
    qtbot.waitUntil(lambda: resting.order_id in shown_ids(panel), timeout=WAIT_MS)
    assert panel.time_left_timer.isActive() and panel.time_left_timer.interval() == 1000
    row = panel.model.row_of(resting.order_id)

    def status() -> str:
        return str(panel.model.cell(row, COL["status"]).display)

    first = status()
    assert first.startswith("resting · ") and first.endswith(" s left"), first
    assert 30 <= int(first.split()[2]) <= 40, first
    end = panel.model.cell(row, COL["end"])
    assert end.export == format_timestamp(end_at)
    requests = record_requests(trader.live)
    qtbot.waitUntil(lambda: status() != first, timeout=3000)
    assert int(status().split()[2]) < int(first.split()[2])
    assert sent_queries(requests, ORDERS_PATH) == []  # the countdown reads no order
    # Only the status cell repaints on a tick.
    changed: list[tuple[int, int]] = []

    def on_change(top_left: QModelIndex, bottom_right: QModelIndex, roles: list[int]) -> None:
        if Qt.ItemDataRole.BackgroundRole not in roles:  # not the new row's highlight ending
            changed.append((top_left.column(), bottom_right.column()))

    panel.model.dataChanged.connect(on_change)
    qtbot.waitUntil(lambda: changed != [], timeout=3000)
    assert set(changed) == {(COL["status"], COL["status"])}
    # Hidden, the panel does not tick.
    panel.hide()
    assert not panel.time_left_timer.isActive()
    panel.show()
    assert panel.time_left_timer.isActive()


def test_time_left_reads_in_seconds_minutes_hours_days() -> None:
    now = parse_timestamp("2026-01-02T03:04:05Z")
    assert time_left_text(now + timedelta(seconds=42), now) == "42 s left"
    assert time_left_text(now + timedelta(minutes=42, seconds=30), now) == "42 min left"
    assert time_left_text(now + timedelta(hours=3, minutes=5), now) == "3 h 05 min left"
    assert time_left_text(now + timedelta(days=2, hours=4), now) == "2 d 4 h left"
    assert time_left_text(now - timedelta(seconds=1), now) == "end time passed"


@pytest.mark.slow
def test_a_new_fill_appears_within_one_poll_on_top_highlighted(
    qtbot: QtBot, trader: Trader
) -> None:
    interval = 2.0
    panel = open_panel(qtbot, trader.live, interval=interval)
    assert shown_ids(panel) == []
    placed_at = time.monotonic()
    order = trader.market("USD", "BTC", "500")  # straight to the server: no fill signal
    qtbot.waitUntil(lambda: order.order_id in shown_ids(panel), timeout=int(interval * 1000) + 1500)
    assert time.monotonic() - placed_at <= interval + 1.5
    assert shown_ids(panel) == [order.order_id]
    assert order.order_id in panel.model.highlighted()
    top = panel.proxy.index(0, COL["size"])
    highlight = panel.proxy.data(top, Qt.ItemDataRole.BackgroundRole)
    assert highlight == highlight_colour(current_palette()) and highlight.alpha() < 255
    # The highlight is brief.
    qtbot.waitUntil(lambda: not panel.model.highlighted(), timeout=WAIT_MS)
    assert panel.proxy.data(top, Qt.ItemDataRole.BackgroundRole) is None


def test_an_order_sent_from_the_ticket_appears_at_once(qtbot: QtBot, trader: Trader) -> None:
    """With a one-minute poll, only the fill signal can bring it in quickly."""
    panel = open_panel(qtbot, trader.live, interval=60.0)
    qtbot.waitUntil(lambda: trader.live.desks.orders.top_of_book != {}, timeout=WAIT_MS)
    result = run(qtbot, trader.live.desks.orders.submit(TicketInput("USD", "BTC", D(250))))
    assert result.status == "filled", result.message
    assert result.order is not None
    sent = time.monotonic()
    qtbot.waitUntil(lambda: shown_ids(panel) == [result.order.order_id], timeout=3000)  # type: ignore[union-attr]
    assert time.monotonic() - sent < 3.0
    assert result.order.order_id in panel.model.highlighted()
    row = panel.model.row_of(result.order.order_id)
    assert panel.model.cell(row, COL["client_order_id"]).display == result.client_order_id


def test_a_hidden_list_is_not_polled_and_catches_up_when_shown(
    qtbot: QtBot, trader: Trader
) -> None:
    panel = open_panel(qtbot, trader.live, interval=0.25)
    requests = record_requests(trader.live)
    ticks: list[object] = []
    panel.feed.poller.status.subscribe(ticks.append)
    panel.hide()  # the dock closed, or a tab in front of it
    requests.clear()
    ticks.clear()
    qtbot.waitUntil(lambda: len(ticks) >= 3, timeout=WAIT_MS)  # three polls went by
    assert sent_queries(requests, ORDERS_PATH) == []
    order = trader.market("USD", "BTC", "42")
    panel.show()
    qtbot.waitUntil(lambda: shown_ids(panel) == [order.order_id], timeout=WAIT_MS)
    assert sent_queries(requests, ORDERS_PATH) != []


# -- filters ------------------------------------------------------------------------------------


def test_every_filter_changes_the_query_and_the_rows(qtbot: QtBot, trader: Trader) -> None:
    start = utc_now() - timedelta(seconds=2)
    btc = trader.market("USD", "BTC", "1000")
    rests = trader.resting()
    eth = trader.market("ETH", "USD", "0.5")
    panel = open_panel(qtbot, trader.live)
    assert shown_ids(panel) == [eth.order_id, rests.order_id, btc.order_id]
    requests = record_requests(trader.live)

    previous: list[dict[str, str]] = [{"max": "100"}]

    def check(asked: list[dict[str, str]], shown: list[str]) -> None:
        """After the filter applies, the server was asked exactly ``asked`` (a poll of the
        previous filter may still have been on its way) and the table shows ``shown``."""
        wanted = panel.current_filter()
        requests.clear()
        assert panel.apply_filters()
        wait_loaded(qtbot, panel, wanted)
        queries = sent_queries(requests, ORDERS_PATH)
        assert all(query in queries for query in asked), (wanted, queries)
        assert all(query in asked or query in previous for query in queries), (wanted, queries)
        assert shown_ids(panel) == shown, wanted
        previous[:] = asked

    choose(panel.status_filter, "filled")
    check([{"max": "100", "status": "filled"}], [eth.order_id, btc.order_id])
    choose(panel.status_filter, "submitted")
    check([{"max": "100", "status": "submitted"}], [rests.order_id])
    choose(panel.status_filter, "")
    choose(panel.type_filter, "limit")
    check([{"max": "100", "type": "limit"}], [rests.order_id])
    choose(panel.type_filter, "market")
    check([{"max": "100", "type": "market"}], [eth.order_id, btc.order_id])
    choose(panel.type_filter, "")
    choose(panel.pair_filter, "BTC/USD")
    check(
        [
            {"max": "100", "source": "BTC", "destination": "USD"},
            {"max": "100", "source": "USD", "destination": "BTC"},
        ],
        [rests.order_id, btc.order_id],
    )
    choose(panel.pair_filter, "")
    choose(panel.asset_filter, "ETH")
    check([{"max": "100", "source": "ETH"}, {"max": "100", "destination": "ETH"}], [eth.order_id])
    choose(panel.asset_filter, "")
    assert eth.submitted_at is not None
    panel.start_filter.set_value(start)
    panel.end_filter.set_value(eth.submitted_at)
    wanted = panel.current_filter()
    assert wanted.start is not None and wanted.end is not None
    assert wanted.end <= eth.submitted_at and eth.submitted_at - wanted.end < timedelta(seconds=1)
    check(
        [
            {
                "max": "100",
                "submittedAtStart": wanted.start.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
                "submittedAtEnd": wanted.end.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            }
        ],
        [rests.order_id, btc.order_id],
    )
    # A range that ends before it starts is refused in words; the entered values stay.
    panel.start_filter.set_value(eth.submitted_at + timedelta(hours=1))
    assert not panel.apply_filters()
    assert "start of the time range" in panel.status_label.text()
    assert panel.start_filter.check.isChecked() and panel.end_filter.check.isChecked()
    assert shown_ids(panel) == [rests.order_id, btc.order_id]
    panel.start_filter.set_value(None)
    panel.end_filter.set_value(None)
    check([{"max": "100"}], [eth.order_id, rests.order_id, btc.order_id])
    # Free text filters what is shown, without asking the server.
    requests.clear()
    panel.search.setText(eth.order_id[:12])
    assert shown_ids(panel) == [eth.order_id]
    assert panel.status_label.text() == "1 of 3 orders"
    panel.search.setText("submitted")
    assert shown_ids(panel) == [rests.order_id]
    assert [q for q in sent_queries(requests, ORDERS_PATH) if set(q) - {"max"}] == []


def test_filter_edits_apply_by_themselves(qtbot: QtBot, trader: Trader) -> None:
    filled = trader.market("USD", "BTC", "100")
    trader.resting()
    panel = open_panel(qtbot, trader.live)
    choose(panel.status_filter, "filled")  # no explicit apply: the debounce timer does it
    wanted = OrderFilter(status="filled")
    wait_loaded(qtbot, panel, wanted)
    assert shown_ids(panel) == [filled.order_id]


# -- paging, sorting ----------------------------------------------------------------------------


def test_load_more_pages_back_with_start_at_ordering(qtbot: QtBot, trader: Trader) -> None:
    placed = [trader.market("USD", "BTC", str(10 + i)) for i in range(5)]
    newest = [order.order_id for order in reversed(placed)]
    panel = open_panel(qtbot, trader.live, page_size=2)
    assert shown_ids(panel) == newest[:2]
    assert panel.load_more_button.isEnabled()
    requests = record_requests(trader.live)
    for count in (4, 5):
        lowest = min(
            panel.model.order_row(r).order.ordering or 0 for r in range(panel.model.rowCount())
        )
        requests.clear()
        QTest.mouseClick(panel.load_more_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: len(shown_ids(panel)) == count, timeout=WAIT_MS)  # noqa: B023
        paged = [q for q in sent_queries(requests, ORDERS_PATH) if "startAtOrdering" in q]
        assert paged == [{"max": "2", "startAtOrdering": str(lowest - 1)}]
    assert shown_ids(panel) == newest
    qtbot.waitUntil(lambda: not panel.load_more_button.isEnabled(), timeout=WAIT_MS)


def test_sizes_and_times_sort_as_numbers(qtbot: QtBot, trader: Trader) -> None:
    sizes = ["100", "20", "3"]  # as text: "100" < "20" < "3"
    placed = [trader.market("USD", "BTC", size) for size in sizes]
    panel = open_panel(qtbot, trader.live)
    panel.sort_by(COL["notional"], Qt.SortOrder.AscendingOrder)
    assert shown_ids(panel) == [placed[2].order_id, placed[1].order_id, placed[0].order_id]
    panel.sort_by(COL["notional"], Qt.SortOrder.DescendingOrder)
    assert shown_ids(panel) == [o.order_id for o in placed]
    panel.sort_by(COL["submitted"], Qt.SortOrder.AscendingOrder)
    assert shown_ids(panel) == [o.order_id for o in placed]
    panel.sort_by(COL["submitted"], Qt.SortOrder.DescendingOrder)
    assert shown_ids(panel) == [o.order_id for o in reversed(placed)]


# -- export, copy, details ----------------------------------------------------------------------


def test_csv_export_is_the_view_exactly(qtbot: QtBot, trader: Trader, tmp_path: Path) -> None:
    trader.market("USD", "BTC", "1234.56")
    trader.resting("10.5")
    trader.market("BTC", "USD", "0.00012345")
    trader.market("USD", "ETH", "77")
    panel = open_panel(qtbot, trader.live)
    panel.sort_by(COL["notional"], Qt.SortOrder.DescendingOrder)
    panel.search.setText("BTC")  # the ETH order is not in the view
    path = tmp_path / "orders.csv"
    assert panel.export_to(path) == 3
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    compare_csv(panel.proxy, rows, NUMBERS, TIMES)
    # The pair-terms columns and the wire's own, named as the wire (and the details) name them.
    assert rows[0][: COL["client_order_id"] + 1] == [
        "Submitted",
        "Pair",
        "Side",
        "Amount",
        "Avg fill price",
        "Mid at fill",
        "vs mid (bps)",
        "Notional",
        "Status",
        "Limit",
        "End",
        "Type",
        "Executed / updated",
        "Order id",
        "Client order id",
    ]
    assert {key: rows[0][COL[key]] for key in WIRE_HEADERS} == WIRE_HEADERS
    # Sold 0.00012345 BTC for about 11 USD: more notional than the 10.5 USD resting buy.
    assert [row[COL["size"]] for row in rows[1:]] == ["1234.56 USD", "0.00012345 BTC", "10.5 USD"]
    # The resting limit order (1 BTC per USD on the wire) reads 1 USD per BTC; its wire limit
    # is the service's exact string.
    resting = rows[3]
    assert (resting[COL["side"]], resting[COL["limit"]]) == ("Buy", "1.00")
    assert resting[COL["limit_wire"]] == "1 USD/BTC"
    assert resting[COL["status"]] == "resting" and resting[COL["status_wire"]] == "submitted"
    sold = rows[2]
    assert (sold[COL["side"]], sold[COL["amount"]]) == ("Sell", "0.00012345")
    # Through the (non-blocking) file dialog, as the button does it.
    chosen = tmp_path / "via-dialog.csv"
    dialog = panel.ask_export()
    assert dialog.isVisible()
    dialog.selectFile(str(chosen))
    dialog.accept()
    qtbot.waitUntil(chosen.exists, timeout=WAIT_MS)
    assert chosen.read_text(encoding="utf-8") == path.read_text(encoding="utf-8")
    assert ("info", f"Exported 3 orders to {chosen}") in trader.live.notices


def test_copy_row_puts_the_exact_text_on_the_clipboard(qtbot: QtBot, trader: Trader) -> None:
    order = trader.market("USD", "BTC", "1234.5")
    panel = open_panel(qtbot, trader.live)
    panel.table.selectRow(0)
    QTest.mouseClick(panel.copy_button, Qt.MouseButton.LeftButton)
    text = QApplication.clipboard().text()
    expected = [
        str(panel.proxy.data(panel.proxy.index(0, c), EXPORT_ROLE))
        for c in range(panel.proxy.columnCount())
    ]
    assert text == "\t".join(expected)
    cells = text.split("\t")
    assert cells[COL["order_id"]] == order.order_id
    assert cells[COL["size"]] == "1234.5 USD"
    assert cells[COL["notional"]] == "1234.50"  # exact, with the decimals shown (USD's 2)
    assert order.result.total is not None
    assert D(cells[COL["amount"]]) == order.result.total.value
    assert cells[COL["total_wire"]] == str(order.result.total)
    # Ctrl+C on the table does the same.
    QApplication.clipboard().clear()
    panel.table.setFocus()
    QTest.keyClick(panel.table, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QApplication.clipboard().text() == text


def test_details_show_every_field_and_the_raw_json(qtbot: QtBot, trader: Trader) -> None:
    order = trader.resting("12.34")
    panel = open_panel(qtbot, trader.live)
    panel.table.selectRow(0)
    panel.table.setFocus()
    QTest.keyClick(panel.table, Qt.Key.Key_Return)
    dialog = panel.details_dialog
    assert dialog is not None and dialog.isVisible()
    assert dialog.windowTitle() == f"Order {order.order_id} · Buy BTC/USD"
    fields = {name: edit.text() for name, edit in dialog.edits.items()}
    raw = order.raw
    assert order.result.updated_at is not None
    assert fields == {
        "orderId": raw["orderId"],
        "ordering": str(raw["ordering"]),
        "accountId": raw["accountId"],
        "userId": raw["userId"],
        "email": raw["email"],
        "size": "12.34 USD",
        "source": "USD",
        "destination": "BTC",
        "type": "limit",
        "submittedAt": raw["submittedAt"],
        "clientOrderId": raw["clientOrderId"],
        "limit": raw["limit"],
        "endAt": "",
        "result.status": "submitted",
        "result.price": "",
        "result.invertedPrice": "",
        "result.executedAt": "",
        "result.updatedAt": parse_and_format(raw["result"]["updatedAt"]),
        "result.total": "",
        "result.error": "",
    }
    assert json.loads(dialog.json_view.toPlainText(), parse_float=D) == raw
    QTest.mouseClick(dialog.copy_buttons["orderId"], Qt.MouseButton.LeftButton)
    assert QApplication.clipboard().text() == order.order_id
    QTest.mouseClick(dialog.copy_json, Qt.MouseButton.LeftButton)
    assert json.loads(QApplication.clipboard().text(), parse_float=D) == raw
    QTest.mouseClick(dialog.copy_all, Qt.MouseButton.LeftButton)
    assert f"orderId\t{order.order_id}" in QApplication.clipboard().text().splitlines()
    dialog.close()


def parse_and_format(text: str) -> str:
    return format_timestamp(parse_timestamp(text))


# -- the model on hand-built orders -------------------------------------------------------------


def hand_order(order_id: str, ordering: int, status: str, size: str = "1") -> OrderRow:
    raw = {
        "orderId": order_id,
        "ordering": ordering,
        "size": f"{size} BTC",
        "source": "BTC",
        "destination": "USD",
        "type": "limit",
        "submittedAt": f"2026-01-02T03:04:{ordering:02d}Z",
        "result": {"status": status, "error": "partly done" if status != "filled" else ""},
    }
    return OrderRow(Order.parse(raw, "order"), "")


def snapshot(*rows: OrderRow, reset: bool = False, new: set[str] | None = None) -> OrdersSnapshot:
    return OrdersSnapshot(tuple(rows), OrderFilter(), frozenset(new or ()), reset=reset)


def test_unknown_statuses_are_shown_as_sent(qtmodeltester: ModelTester) -> None:
    model = OrdersModel(Precision())
    model.set_snapshot(snapshot(hand_order("a", 2, "partiallyFilled"), reset=True))
    status = model.index(0, COL["status"])
    assert model.data(status) == "partiallyFilled"
    assert model.data(status, EXPORT_ROLE) == "partiallyFilled"
    assert "Not a status this version knows" in model.data(status, Qt.ItemDataRole.ToolTipRole)
    assert model.data(status, Qt.ItemDataRole.FontRole).italic()
    assert model.data(status, Qt.ItemDataRole.ForegroundRole) is None
    qtmodeltester.check(model)  # type: ignore[no-untyped-call]


def test_updates_signal_only_what_changed(qtbot: QtBot) -> None:
    model = OrdersModel(Precision())
    a, b = hand_order("a", 1, "submitted"), hand_order("b", 2, "filled")
    model.set_snapshot(snapshot(b, a, reset=True))
    changed: list[tuple[int, int, int, int]] = []
    repainted: list[int] = []
    inserted: list[tuple[int, int]] = []
    resets: list[bool] = []

    def on_change(top_left: QModelIndex, bottom_right: QModelIndex, roles: list[int]) -> None:
        if roles == [Qt.ItemDataRole.BackgroundRole]:
            repainted.append(top_left.row())  # a highlight starting or ending
        else:
            changed.append(
                (top_left.row(), top_left.column(), bottom_right.row(), bottom_right.column())
            )

    model.dataChanged.connect(on_change)
    model.rowsInserted.connect(lambda _p, first, last: inserted.append((first, last)))
    model.modelReset.connect(lambda: resets.append(True))
    c = hand_order("c", 3, "filled")
    a_filled = hand_order("a", 1, "filled")
    model.set_snapshot(snapshot(c, b, a_filled, new={"c"}))
    assert inserted == [(0, 0)]
    assert resets == []
    # a's status, shown and as sent, nothing else.
    assert changed == [
        (2, COL["status"], 2, COL["status"]),
        (2, COL["status_wire"], 2, COL["status_wire"]),
    ]
    assert repainted == [0]
    assert model.keys() == ["c", "b", "a"]
    assert model.highlighted() == {"c"}


def test_counts_agree_with_their_noun_and_group_thousands() -> None:
    assert counted(1, "order") == "1 order"
    assert counted(2, "order") == "2 orders"
    assert counted(1234, "row") == "1,234 rows"
    assert counted(1, "entry", "entries") == "1 entry"
    assert counted(0, "entry", "entries") == "0 entries"


def test_the_poll_interval_follows_the_settings(qtbot: QtBot, live: Live) -> None:
    Preferences(orders=D(7)).save(live.context.settings)
    panel = OrdersPanel(live.context, live.desks.journal)
    qtbot.addWidget(panel)
    assert panel.feed.poller.interval == 7.0
    panel.apply_preferences(Preferences(orders=D("0.5")))
    assert panel.feed.poller.interval == 0.5


def test_the_orders_dock_fits_at_every_width(qtbot: QtBot, trader: Trader) -> None:
    """At 900, 1400 and 1920 px every filter ("To" too), the search box and Export
    CSV lie inside the panel: the rows wrap instead of running past the edge."""
    panel = open_panel(qtbot, trader.live)
    fits_at_every_width(qtbot, panel)
    for widget in (panel.end_filter, panel.search, panel.export_button):
        assert widget.isVisible() and within(widget, panel), widget.objectName()


def test_every_column_fits_its_title_and_first_rows(qtbot: QtBot, trader: Trader) -> None:
    """The title "Executed / updated" was cut to "ecuted / update" at Qt's default width, and
    a submitted time to "2026-11-24 0…" once the first orders came."""
    trader.resting()
    panel = open_panel(qtbot, trader.live)
    qtbot.waitUntil(lambda: panel.proxy.rowCount() > 0, timeout=WAIT_MS)
    table = panel.table
    qtbot.waitUntil(lambda: table.sizer.fits > 0 and not table.sizer.pending)  # the next frame
    header = table.horizontalHeader()
    shown = [c for c in range(header.count()) if not header.isSectionHidden(c)]
    assert shown
    for column in shown:
        title = panel.proxy.headerData(column, Qt.Orientation.Horizontal)
        assert header.sectionSize(column) >= header.sectionSizeHint(column), title
        if COLUMNS[column].fitting is not Fit.YIELD:  # an id gives way first (whole in its tip)
            assert header.sectionSize(column) >= table.sizeHintForColumn(column), title


def test_an_unknown_outcome_is_shown_above_the_orders_until_the_trader_dismisses_it(
    qtbot: QtBot, live: Live
) -> None:
    """An order that may have reached the server is shown as unknown in the blotter
    (not as "not placed", not hidden), with the facts before it is dismissed."""
    desks = live.desks
    panel = OrdersPanel(live.context, desks.journal, desks.outcomes)
    qtbot.addWidget(panel)
    panel.resize(1200, 400)
    panel.show()
    strip = panel.unknowns
    assert strip is not None and strip.isHidden()
    cid = "tt-lost-answer"
    body = {"source": "USD", "destination": "BTC", "size": "100", "clientOrderId": cid}
    desks.journal.record_intent(cid, "market", live.account.account, body)
    desks.journal.record_outcome(cid, "unknown", detail="the answer was lost")
    desks.outcomes.refresh()
    assert strip.isVisible()
    assert "1 order or accept with an unknown outcome" in strip.heading.text()
    [line] = strip.lines
    assert line.text().startswith("Buy BTC for 100 USD (market) · sent ")
    assert "the answer was lost" in line.text()

    [dismiss] = strip.dismiss_buttons
    QTest.mouseClick(dismiss, Qt.MouseButton.LeftButton)
    first = strip.box
    assert first is not None
    qtbot.waitUntil(first.isVisible)
    assert "nothing is cancelled" in first.text() and cid in first.text()
    QTest.keyClick(first, Qt.Key.Key_Escape)  # Escape keeps looking
    qtbot.waitUntil(lambda: not first.isVisible())
    entry = desks.journal.entry(cid)
    assert entry is not None and entry.status == "unknown" and strip.isVisible()

    QTest.mouseClick(strip.dismiss_buttons[0], Qt.MouseButton.LeftButton)
    box = strip.box
    assert box is not None
    qtbot.waitUntil(box.isVisible)
    [confirm] = [b for b in box.buttons() if b.text() == "&Dismiss"]
    QTest.mouseClick(confirm, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(strip.isHidden)
    entry = desks.journal.entry(cid)
    assert entry is not None and entry.status == "dismissed"
    assert entry.detail == "dismissed by the trader while unknown; last known: the answer was lost"


@pytest.mark.slow
def test_a_big_list_is_taken_in_by_sliced_jobs(qtbot: QtBot, trader: Trader) -> None:
    """Past ``sync_rows`` a poll's list reaches the table as sliced jobs, so a big list never
    stalls the event loop (here forced at any size): new orders still go on top highlighted,
    sorted and searched as before."""
    first = trader.market("USD", "BTC", "100")
    panel = open_panel(qtbot, trader.live, interval=0.5)
    panel.model.sync_rows = 0
    panel.proxy.sync_rows = 0
    assert shown_ids(panel) == [first.order_id]
    second = trader.market("USD", "ETH", "50")
    qtbot.waitUntil(lambda: shown_ids(panel) == [second.order_id, first.order_id], timeout=WAIT_MS)
    assert second.order_id in panel.model.highlighted()
    assert panel.snapshot is not None and second.order_id in panel.snapshot.new_ids
    panel.sort_by(COL["notional"], Qt.SortOrder.AscendingOrder)
    qtbot.waitUntil(lambda: not panel.proxy.pending(), timeout=WAIT_MS)
    assert shown_ids(panel) == [second.order_id, first.order_id]  # 50 < 100 USD
    QTest.keyClicks(panel.search, "eth")
    qtbot.waitUntil(lambda: shown_ids(panel) == [second.order_id], timeout=WAIT_MS)
    qtbot.waitUntil(lambda: panel.status_label.text() == "1 of 2 orders", timeout=WAIT_MS)
