"""Per-trade economics in the blotter, against the real sandbox: the chart of the live
session records the mids, the blotter shows each fill's mid at fill and the basis points against
it — positive a cost for a Buy and a Sell alike, the RFQ's markup in the same column — in the
view, the CSV export and the details; "—" with the reason where no mid was stored.

The sandbox runs with its market at rest (``--tick 100000``: the walk's first step is a day
away), so every fill's price and every stored mid is known: ETH/USD bid 3,099.76 ask 3,100.24,
BTC/USD bid 90,995.45 ask 91,004.55."""

from __future__ import annotations

import csv
import re
import shutil
import time
from collections.abc import Callable
from decimal import Decimal, localcontext
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QSettings, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMenu
from pytestqt.qtbot import QtBot

from app.api import ClientSettings, ServiceClient
from app.domain import Amount
from app.domain.display import Precision
from app.domain.money import MONEY_CONTEXT
from app.domain.pair_terms import Trade
from app.domain.records import Order
from app.services.fill_mids import MID_TOLERANCE, filled_at
from app.services.mid_history import MidHistory, stored_price
from app.services.session import FeedIntervals
from app.ui.bridge import SessionBridge
from app.ui.csv_export import EXPORT_ROLE
from app.ui.models.columns import column_numbers
from app.ui.models.orders_model import BPS_TOOLTIP, COLUMNS, WIRE_COLUMNS
from app.ui.models.sorting import SORT_ROLE
from app.ui.panels.base import PanelContext
from app.ui.panels.chart import ChartPanel
from app.ui.panels.orders import OrdersPanel
from tests.harness import SandboxProcess, open_terminal
from tests.helpers.live import Live, LiveFactory
from tests.helpers.qt import right_click, run

COL = column_numbers(COLUMNS)
D = Decimal
WAIT_MS = 15_000
AT_REST = ("--tick", "100000")


def recording_chart(qtbot: QtBot, live: Live, *pairs: str) -> ChartPanel:
    """The window's chart on the live session: it stores every polled mid (in the settings'
    folder, where the blotter looks for them); returns once it holds mids of ``pairs``."""
    chart = ChartPanel(live.context)
    qtbot.addWidget(chart)
    qtbot.waitUntil(
        lambda: all(chart.history.read(pair).shape[1] >= 2 for pair in pairs), timeout=WAIT_MS
    )
    return chart


def open_blotter(qtbot: QtBot, live: Live) -> OrdersPanel:
    panel = OrdersPanel(live.context, live.desks.journal, interval=0.3)
    qtbot.addWidget(panel)
    panel.resize(1500, 400)
    panel.show()
    return panel


def settled(panel: OrdersPanel, orders: list[Order]) -> Callable[[], bool]:
    """Every one of ``orders`` is shown with its mid at fill settled for good."""

    def check() -> bool:
        model = panel.model
        rows = [model.position(order.order_id) for order in orders]
        if any(row is None for row in rows):
            return False
        economics = [model.order_row(row).economics for row in rows if row is not None]
        return all(e is not None and e.final for e in economics)

    return check


def recorded_mid(store: MidHistory, pair: str, order: Order, live: Live) -> Decimal:
    """The hand computation: the mids the session stored within the tolerance of the fill
    (this machine's clock: the fill's service time less the clock offset) are all the same
    top of book (the market is at rest); its mid, from the stored bid and ask."""
    moment = filled_at(order)
    assert moment is not None
    local = (moment - live.session.clock_offset).timestamp()
    times, bids, asks = store.read(pair)
    near = {
        (stored_price(float(bid)), stored_price(float(ask)))
        for at, bid, ask in zip(times, bids, asks, strict=True)
        if abs(float(at) - local) <= MID_TOLERANCE
    }
    assert len(near) == 1, near
    ((bid, ask),) = near
    with localcontext(MONEY_CONTEXT):
        return (bid + ask) / 2


def cost_bps(side: str, price: Decimal, mid: Decimal) -> Decimal:
    with localcontext(MONEY_CONTEXT):
        return (price - mid if side == "buy" else mid - price) * 10_000 / mid


