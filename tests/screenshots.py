"""The README's panel screenshots, made by the app's own panels against a fresh sandbox.

``QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.screenshots resources/screenshots
[--only trading|positions|alerts]`` writes (dark theme):

- trading: ticket-buy.png, ticket-sell.png, ticket-resting.png, ticket-fill.png (the ticket at
  a dock's usual width) and orders.png;
- positions: positions.png, the positions dock at the compact layout's width after a few buys
  and sells spread over half a minute, with a chart panel running beside it (hidden) so the P&L
  chart has stored mids to value the portfolio with;
- alerts: alerts.png, the alerts dock with an alert that fired, one armed and one that fires
  every time.

Not a test: it asserts only that each state it photographs was reached, and waits on those
states, never on the clock alone.
"""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QEvent, QSettings
from PySide6.QtWidgets import QLabel, QWidget

from app.api import ClientSettings, ServiceClient
from app.domain.alerts import Condition, PriceAlert, PriceSource, Repeat, new_alert_id
from app.domain.display import Precision
from app.services.desks import TradingDesks
from app.services.session import FeedIntervals, TerminalSession
from app.services.terminal import Terminal
from app.ui.bridge import SessionBridge
from app.ui.panels.alerts import AlertsPanel
from app.ui.panels.base import PanelContext
from app.ui.panels.chart import ChartPanel
from app.ui.panels.order_ticket import OrderTicketPanel
from app.ui.panels.orders import OrdersPanel
from app.ui.panels.positions import PositionsPanel
from app.ui.settings import open_settings
from app.ui.theme import apply_theme
from tests.harness import SandboxProcess, Session, new_client, terminal_session, until
from tests.perf.qt_runner import qt_app, run_qt

TICKET_SIZE = (420, 560)
ORDERS_SIZE = (1100, 320)
POSITIONS_SIZE = (1366, 250)
ALERTS_SIZE = (1100, 190)
#: (source, destination, size): the positions shot's trades, a few seconds apart.
TRADES = [
    ("USD", "BTC", "30000"),
    ("USD", "ETH", "8000"),
    ("BTC", "USD", "0.1"),
    ("USD", "BTC", "10000"),
    ("ETH", "USD", "1"),
    ("BTC", "USD", "0.15"),
]


@dataclass
class Shot:
    """A started session of a fresh client, and the panel context on it."""

    account: Session
    client: ServiceClient
    session: TerminalSession
    bridge: SessionBridge
    context: PanelContext

    async def close(self) -> None:
        await self.session.stop()
        await self.client.aclose()
        self.account.close()


async def start(
    sandbox: SandboxProcess,
    folder: Path,
    balances: dict[str, str],
    credit: dict[str, str],
    settings: QSettings | None = None,
) -> Shot:
    account = new_client(sandbox, balances=balances, credit=credit)
    client = ServiceClient(ClientSettings(sandbox.url))
    intervals = FeedIntervals(top_of_book=0.5, balances=1.0, order_book=5.0)
    session = await terminal_session(sandbox, account, client, intervals)
    bridge = SessionBridge(Terminal(session))
    precision = Precision()
    context = PanelContext(bridge, precision, settings or open_settings(folder), lambda *_: None)
    await session.start()
    precision.learn(session.pair_info)
    return Shot(account, client, session, bridge, context)


def _save(widget: QWidget, path: Path) -> None:
    # Pending relayouts first (a label's new text re-flows on the next LayoutRequest).
    QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
    widget.repaint()
    if not widget.grab().save(str(path), "PNG"):
        raise SystemExit(f"cannot write {path}")
    print(f"wrote {path}", flush=True)


async def _trading(sandbox: SandboxProcess, folder: Path, out: Path) -> None:
    settings = open_settings(folder)
    settings.setValue("orders/confirm", False)
    shot = await start(sandbox, folder, {"USD": "100000", "BTC": "2"}, {"USD": "-50000"}, settings)
    bridge, context = shot.bridge, shot.context
    desks = TradingDesks.open(shot.session, folder / "journal.db")
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
    await desks.close()
    await shot.close()


async def _positions(sandbox: SandboxProcess, folder: Path, out: Path) -> None:
    shot = await start(sandbox, folder, {"USD": "100000", "BTC": "1", "ETH": "5"}, {})
    shot.bridge.select_pair("BTC/USD")
    chart = ChartPanel(shot.context)  # records the mids the P&L chart values BTC with
    positions = PositionsPanel(shot.context)
    positions.resize(*POSITIONS_SIZE)
    positions.show()
    await until(lambda: positions.refreshes >= 1)
    for source, destination, size in TRADES:
        await shot.client.market_order(source, destination, Decimal(size))
        await asyncio.sleep(4)  # spread over time: the P&L chart has a course to show
    chart.history.flush(everything=True)
    done = positions.refreshes
    positions.refresh()
    await until(lambda: positions.refreshes > done and positions.revaluations > 0, timeout=30)
    _save(positions, out / "positions.png")
    await positions.stop_feed()
    positions.deleteLater()
    chart.deleteLater()
    await shot.close()


async def _alerts(sandbox: SandboxProcess, folder: Path, out: Path) -> None:
    shot = await start(sandbox, folder, {"USD": "100000"}, {})
    bridge = shot.bridge
    await until(lambda: "BTC/USD" in (bridge.topOfBook.latest or {}))
    book = (bridge.topOfBook.latest or {})["BTC/USD"]
    alerts = bridge.price_alerts
    panel = AlertsPanel(shot.context)
    panel.resize(*ALERTS_SIZE)
    panel.show()
    fired = PriceAlert(
        new_alert_id(),
        "BTC/USD",
        PriceSource.BID,
        Condition.ABOVE,
        (book.bid * Decimal("0.995")).quantize(Decimal(1)),
        Repeat.ONCE,
    )
    alerts.put(fired)
    alerts.put(
        PriceAlert(
            new_alert_id(),
            "ETH/USD",
            PriceSource.MID,
            Condition.CROSSING,
            Decimal("2500.00"),
            Repeat.ONCE,
        )
    )
    alerts.put(
        PriceAlert(
            new_alert_id(),
            "SOL/USD",
            PriceSource.ASK,
            Condition.BELOW,
            Decimal("100.000"),
            Repeat.EVERY_TIME,
        )
    )
    await until(lambda: (found := alerts.get(fired.id)) is not None and found.fired > 0)
    await until(lambda: panel.model.rowCount() == 3)
    _save(panel, out / "alerts.png")
    panel.deleteLater()
    await shot.close()


SHOTS = {"trading": _trading, "positions": _positions, "alerts": _alerts}


async def _shoot(sandbox: SandboxProcess, folder: Path, out: Path, only: list[str]) -> None:
    for name in only:
        await SHOTS[name](sandbox, folder / name, out)


def _texts(widget: QWidget) -> str:
    return " ".join(label.text() for label in widget.findChildren(QLabel))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="where the PNGs go")
    parser.add_argument("--theme", default="dark", choices=("dark", "light"))
    parser.add_argument("--only", action="append", choices=sorted(SHOTS), help="(repeatable)")
    args = parser.parse_args(argv)
    args.folder.mkdir(parents=True, exist_ok=True)
    apply_theme(qt_app(), args.theme)
    sandbox = SandboxProcess().start()
    try:
        run_qt(lambda _, scratch: _shoot(sandbox, scratch, args.folder, args.only or list(SHOTS)))
    finally:
        sandbox.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
