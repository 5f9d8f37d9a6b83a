"""The README's trading screenshots, made by the app's own panels against a fresh sandbox.

``QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.screenshots resources/screenshots``
writes ticket-buy.png, ticket-sell.png, ticket-resting.png, ticket-fill.png and orders.png
(dark theme, the ticket at a dock's usual width). Not a test: it asserts only that each state
it photographs was reached, and waits on those states, never on the clock alone.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from decimal import Decimal
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from app.api import ClientSettings, ServiceClient
from app.domain.display import Precision
from app.services.desks import TradingDesks
from app.services.session import Environment, FeedIntervals, TerminalSession
from app.ui.bridge import SessionBridge
from app.ui.panels.base import PanelContext
from app.ui.panels.order_ticket import OrderTicketPanel
from app.ui.panels.orders import OrdersPanel
from app.ui.qt import QEventLoop
from app.ui.settings import open_settings
from app.ui.theme import apply_theme
from tests.harness import SandboxProcess, new_client, until

TICKET_SIZE = (420, 560)
ORDERS_SIZE = (1100, 320)


def _save(widget: QWidget, path: Path) -> None:
    # Pending relayouts first (a label's new text re-flows on the next LayoutRequest).
    QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
    widget.repaint()
    if not widget.grab().save(str(path), "PNG"):
        raise SystemExit(f"cannot write {path}")
    print(f"wrote {path}", flush=True)


async def _shoot(sandbox: SandboxProcess, folder: Path, out: Path) -> None:
    account = new_client(sandbox, balances={"USD": "100000", "BTC": "2"}, credit={"USD": "-50000"})
    client = ServiceClient(ClientSettings(sandbox.url))
    await client.login(account.user, account.password, account.account)
    session = TerminalSession(
        client,
        Environment(sandbox.url, account.user, account.account, sandbox=True),
        FeedIntervals(top_of_book=0.5, balances=1.0, order_book=5.0),
    )
    desks = TradingDesks.open(session, folder / "journal.db")
    settings = open_settings(folder)
    settings.setValue("orders/confirm", False)
    bridge = SessionBridge(session)
    precision = Precision()
    context = PanelContext(bridge, precision, settings, lambda *_: None)
    await session.start()
    precision.learn(session.pair_info)
    ticket = OrderTicketPanel(context, desks.orders)
    ticket.resize(*TICKET_SIZE)
    ticket.show()
    bridge.select_pair("BTC/USD")
    await until(lambda: bridge.balances.latest and "BTC/USD" in (bridge.topOfBook.latest or {}))

    async def estimated() -> None:
        await until(lambda: "just now" in ticket.estimate_label.text())

    ticket.set_side("buy")
    ticket.size_edit.setText("10000")
    await estimated()
    _save(ticket, out / "ticket-buy.png")

    ticket.set_side("sell")
    ticket.size_edit.setText("0.25")
    await estimated()
    _save(ticket, out / "ticket-sell.png")

    ticket.set_side("buy")
    ticket.size_edit.setText("10000")
    ticket.type_box.setCurrentIndex(ticket.type_box.findData("limit"))
    books = bridge.topOfBook.latest or {}
    below = (books["BTC/USD"].ask * Decimal("0.98")).quantize(Decimal(1))
    ticket.limit_edit.setText(str(below))
    await until(lambda: "Rests" in _texts(ticket))
    _save(ticket, out / "ticket-resting.png")
    ticket.submit()
    await until(lambda: ticket.outcome_label.text().startswith("Resting"))

    ticket.type_box.setCurrentIndex(ticket.type_box.findData("market"))
    ticket.set_side("sell")
    ticket.size_edit.setText("0.25")
    await estimated()
    ticket.submit()
    await until(lambda: ticket.outcome_label.text().startswith("Sold"))
    _save(ticket, out / "ticket-fill.png")

    orders = OrdersPanel(context, desks.journal, interval=0.5)
    orders.resize(*ORDERS_SIZE)
    orders.show()
    await until(lambda: orders.model.rowCount() >= 2)
    _save(orders, out / "orders.png")

    await orders.stop_feed()
    await ticket.stop_feed()
    ticket.deleteLater()
    orders.deleteLater()
    await session.stop()
    await desks.close()
    await client.aclose()
    account.close()


def _texts(widget: QWidget) -> str:
    return " ".join(label.text() for label in widget.findChildren(QLabel))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="where the PNGs go")
    parser.add_argument("--theme", default="dark", choices=("dark", "light"))
    args = parser.parse_args(argv)
    args.folder.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication([sys.argv[0]])
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)
    apply_theme(app, args.theme)
    sandbox = SandboxProcess().start()
    try:
        with (
            tempfile.TemporaryDirectory() as scratch,
            asyncio.Runner(loop_factory=lambda: QEventLoop(app)) as runner,
        ):
            runner.run(_shoot(sandbox, Path(scratch), args.folder))
    finally:
        sandbox.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