@pytest.mark.slow
def test_buy_sell_and_rfq_fills_show_their_mid_and_cost(
    qtbot: QtBot,
    live_factory: LiveFactory,
    sandbox_factory: Callable[..., SandboxProcess],
    tmp_path: Path,
) -> None:
    live = live_factory(sandbox_factory(*AT_REST))
    client = live.session.client
    chart = recording_chart(qtbot, live, "ETH/USD", "BTC/USD")
    # A marketable limit Buy of ETH (at most 3,200 USD per ETH) fills at the ask; a marketable
    # limit Sell of BTC (at least 90,000 USD) at the bid; an RFQ Buy of ETH at the quote's price.
    bought = run(qtbot, client.limit_order("USD", "ETH", D(1000), limit=D(1) / D(3200)))
    sold = run(qtbot, client.limit_order("BTC", "USD", D("0.1"), limit=D(90000)))
    quote = run(qtbot, client.request_quote("ETH/USD", Amount(D("0.1"), "ETH")))
    accepted = run(qtbot, client.accept_quote(quote.order_id, "buy"))
    for order in (bought, sold, accepted):
        assert order.result.status == "filled"
    assert bought.result.inverted_price is not None and sold.result.price is not None
    assert bought.result.inverted_price.value == D("3100.24")  # the ask at rest
    assert sold.result.price.value == D("90995.45")  # the bid at rest
    assert quote.buy.price.value == D("3101.80")  # the ask, 5 bp up, to the tick above

    panel = open_blotter(qtbot, live)
    qtbot.waitUntil(settled(panel, [bought, sold, accepted]), timeout=WAIT_MS)
    model = panel.model
    eth_mid = recorded_mid(chart.history, "ETH/USD", bought, live)
    assert eth_mid == D("3100.00") == recorded_mid(chart.history, "ETH/USD", accepted, live)
    btc_mid = recorded_mid(chart.history, "BTC/USD", sold, live)
    assert btc_mid == D("91000.00")
    # Each fill is measured at its average fill price (the total over the size), the price the
    # table shows: the service rounds each total down, so a buy's average is a little above the
    # ask it met (1,000 USD got 0.32255567 ETH) and a sell's a little below the bid (0.1 BTC
    # got 9,099.54 USD).
    averages = {}
    for order in (bought, sold, accepted):
        trade = Trade.of(order, live.session.pair_info)
        assert trade is not None
        averages[order.order_id] = trade.price
    assert averages[sold.order_id] == D("90995.4")
    assert averages[accepted.order_id] == D("3101.80")
    assert str(averages[bought.order_id]).startswith("3100.24002988")
    expected = {
        bought.order_id: ("Buy", "ETH", eth_mid, "3,100.00", "3,100.24", "+0.8", "0.7743"),
        sold.order_id: ("Sell", "BTC", btc_mid, "91,000.00", "90,995.40", "+0.5", "0.5055"),
        accepted.order_id: ("Buy", "ETH", eth_mid, "3,100.00", "3,101.80", "+5.8", "5.8065"),
    }
    for order_id, (side, base, mid, mid_text, price_text, shown, exported) in expected.items():
        row = model.row_of(order_id)
        bps = cost_bps(side.lower(), averages[order_id], mid)
        assert model.cell(row, COL["side"]).display == side
        assert model.cell(row, COL["price"]).display == price_text
        assert model.cell(row, COL["mid"]) == (mid_text, mid, str(mid))
        assert model.cell(row, COL["vs_mid"]) == (shown, bps, exported)
        tip = model.data(model.index(row, COL["vs_mid"]), Qt.ItemDataRole.ToolTipRole)
        assert "a cost" in tip
        mid_tip = model.data(model.index(row, COL["mid"]), Qt.ItemDataRole.ToolTipRole)
        assert mid_tip.startswith(f"{mid} USD per {base} = (bid "), mid_tip
    rfq_tip = model.data(
        model.index(model.row_of(accepted.order_id), COL["vs_mid"]), Qt.ItemDataRole.ToolTipRole
    )
    assert rfq_tip.startswith("Markup of the RFQ price against the mid: +5.8065 bp")
    sell_tip = model.data(
        model.index(model.row_of(sold.order_id), COL["vs_mid"]), Qt.ItemDataRole.ToolTipRole
    )
    assert sell_tip.startswith("Slippage against the mid: +0.5055 bp, a cost")
    header = model.headerData(COL["vs_mid"], Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert header == BPS_TOOLTIP and "Positive is a cost to you" in header
    assert not panel.table.isColumnHidden(COL["mid"])
    assert not panel.table.isColumnHidden(COL["vs_mid"])

    # Computed once per fill: later polls look nothing up again, and publish nothing new.
    mids = panel.feed.mids
    assert mids is not None and mids.look_ups >= 3 and not mids.unsettled
    before = mids.look_ups
    polls: list[object] = []
    published: list[object] = []
    stop_polls = panel.feed.poller.status.subscribe(polls.append)
    stop_published = panel.feed.updates.subscribe(published.append)
    qtbot.waitUntil(lambda: len(polls) >= 2, timeout=WAIT_MS)
    stop_polls()
    stop_published()
    assert (mids.look_ups, published) == (before, [])

    # The CSV export and the details carry them, exactly.
    path = tmp_path / "orders.csv"
    assert panel.export_to(path) == 3
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0][COL["mid"]] == "Mid at fill" and rows[0][COL["vs_mid"]] == "vs mid (bps)"
    by_id = {line[COL["order_id"]]: line for line in rows[1:]}
    for order_id, (_, _, mid, _, _, _, exported) in expected.items():
        assert D(by_id[order_id][COL["mid"]]) == mid
        assert by_id[order_id][COL["vs_mid"]] == exported
    proxy = panel.proxy
    sort_keys = [proxy.data(proxy.index(r, COL["vs_mid"]), SORT_ROLE) for r in range(3)]
    exports = [proxy.data(proxy.index(r, COL["vs_mid"]), EXPORT_ROLE) for r in range(3)]
    assert all(isinstance(key, Decimal) for key in sort_keys) and set(exports) == {
        "0.7743",
        "0.5055",
        "5.8065",
    }
    dialog = panel.details_of(model.row_of(accepted.order_id))
    try:
        fields = dict(dialog.fields)
        assert fields["mid at fill (computed)"] == "3100.00"
        assert (fields["mid at fill: bid"], fields["mid at fill: ask"]) == ("3099.76", "3100.24")
        assert fields["vs mid, bps, + a cost (markup)"] == "5.8065"
    finally:
        dialog.close()


