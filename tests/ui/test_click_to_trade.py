"""Click-to-trade against the live sandbox, with real mouse and key events: a click
on a watchlist or ladder bid prefills a sell limit at exactly that price, an ask a buy; a
double-click sends exactly one order through the confirmation; Hit bid / Lift offer keys send
the default size; the size presets come from Settings."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

import pytest
from PySide6.QtCore import QModelIndex, QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QApplication,
    QDialogButtonBox,
    QHBoxLayout,
    QMainWindow,
    QWidget,
)
from pytestqt.qtbot import QtBot

from app.domain.records import Order
from app.ui.click_trade import TradeRequest
from app.ui.main_window import Area, MainWindow, PanelSpec
from app.ui.order_confirm import SETTINGS_KEY as CONFIRM_KEY
from app.ui.panels.depth import DepthPanel
from app.ui.panels.order_ticket import OrderTicketPanel
from app.ui.panels.top_of_book import TopOfBookPanel
from app.ui.preferences import Preferences, parse_size_presets
from tests.helpers.live import Live
from tests.helpers.order_ticket import ready
from tests.helpers.qt import run

PRESETS = "BTC: 0.01 0.1; USD: 100 1,000"


@pytest.fixture
def presets(live: Live) -> Live:
    """The session with size presets saved and the confirmation on (the defaults)."""
    Preferences(size_presets=PRESETS).save(live.context.settings)
    live.context.settings.setValue(CONFIRM_KEY, True)
    return live


@dataclass
class Desk:
    """Watchlist, ladder and ticket side by side in one window, sharing one context."""

    window: QMainWindow
    watchlist: TopOfBookPanel
    ladder: DepthPanel
    ticket: OrderTicketPanel
    live: Live


@pytest.fixture
def desk(qtbot: QtBot, presets: Live) -> Desk:
    live = presets
    window = QMainWindow()
    qtbot.addWidget(window)
    box = QWidget(window)
    row = QHBoxLayout(box)
    watchlist = TopOfBookPanel(live.context, box)
    ladder = DepthPanel(live.context, box)
    ticket = OrderTicketPanel(live.context, live.desks.orders, box)
    for panel in (watchlist, ladder, ticket):
        row.addWidget(panel)
    window.setCentralWidget(box)
    window.resize(1500, 500)
    window.show()
    window.activateWindow()
    qtbot.waitExposed(window)
    ready(qtbot, live)
    return Desk(window, watchlist, ladder, ticket, live)


def main_window(qtbot: QtBot, live: Live) -> tuple[MainWindow, OrderTicketPanel, DepthPanel]:
    """The real main window with the ticket and the ladder docked (their Trade menu)."""
    specs = [
        PanelSpec(
            "orderTicket",
            "Order ticket",
            Area.RightDockWidgetArea,
            lambda context: OrderTicketPanel(context, live.desks.orders),
            menu="Trade",
        ),
        PanelSpec("depth", "Depth", Area.LeftDockWidgetArea, DepthPanel),
    ]
    main = MainWindow(live.context, specs, "test")
    qtbot.addWidget(main)
    main.show()
    main.activateWindow()
    ready(qtbot, live)
    ticket = main.docks["orderTicket"].widget()
    ladder = main.docks["depth"].widget()
    assert isinstance(ticket, OrderTicketPanel) and isinstance(ladder, DepthPanel)
    qtbot.waitUntil(lambda: ticket.pair_box.currentText() == "BTC/USD")
    wait_for_bids(qtbot, ladder)
    return main, ticket, ladder


def wait_for_bids(qtbot: QtBot, ladder: DepthPanel, more_than: int = 0) -> None:
    """Until the ladder shows BTC/USD with more than ``more_than`` bids (clicks need levels)."""
    qtbot.waitUntil(lambda: ladder.model.pair == "BTC/USD" and ladder.model.bid_count > more_than)


def best_bid_row(ladder: DepthPanel) -> int:
    """The ladder row showing the best bid (its held price rows may have some inside the
    spread between the best ask's row and it)."""
    row = ladder.model.best_bid_row
    assert row is not None
    return row


def requests(live: Live) -> list[TradeRequest]:
    seen: list[TradeRequest] = []
    live.context.trade.requested.connect(seen.append)
    return seen


def click(view: QWidget, index: QModelIndex, *, double: bool = False) -> None:
    """A real click (or double-click) at the centre of the cell, on the view's viewport."""
    assert hasattr(view, "visualRect") and hasattr(view, "viewport")
    centre: QPoint = view.visualRect(index).center()
    viewport = view.viewport()
    QTest.mouseClick(viewport, Qt.MouseButton.LeftButton, pos=centre)
    if double:
        QTest.mouseDClick(viewport, Qt.MouseButton.LeftButton, pos=centre)
        # QTest leaves the button down after a double-click; later moves would be drags.
        QTest.mouseRelease(viewport, Qt.MouseButton.LeftButton, pos=centre)
        assert QApplication.mouseButtons() == Qt.MouseButton.NoButton


def watch_cell(panel: TopOfBookPanel, pair: str, key: str) -> QModelIndex:
    row = panel.model.row_of(pair)
    assert row is not None
    return panel.model.index(row, panel.model.column(key))


def assert_prefilled(ticket: OrderTicketPanel, pair: str, side: str, price: Decimal) -> None:
    assert ticket.pair_box.currentText() == pair
    assert str(ticket.side) == side
    assert ticket.type_box.currentData() == "limit"
    assert Decimal(ticket.limit_edit.text()) == price
    assert ticket.limit_edit.text() == format(price, "f")  # the book's Decimal, as it is


def server_orders(qtbot: QtBot, live: Live) -> list[Order]:
    return run(qtbot, live.session.client.orders())


def test_watchlist_bid_click_prefills_a_sell_at_that_bid_and_ask_click_a_buy(
    qtbot: QtBot, desk: Desk
) -> None:
    live = desk.live
    watchlist = desk.watchlist
    ticket = desk.ticket
    qtbot.waitUntil(
        lambda: watchlist.model.record(watchlist.model.row_of("BTC/USD") or 0).bid is not None
    )
    seen = requests(live)
    held: list[Decimal | None] = []  # the watchlist's bid at the moment the click arrived
    live.context.trade.requested.connect(
        lambda _: held.append(watchlist.model.record(watchlist.model.row_of("BTC/USD") or 0).bid)
    )
    click(watchlist.table, watch_cell(watchlist, "ETH/USD", "pair"))  # a pair cell: no trade
    assert seen == []
    click(watchlist.table, watch_cell(watchlist, "BTC/USD", "bid"))
    assert len(seen) == 1 and seen[0].side == "sell" and not seen[0].send
    assert seen[0].price == held[0]
    assert_prefilled(ticket, "BTC/USD", "sell", seen[0].price)
    assert ticket.size_edit.text() == "0.01"  # the default size of BTC, the asset sold
    assert live.bridge.selected_pair == "BTC/USD"  # the clicked row is the traded pair

    # The trader picks a size (a preset button), then clicks prices: the size is kept.
    QTest.mouseClick(ticket.preset_buttons[1], Qt.MouseButton.LeftButton)
    assert ticket.size_edit.text() == "0.1"
    click(watchlist.table, watch_cell(watchlist, "BTC/USD", "bid"))
    assert len(seen) == 2 and ticket.size_edit.text() == "0.1"
    assert_prefilled(ticket, "BTC/USD", "sell", seen[1].price)

    click(watchlist.table, watch_cell(watchlist, "BTC/USD", "ask"))
    assert len(seen) == 3 and seen[2].side == "buy"
    assert_prefilled(ticket, "BTC/USD", "buy", seen[2].price)
    assert ticket.size_edit.text() == "100"  # a buy spends USD: USD's default size
    assert ticket.size_unit.text() == "USD to spend"


def test_ladder_click_prefills_a_sell_at_a_bid_level_and_a_buy_at_an_ask_level(
    qtbot: QtBot, desk: Desk
) -> None:
    ladder = desk.ladder
    ticket = desk.ticket
    wait_for_bids(qtbot, ladder, more_than=2)
    model = ladder.model
    level = best_bid_row(ladder) + 1  # the second bid
    price = model.row(level).price
    click(ladder.view, model.index(level, model.column("size")))
    assert_prefilled(ticket, "BTC/USD", "sell", price)
    level = (model.best_ask_row or 0) - 1  # the second ask
    price = model.row(level).price
    click(ladder.view, model.index(level, model.column("price")))
    assert_prefilled(ticket, "BTC/USD", "buy", price)


def test_double_click_sends_exactly_one_order_through_the_confirmation(
    qtbot: QtBot, desk: Desk
) -> None:
    live = desk.live
    ladder = desk.ladder
    ticket = desk.ticket
    wait_for_bids(qtbot, ladder)
    before = server_orders(qtbot, live)
    model = ladder.model
    best_bid = best_bid_row(ladder)
    price = model.row(best_bid).price
    click(ladder.view, model.index(best_bid, model.column("price")), double=True)
    qtbot.waitUntil(lambda: ticket.confirmation.isVisible())
    assert "Sell 0.01 BTC" in ticket.confirmation.text()
    assert server_orders(qtbot, live) == before  # nothing leaves before the trader confirms
    QTest.keyClick(ticket.confirmation, Qt.Key.Key_Return)  # Send is the default button
    qtbot.waitUntil(
        lambda: ticket.outcome_label.text().startswith(("Sold", "Resting")), timeout=10_000
    )
    after = server_orders(qtbot, live)
    new = [order for order in after if order not in before]
    assert len(after) == len(before) + 1 and len(new) == 1
    order = new[0]
    assert (order.source, order.destination) == ("BTC", "USD")
    assert order.size.value == Decimal("0.01")
    # A double-click trades now: the old rule sent the clicked level as a limit, which rested
    # when the book moved away; now it is the bid less the slippage collar (10 bps), on the
    # pair's tick, and it ends within seconds (fills now or expires).
    assert order.limit is not None
    assert abs(order.limit.value - price * Decimal("0.999")) < price * Decimal("0.003")
    assert order.end_at is not None and order.submitted_at is not None
    assert order.end_at - order.submitted_at <= timedelta(seconds=11)


def test_double_click_on_a_watchlist_ask_cancelled_sends_nothing(qtbot: QtBot, desk: Desk) -> None:
    live = desk.live
    watchlist = desk.watchlist
    ticket = desk.ticket
    qtbot.waitUntil(
        lambda: watchlist.model.record(watchlist.model.row_of("BTC/USD") or 0).ask is not None
    )
    before = server_orders(qtbot, live)
    click(watchlist.table, watch_cell(watchlist, "BTC/USD", "ask"), double=True)
    qtbot.waitUntil(lambda: ticket.confirmation.isVisible())
    assert "Buy BTC for 100 USD" in ticket.confirmation.text()
    QTest.keyClick(ticket.confirmation, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: ticket.outcome_label.text() == "Not sent.")
    assert server_orders(qtbot, live) == before


def test_hit_bid_and_lift_offer_keys_send_the_default_size_after_confirmation(
    qtbot: QtBot, presets: Live
) -> None:
    live = presets
    main, ticket, ladder = main_window(qtbot, live)
    keys = dict(main.shortcut_list())
    assert keys["Ctrl+Shift+S"] == "Trade > Hit bid"
    assert keys["Ctrl+Shift+B"] == "Trade > Lift offer"
    ladder.view.setFocus()
    qtbot.waitUntil(main.isActiveWindow)
    before = server_orders(qtbot, live)
    dock = main.docks["orderTicket"]
    dock.hide()  # the keys work with the ticket closed, and bring it back

    ctrl_shift = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    QTest.keyClick(ladder.view, Qt.Key.Key_S, ctrl_shift)  # hit the bid
    qtbot.waitUntil(lambda: ticket.confirmation.isVisible())
    assert "Sell 0.01 BTC" in ticket.confirmation.text()
    assert dock.isVisible()
    QTest.keyClick(ticket.confirmation, Qt.Key.Key_Return)
    qtbot.waitUntil(
        lambda: ticket.outcome_label.text().startswith(("Sold", "Resting")), timeout=10_000
    )

    QTest.keyClick(ladder.view, Qt.Key.Key_B, ctrl_shift)  # lift the offer
    qtbot.waitUntil(lambda: ticket.confirmation.isVisible())
    assert "Buy BTC for 100 USD" in ticket.confirmation.text()
    QTest.keyClick(ticket.confirmation, Qt.Key.Key_Return)
    qtbot.waitUntil(
        lambda: ticket.outcome_label.text().startswith(("Bought", "Resting")), timeout=10_000
    )

    new = [order for order in server_orders(qtbot, live) if order not in before]
    assert sorted((o.source, o.size.value) for o in new) == [
        ("BTC", Decimal("0.01")),
        ("USD", Decimal("100")),
    ]

    # Without a default size for the asset sold: prefilled, nothing sent, the amount asked for.
    ticket.apply_preferences(Preferences(size_presets="BTC: 0.01"))
    QTest.keyClick(ladder.view, Qt.Key.Key_B, ctrl_shift)
    assert not ticket.confirmation.isVisible()
    assert ticket.size_edit.text() == "" and str(ticket.side) == "buy"
    assert ticket.outcome_label.text().startswith("No default size for USD")
    assert len(server_orders(qtbot, live)) == len(before) + 2


def test_size_presets_from_settings_are_quick_buttons_and_the_default_size(
    qtbot: QtBot, presets: Live
) -> None:
    live = presets
    main, ticket, ladder = main_window(qtbot, live)
    assert [b.text() for b in ticket.preset_buttons] == ["100", "1,000"]  # a buy spends USD

    main.open_settings()
    dialog = main.settings_dialog
    field = dialog.size_presets
    assert field.text() == PRESETS
    field.clear()
    QTest.keyClicks(field, "BTC: 0.5 0.05; USD: 0")
    apply = dialog.buttons.button(QDialogButtonBox.StandardButton.Apply)
    QTest.mouseClick(apply, Qt.MouseButton.LeftButton)
    assert "greater than zero" in dialog.error.text()  # refused, with its reason
    field.clear()
    QTest.keyClicks(field, "BTC: 0.5 0.05; USD: 2,500 250")
    QTest.mouseClick(apply, Qt.MouseButton.LeftButton)
    assert dialog.error.text() == ""
    assert Preferences.load(live.context.settings).presets()["USD"] == (Decimal(2500), Decimal(250))
    assert [b.text() for b in ticket.preset_buttons] == ["2,500", "250"]
    QTest.mouseClick(ticket.preset_buttons[1], Qt.MouseButton.LeftButton)
    assert ticket.size_edit.text() == "250"

    model = ladder.model
    click(ladder.view, model.index(best_bid_row(ladder), 0))  # a bid: sell BTC, BTC's default
    assert ticket.size_edit.text() == "0.5"
    assert [b.text() for b in ticket.preset_buttons] == ["0.5", "0.05"]
    dialog.reject()


def test_size_presets_are_read_as_traders_write_them() -> None:
    assert parse_size_presets("btc: 0.01/0.1/1;\nUSD: 1,000 10,000") == {
        "BTC": (Decimal("0.01"), Decimal("0.1"), Decimal(1)),
        "USD": (Decimal(1000), Decimal(10000)),
    }
    assert parse_size_presets("  ") == {}
    for bad, reason in (
        ("BTC 0.1", "a colon"),
        ("BTC:", "no amounts"),
        ("BTC: -1", "greater than zero"),
        ("BTC: 1e", "not a number"),
    ):
        with pytest.raises(ValueError, match=reason):
            parse_size_presets(bad)
    assert Preferences(size_presets="BTC: x").presets() == {}  # unreadable: no presets
