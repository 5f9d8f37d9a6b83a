"""Steps on the order ticket panel of a live session: open it, wait for it to be ready, read the
side and the orders the sandbox holds."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from app.domain.records import Order
from app.ui.order_confirm import SETTINGS_KEY as CONFIRM_KEY
from app.ui.panels.order_ticket import OrderTicketPanel
from tests.helpers.live import Live
from tests.helpers.qt import run


def ready(qtbot: QtBot, live: Live) -> None:
    """BTC/USD selected, and balances and its prices handed out by the bridge."""
    live.bridge.select_pair("BTC/USD")
    qtbot.waitUntil(
        lambda: (
            live.bridge.balances.latest is not None
            and "BTC/USD" in (live.bridge.topOfBook.latest or {})
        ),
        timeout=10_000,
    )


def open_ticket(qtbot: QtBot, live: Live, *, confirm: bool = False) -> OrderTicketPanel:
    live.context.settings.setValue(CONFIRM_KEY, confirm)
    panel = OrderTicketPanel(live.context, live.desks.orders)
    qtbot.addWidget(panel)
    panel.show()
    ready(qtbot, live)  # the panel has been handed balances and prices: checks can work
    qtbot.waitUntil(lambda: panel.pair_box.currentText() == "BTC/USD", timeout=5_000)
    return panel


def server_orders(qtbot: QtBot, live: Live) -> list[Order]:
    return run(qtbot, live.session.client.orders())


def side(panel: OrderTicketPanel) -> str:
    """The side on screen (a plain str: mypy would narrow the property between clicks)."""
    return str(panel.side)