@pytest.mark.slow
def test_a_fill_without_a_stored_mid_shows_a_dash_and_why(qtbot: QtBot, live: Live) -> None:
    """A fill from before the terminal stored anything, and one of a pair it never polled."""
    client = live.session.client
    early = run(qtbot, client.market_order("USD", "ETH", D(100)))
    early_at = time.time()
    live.session.set_watchlist(["BTC/USD", "ETH/USD"])  # SOL/USD is never polled from now on
    # The terminal starts storing mids more than the tolerance after the first fill.
    qtbot.waitUntil(lambda: time.time() > early_at + MID_TOLERANCE + 0.5, timeout=WAIT_MS)
    recording_chart(qtbot, live, "ETH/USD")
    unwatched = run(qtbot, client.market_order("USD", "SOL", D(100)))
    watched = run(qtbot, client.market_order("USD", "BTC", D(100)))
    panel = open_blotter(qtbot, live)
    qtbot.waitUntil(settled(panel, [early, unwatched, watched]), timeout=WAIT_MS)
    model = panel.model
    for order, reason in (
        (early, "the fill is older than the stored mids of ETH/USD"),
        (unwatched, "this terminal has stored no mid of SOL/USD"),
    ):
        row = model.row_of(order.order_id)
        for key in ("mid", "vs_mid"):
            assert model.cell(row, COL[key]) == ("—", None, ""), key
            tip = model.data(model.index(row, COL[key]), Qt.ItemDataRole.ToolTipRole)
            assert tip.startswith(f"No mid known for this fill: {reason}"), tip
    # The BTC fill, polled all along, has its figure (its sign is the moving market's: this
    # sandbox walks, so the nearest stored mid may be either side of the fill's price).
    row = model.row_of(watched.order_id)
    assert model.cell(row, COL["mid"]).sort is not None
    assert re.fullmatch(r"[+-]?[0-9][0-9,]*\.[0-9]", model.cell(row, COL["vs_mid"]).display)


