"""From Enter in the order ticket to the order request leaving the app.

Run: ``.venv/bin/python -m tests.perf.bench_order_ticket [--orders 50]``.
A real sandbox child, a real ``OrderTicketPanel`` (confirmation off) on the app's qasync loop,
offscreen. The client's httpx transport is wrapped so the moment the POST is handed to the
connection (``handle_async_request``) is stamped; the clock starts just before the Return key
event is posted to the size field. Between the two: the key event, the ticket's current
preview (its checks ran when the market or the input last changed), the desk's validation, the
journal write (SQLite commit) and the client's request building. Prints figures and ends with
one JSON line; asserts nothing; not collected by pytest.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import argparse
import asyncio
import json
import statistics
import time
from pathlib import Path

import httpx
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from app.api import ClientSettings, ServiceClient
from app.domain.display import Precision
from app.services.desks import TradingDesks
from app.services.order_intent import TicketState
from app.services.session import FeedIntervals
from app.services.terminal import Terminal
from app.ui.bridge import SessionBridge
from app.ui.order_confirm import SETTINGS_KEY as CONFIRM_KEY
from app.ui.panels.base import PanelContext
from app.ui.panels.order_ticket import OrderTicketPanel
from app.ui.settings import open_settings
from tests.harness import SandboxProcess, new_client, terminal_session
from tests.perf.qt_runner import run_qt


class StampingTransport(httpx.AsyncBaseTransport):
    """The real transport, noting when each order POST is handed to the connection."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.order_posts: list[float] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and request.url.path.endswith("/order"):
            self.order_posts.append(time.perf_counter())
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def measure(sandbox: SandboxProcess, orders: int, folder: Path) -> list[float]:
    account = new_client(sandbox, balances={"USD": "10000000", "BTC": "100"})
    transport = StampingTransport()
    client = ServiceClient(ClientSettings(sandbox.url), transport=transport)
    intervals = FeedIntervals(top_of_book=0.5, balances=2.0, order_book=5.0)
    session = await terminal_session(sandbox, account, client, intervals)
    settings = open_settings(folder)
    settings.setValue(CONFIRM_KEY, False)
    desks = TradingDesks.open(session, folder / "journal.db")
    bridge = SessionBridge(Terminal(session))
    context = PanelContext(bridge, Precision(), settings, lambda *_: None)
    await session.start()
    panel = OrderTicketPanel(context, desks.orders)
    panel.show()
    bridge.select_pair("BTC/USD")
    while desks.orders.balances is None or "BTC/USD" not in desks.orders.top_of_book:
        await asyncio.sleep(0.05)
    panel.size_edit.setText("10")
    delays: list[float] = []
    for _ in range(orders):
        before = len(transport.order_posts)
        while panel.ticket.state is TicketState.SENDING or desks.orders.sending:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)  # let the previous answer's repaint settle
        started = time.perf_counter()
        QTest.keyClick(panel.size_edit, Qt.Key.Key_Return)
        while len(transport.order_posts) == before:
            await asyncio.sleep(0)
        delays.append(transport.order_posts[before] - started)
    while panel.ticket.state is TicketState.SENDING:
        await asyncio.sleep(0.01)
    panel.deleteLater()
    await session.stop()
    await desks.close()
    await client.aclose()
    account.close()
    return delays


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, default=50)
    args = parser.parse_args()
    sandbox = SandboxProcess().start()
    try:
        delays = run_qt(lambda _, folder: measure(sandbox, args.orders, folder))
    finally:
        sandbox.close()
    ms = sorted(d * 1000 for d in delays)
    p99 = ms[min(len(ms) - 1, round(0.99 * (len(ms) - 1)))]
    print(f"Enter -> order request handed to the connection, {len(ms)} market orders:")
    median = statistics.median(ms)
    print(f"  median {median:.2f} ms, p99 {p99:.2f} ms, max {ms[-1]:.2f} ms")
    figures = {"orders": len(ms), "median_ms": median, "p99_ms": p99, "max_ms": ms[-1]}
    print(json.dumps({name: round(value, 2) for name, value in figures.items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