@pytest.mark.qt_log_ignore(
    "^This plugin does not support raise\\(\\)$",  # the offscreen platform, for the popup menu
    "^This plugin does not support grabbing the keyboard$",
)
def test_the_header_menu_offers_the_economics_columns(qtbot: QtBot, live: Live) -> None:
    panel = open_blotter(qtbot, live)
    table, columns = panel.table, panel.columns
    header = table.horizontalHeader()
    where = QPoint(header.sectionViewportPosition(COL["price"]) + 4, header.height() // 2)
    right_click(header.viewport(), where)
    qtbot.waitUntil(lambda: isinstance(QApplication.activePopupWidget(), QMenu))
    menu = QApplication.activePopupWidget()
    assert menu is columns.menu
    offered = [action.text() for action in columns.menu.actions()]
    assert "Mid at fill" in offered and "vs mid (bps)" in offered
    assert not {"size", "result.price", "result.status"} & set(offered)  # the wire's: never
    bps = columns.actions["vs_mid"]
    QTest.mouseClick(menu, Qt.MouseButton.LeftButton, pos=menu.actionGeometry(bps).center())
    qtbot.waitUntil(lambda: table.isColumnHidden(COL["vs_mid"]))
    assert not table.isColumnHidden(COL["mid"])
    again = open_blotter(qtbot, live)  # the choice is kept; the wire's columns stay hidden
    hidden = [again.table.isColumnHidden(c) for c in range(again.model.columnCount())]
    assert hidden == [key == "vs_mid" or key in WIRE_COLUMNS for key in COL]


@pytest.mark.slow
def test_the_mid_at_fill_is_the_same_after_a_restart(
    qtbot: QtBot,
    live_factory: LiveFactory,
    sandbox: SandboxProcess,
    settings: QSettings,
    tmp_path: Path,
) -> None:
    """A market buy on the walking sandbox: its mid at fill and vs mid are settled once and
    frozen in the journal. The terminal closes, the chart's stored mids are gone (a new machine
    state: nothing to look the fill up in), and a new terminal on the same account and journal
    shows the same price, mid and basis points — read back, not looked up — and the figure's
    sign is the buy's: above the mid is a cost."""
    live = live_factory(sandbox)
    chart = recording_chart(qtbot, live, "BTC/USD")
    bought = run(qtbot, live.session.client.market_order("USD", "BTC", D(1000)))
    panel = open_blotter(qtbot, live)
    qtbot.waitUntil(settled(panel, [bought]), timeout=WAIT_MS)
    model = panel.model
    row = model.row_of(bought.order_id)
    keys = ("price", "mid", "vs_mid")
    before = [model.cell(row, COL[key]) for key in keys]
    economics = model.order_row(row).economics
    assert economics is not None and economics.mid is not None and economics.bps is not None
    assert economics.price is not None
    # The sign follows the trade's side: a buy above the mid is a cost (+), below it a gain.
    assert (economics.bps > 0) == (economics.price > economics.mid)
    assert before[2].display.startswith("+" if economics.price > economics.mid else "-")
    mids = panel.feed.mids
    assert mids is not None and mids.stored >= 1
    # A refresh reads the kept figure: the cells do not move.
    polls: list[object] = []
    stop_polls = panel.feed.poller.status.subscribe(polls.append)
    qtbot.waitUntil(lambda: len(polls) >= 2, timeout=WAIT_MS)
    stop_polls()
    assert [model.cell(row, COL[key]) for key in keys] == before

    # Restart: close the window's panels and the terminal (its journal with it); the chart's
    # stored mids go too.
    panel.close()
    chart.close()
    chart.history.close()
    folder = chart.history.folder
    run(qtbot, live.terminal.aclose())
    shutil.rmtree(folder)

    client = ServiceClient(ClientSettings(sandbox.url))
    intervals = FeedIntervals(top_of_book=0.25, balances=1.0, order_book=0.5)
    terminal = run(qtbot, open_terminal(sandbox, live.account, client, intervals))
    try:
        desks = terminal.open_desks(tmp_path / "journal-0.db")  # the first terminal's journal
        bridge = SessionBridge(terminal)
        precision = Precision()
        context = PanelContext(bridge, precision, settings, lambda level, text: None)
        run(qtbot, terminal.start())
        precision.learn(terminal.session.pair_info)
        again = OrdersPanel(context, desks.journal, interval=0.3)
        qtbot.addWidget(again)
        qtbot.waitUntil(settled(again, [bought]), timeout=WAIT_MS)
        shown = again.model
        after_row = shown.row_of(bought.order_id)
        assert [shown.cell(after_row, COL[key]) for key in keys] == before
        assert shown.order_row(after_row).economics == economics
        restored = again.feed.mids
        assert restored is not None and restored.restored >= 1
        assert restored.look_ups == 0  # read back from the journal, not looked up again
        again.close()
    finally:
        run(qtbot, terminal.aclose())
        bridge.deleteLater()
